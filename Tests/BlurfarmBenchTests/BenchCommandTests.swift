import BlurfarmBench
import BlurfarmTestSupport
import Foundation
import Testing

/// `blurfarm bench` as a user runs it: the subcommand's `--json` is the module's typed report,
/// and a missing venv is one error line and exit status 1.
@Suite(.tags(.process), .blocking) struct BenchCommandTests {
    /// Runs the built `blurfarm` with `arguments`: its exit status, standard output and error.
    func blurfarm(_ arguments: [String]) throws -> (status: Int32, stdout: Data, stderr: String) {
        let process = Process()
        process.executableURL = BuiltExecutable.url
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, stdout, String(decoding: stderr, as: UTF8.self))
    }

    @Test(.enabled(if: BenchFixture.hasVenv, "no .venv-bench with libvips 8.18: run scripts/setup.sh"))
    func theKernelsCommandPrintsTheTypedReportAsJSON() throws {
        let result = try blurfarm([
            "bench", "kernels", "--runs", "1", "--kernel-sigma", "2", "--image", "photos/mate-GreenMeadow.jpg", "--skip-opencv",
            "--corpus", Corpus.root, "--json",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let report = try JSONDecoder().decode(ComparisonReport.self, from: result.stdout)
        #expect(report.libvipsVersion.hasPrefix("8.18."), "\(report.libvipsVersion)")
        #expect(report.runs == 1)
        #expect(report.rows.map(\.figure) == [.kernel, .kernel])
        #expect(report.rows.allSatisfy { $0.blurfarmSeconds > 0 && $0.baselineSeconds > 0 })
    }

    @Test func aMissingVenvIsOneErrorLineAndStatus1() throws {
        let result = try blurfarm(["bench", "batch", "--python", "/nonexistent/bin/python", "--corpus", Corpus.root])
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("blurfarm: error: bench: no Python with libvips 8.18 at /nonexistent/bin/python"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }
}
