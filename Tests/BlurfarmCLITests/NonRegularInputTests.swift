import BlurfarmTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Inputs that are not regular files (docs/security.md): a FIFO, a socket or a link to a
/// device that a glob matches, or that the manifest names, is an error naming it and what it
/// is; the other inputs are rendered, the run exits with status 1, and nothing is ever opened
/// in a way that blocks.
@Suite(.tags(.process), .blocking) struct NonRegularInputTests {
    /// `photos/` with `kite.jpg` (a real image), `pipe.jpg` (a FIFO), `socket.jpg` (a bound
    /// Unix socket), `zero.jpg` (a link to /dev/zero), `gone.jpg` (a link to a file that is
    /// not there) and `loop-a.jpg` and `loop-b.jpg` (links to each other), and a job over `inputs`.
    static func makeJob(inputs: String) throws -> (folder: URL, manifest: String) {
        let folder = try Fixtures.temporaryFolder()
        let photos = folder.appendingPathComponent("photos").path
        try FileManager.default.createDirectory(atPath: photos, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Fixtures.corpus("special/grayscale.jpg"), toPath: photos + "/kite.jpg")
        try #require(mkfifo(photos + "/pipe.jpg", 0o644) == 0)
        try FileManager.default.createSymbolicLink(atPath: photos + "/zero.jpg", withDestinationPath: "/dev/zero")
        try FileManager.default.createSymbolicLink(atPath: photos + "/gone.jpg", withDestinationPath: "moved-away.jpg")
        try FileManager.default.createSymbolicLink(atPath: photos + "/loop-a.jpg", withDestinationPath: "loop-b.jpg")
        try FileManager.default.createSymbolicLink(atPath: photos + "/loop-b.jpg", withDestinationPath: "loop-a.jpg")
        let bind = Process()
        bind.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        bind.arguments = ["python3", "-c", "import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])", photos + "/socket.jpg"]
        try bind.run()
        bind.waitUntilExit()
        try #require(bind.terminationStatus == 0)
        let manifest = folder.appendingPathComponent("job.job").path
        try """
            job: odd
            inputs: \(inputs)
            outputs:
              - name: small
                path: out/{stem}.png
                resize:
                  width: 16

            """.write(toFile: manifest, atomically: true, encoding: .utf8)
        return (folder, manifest)
    }

    @Test func eachNonRegularInputAGlobMatchesIsNamedAndTheOthersAreRendered() throws {
        let job = try Self.makeJob(inputs: "[photos/*.jpg]")
        defer { try? FileManager.default.removeItem(at: job.folder) }
        for command in ["check", "run"] {
            let result = try Blurfarm.run([command, job.manifest])
            #expect(result.status == 1, "\(command): \(result.stderr)")
            for line in [
                "'photos/pipe.jpg': is a FIFO, not a regular file", "'photos/socket.jpg': is a socket, not a regular file",
                "'photos/zero.jpg': is a link to a character device, not a regular file",
                "'photos/gone.jpg': is a link to nothing (its target 'moved-away.jpg' does not exist), not a regular file",
                "'photos/loop-a.jpg': is a loop of symbolic links (through 'loop-b.jpg'), not a regular file",
            ] {
                #expect(result.stderr.contains("\(job.manifest): \(line)"), "\(command): \(result.stderr)")
            }
            #expect(!result.stderr.contains("kite.jpg"), "\(command): \(result.stderr)")
        }
        let written = try FileManager.default.contentsOfDirectory(atPath: job.folder.appendingPathComponent("out").path)
        #expect(written == ["kite.png"])
    }

    @Test func aFIFONamedAsTheOnlyInputIsNamedAsAFIFO() throws {
        let job = try Self.makeJob(inputs: "[photos/pipe.jpg]")
        defer { try? FileManager.default.removeItem(at: job.folder) }
        let run = try Blurfarm.run(["run", job.manifest])
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr.contains("'photos/pipe.jpg': is a FIFO, not a regular file"), "\(run.stderr)")
        #expect(!run.stderr.contains("matches no file"), "\(run.stderr)")
    }

    /// `apply` given a FIFO refuses it at once instead of waiting for a writer.
    @Test func applyRefusesAFIFOWithoutOpeningIt() throws {
        let job = try Self.makeJob(inputs: "[photos/*.jpg]")
        defer { try? FileManager.default.removeItem(at: job.folder) }
        let pipe = job.folder.appendingPathComponent("photos/pipe.jpg").path
        let result = try Blurfarm.run(["apply", pipe, job.folder.appendingPathComponent("out.png").path])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("\(pipe): is a FIFO, not a regular file"), "\(result.stderr)")
    }
}
