import BlurfarmImageIO
import Foundation
import Testing

/// `blurfarm apply` end to end, through the built executable.
@Suite struct ApplyCommandTests {
    @Test func blursACorpusPhotoAndKeepsItsSize() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("out.png").path
        let result = try Blurfarm.run([
            "apply", Fixtures.corpus("special/kite.webp"), output, "--filter", "gaussian sigma=3",
            "--filter", "motion radius=6 angle=30", "--tile", "100", "--threads", "2",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let header = try ImageReader.header(ofFile: output)
        #expect(header.width == 1024 && header.height == 640)
        // Only the output in the folder: no temporary file left behind.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["out.png"])
    }

    /// The tile size and the engine (threads of this process, or one or two worker
    /// processes) do not change the bytes written.
    @Test func tileSizeAndWorkersDoNotChangeTheBytesWritten() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var files: [String: Data] = [:]
        for (tile, workers) in [("0", "0"), ("37", "0"), ("256", "0"), ("37", "1"), ("256", "2")] {
            let output = folder.appendingPathComponent("t\(tile)-w\(workers).png").path
            let result = try Blurfarm.run([
                "apply", Fixtures.corpus("special/alpha-garbage-under-transparent.png"), output,
                "--filter", "gaussian sigma=5", "--edge", "mirror", "--colour", "linear", "--tile", tile,
                "--workers", workers, "--verbose",
            ])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains(workers == "0" ? " thread" : "on \(workers) worker"), "\(result.stdout)")
            files[output] = try Data(contentsOf: URL(fileURLWithPath: output))
        }
        #expect(Set(files.values).count == 1, "\(files.mapValues(\.count))")
    }

    /// Plugin filters (the shipped configuration loads the example plugins from the build
    /// folder) run in the worker processes, the same bytes whatever the tiles; in process they
    /// are refused.
    @Test func aPluginFilterRunsInTheWorkersAndIsRefusedInProcess() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var files: [Data] = []
        for tile in ["0", "100"] {
            let output = folder.appendingPathComponent("v\(tile).png").path
            let result = try Blurfarm.run([
                "apply", Fixtures.corpus("special/kite.webp"), output, "--filter", "vignette strength=0.8",
                "--filter", "zoom amount=5", "--tile", tile, "--workers", "2",
            ])
            #expect(result.status == 0, "\(result.stderr)")
            files.append(try Data(contentsOf: URL(fileURLWithPath: output)))
        }
        #expect(files[0] == files[1])
        let refused = try Blurfarm.run([
            "apply", Fixtures.corpus("special/kite.webp"), folder.appendingPathComponent("no.png").path,
            "--filter", "vignette strength=0.8", "--threads", "2",
        ])
        #expect(refused.status == 2)
        #expect(refused.stderr == "blurfarm: error: plugin filters (vignette) run in worker processes only: drop --workers 0 and --threads\n")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("no.png").path))
    }

    @Test func growMakesTheOutputLargerByTheReach() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("grown.png").path
        let result = try Blurfarm.run([
            "apply", Fixtures.corpus("special/kite.webp"), output, "--filter", "gaussian sigma=2", "--edge", "grow",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let header = try ImageReader.header(ofFile: output)
        #expect(header.width == 1024 + 12 && header.height == 640 + 12 && header.hasAlpha)
    }

    @Test func versionAndHelpAnswer() throws {
        let version = try Blurfarm.run(["--version"])
        #expect(version.status == 0 && !version.stdout.isEmpty)
        let help = try Blurfarm.run(["apply", "--help"])
        #expect(help.status == 0 && help.stdout.contains("--filter") && help.stdout.contains("gaussian sigma="))
    }
}
