import BlurfarmImageIO
import BlurfarmTestSupport
import Foundation
import Testing

/// `blurfarm check` and `blurfarm run` end to end, through the built executable.
@Suite(.tags(.process), .blocking) struct JobCommandTests {
    /// A folder with `photos/` holding small copies of corpus photos and a manifest.
    static func makeJob(_ manifest: String, photos: [String]) throws -> URL {
        let folder = try Fixtures.temporaryFolder()
        let photosFolder = folder.appendingPathComponent("photos/nested")
        try FileManager.default.createDirectory(at: photosFolder, withIntermediateDirectories: true)
        for (i, photo) in photos.enumerated() {
            let name = (photo as NSString).lastPathComponent
            // Every other photo one folder down, to exercise ** and {relpath}.
            let target = (i % 2 == 0 ? folder.appendingPathComponent("photos") : photosFolder).appendingPathComponent(name)
            try FileManager.default.copyItem(atPath: Fixtures.corpus(photo), toPath: target.path)
        }
        try manifest.write(to: folder.appendingPathComponent("job.job"), atomically: true, encoding: .utf8)
        return folder
    }

    static let manifest = """
        job: test
        inputs: [photos/**/*.jpg, photos/**/*.webp]
        outputs:
          - name: thumb
            path: out/thumbs/{relpath}/{stem}.png
            resize:
              width: 64
          - name: blur
            path: out/blur/{stem}-{variant}.png
            filters:
              - gaussian:
                  sigma: 1.5
              - motion:
                  radius: 3
                  angle: 45
            edge: mirror

        """

    static let photos = ["special/kite.webp", "special/exif-orientation-6.jpg", "special/grayscale.jpg"]

    @Test func runWritesEveryPromisedOutput() throws {
        let folder = try Self.makeJob(Self.manifest, photos: Self.photos)
        defer { try? FileManager.default.removeItem(at: folder) }
        let job = folder.appendingPathComponent("job.job").path
        let result = try Blurfarm.run(["run", job])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("test: 6 written, 0 failed"), "\(result.stdout)")
        let expected: [(String, Int, Int)] = [
            ("out/thumbs/kite.png", 64, 40), ("out/thumbs/nested/exif-orientation-6.png", 64, 96),
            ("out/thumbs/grayscale.png", 64, 51), ("out/blur/kite-blur.png", 1024, 640),
            ("out/blur/exif-orientation-6-blur.png", 853, 1280), ("out/blur/grayscale-blur.png", 1024, 819),
        ]
        for (path, width, height) in expected {
            let header = try ImageReader.header(ofFile: folder.appendingPathComponent(path).path)
            #expect(header.width == width && header.height == height, "\(path): \(header.width)x\(header.height)")
        }
    }

    @Test func tileSizeAndThreadsDoNotChangeTheBytes() throws {
        let folder = try Self.makeJob(Self.manifest, photos: ["special/kite.webp"])
        defer { try? FileManager.default.removeItem(at: folder) }
        let job = folder.appendingPathComponent("job.job").path
        let output = folder.appendingPathComponent("out/blur/kite-blur.png")
        var files: [Data] = []
        for (tile, threads) in [("0", "1"), ("37", "2"), ("256", "2")] {
            let result = try Blurfarm.run(["run", job, "--tile", tile, "--threads", threads, "--quiet", "--force"])
            #expect(result.status == 0 && result.stdout.isEmpty, "\(result.stderr)")
            files.append(try Data(contentsOf: output))
        }
        #expect(files[0] == files[1] && files[1] == files[2])
    }

    @Test func aCorruptInputFailsAloneAndNamesTheFile() throws {
        let folder = try Self.makeJob(Self.manifest, photos: Self.photos + ["special/truncated.jpg"])
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try Blurfarm.run(["run", folder.appendingPathComponent("job.job").path])
        #expect(result.status == 1)
        #expect(result.stdout.contains("6 written, 2 failed"), "\(result.stdout)")
        // One line for the input, naming the variants it cost.
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines.allSatisfy { $0.contains("truncated.jpg") }, "\(result.stderr)")
        #expect(result.stderr.hasSuffix("(variants thumb, blur not written)\n"), "\(result.stderr)")
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("out/blur/kite-blur.png").path))
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("out/blur/truncated-blur.png").path))
    }

    @Test func anInvalidManifestRunsNothing() throws {
        let bad = Self.manifest.replacingOccurrences(of: "sigma: 1.5", with: "sigam: 1.5")
        let folder = try Self.makeJob(bad, photos: ["special/kite.webp"])
        defer { try? FileManager.default.removeItem(at: folder) }
        let job = folder.appendingPathComponent("job.job").path
        for command in ["check", "run"] {
            let result = try Blurfarm.run([command, job])
            #expect(result.status == 2)
            #expect(
                result.stderr == """
                    \(job):12:11: error: unknown key 'sigam' in 'gaussian'
                    \(job):12:11: note: did you mean 'sigma'?
                    \(job): 1 error

                    """, "\(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("out").path))
    }

    @Test func checkPrintsThePlanWithoutWriting() throws {
        let folder = try Self.makeJob(Self.manifest, photos: Self.photos)
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try Blurfarm.run(["check", folder.appendingPathComponent("job.job").path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("3 inputs, 6 outputs"), "\(result.stdout)")
        #expect(result.stdout.contains("photos/nested/exif-orientation-6.jpg  853x1280"), "\(result.stdout)")
        #expect(result.stdout.contains("gaussian sigma=1.5 | motion angle=45 radius=3 samples=3; reach 8 px"), "\(result.stdout)")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("out").path))
    }

    @Test func anInvalidConfigurationRunsNothing() throws {
        let folder = try Self.makeJob(Self.manifest, photos: ["special/kite.webp"])
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = folder.appendingPathComponent("farm.conf")
        try "tile: 128\nworkerz: 2\n".write(to: config, atomically: true, encoding: .utf8)
        let result = try Blurfarm.run(["run", folder.appendingPathComponent("job.job").path, "--config", config.path])
        #expect(result.status == 2)
        #expect(result.stderr.contains("\(config.path):2:1: error: unknown key 'workerz'"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("out").path))
    }

    @Test func everyShippedJobChecksClean() throws {
        let jobs = Fixtures.repository.appendingPathComponent("jobs")
        let names = try FileManager.default.contentsOfDirectory(atPath: jobs.path).filter { $0.hasSuffix(".job") }
        #expect(names.count >= 2)
        for name in names {
            let result = try Blurfarm.run(["check", jobs.appendingPathComponent(name).path])
            #expect(result.status == 0, "\(name): \(result.stderr)")
        }
    }

    /// A temporary folder with a copy of the shipped `jobs/<name>` and `samples` linked beside
    /// it, so that the job runs as shipped but its outputs land in the temporary folder.
    static func shippedJobCopy(_ name: String) throws -> URL {
        let folder = try Fixtures.temporaryFolder()
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("jobs"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: Fixtures.repository.appendingPathComponent("jobs/\(name)"), to: folder.appendingPathComponent("jobs/\(name)"))
        try FileManager.default.createSymbolicLink(
            at: folder.appendingPathComponent("samples"), withDestinationURL: Fixtures.repository.appendingPathComponent("samples"))
        return folder
    }

    /// The example job, run as README's first command runs it, but beside a copy of the
    /// manifest so that its outputs land in a temporary folder.
    @Test func theExampleJobWritesEveryOutputItPromises() throws {
        let folder = try Self.shippedJobCopy("example.job")
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try Blurfarm.run(["run", "jobs/example.job"], in: folder)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("example: 12 written, 0 failed, 4 inputs"), "\(result.stdout)")
        let stems = ["alpha-garbage-under-transparent", "mate-FreshFlower", "mate-GreenMeadow", "plasma-Kite"]
        for stem in stems {
            for output in ["thumbs/\(stem).webp", "backdrops/\(stem).jpg", "frosted/\(stem).png"] {
                let path = folder.appendingPathComponent("out/example/" + output).path
                let header = try ImageReader.header(ofFile: path)
                #expect(header.width > 0, "\(output)")
            }
        }
        // frosted uses edge: grow, frost extraLight (sigma 20): the output is larger by the reach (60 px) on every side.
        let grown = try ImageReader.header(ofFile: folder.appendingPathComponent("out/example/frosted/plasma-Kite.png").path)
        #expect(grown.width == 1024 + 120 && grown.height == 640 + 120 && grown.hasAlpha)
    }
}

extension JobCommandTests {
    @Test func verificationDecodesAgainAndRendersUntiled() throws {
        let manifest = Self.manifest + """
              - name: poor
                path: out/poor/{stem}.jpg
                quality: 1
                filters:
                  - gaussian:
                      sigma: 0.7

            """
        let folder = try Self.makeJob(manifest, photos: ["special/kite.webp"])
        defer { try? FileManager.default.removeItem(at: folder) }
        let job = folder.appendingPathComponent("job.job").path
        // untiled (and decode): every lossless output checks, and the JPEG at quality 1 too (an
        // honest encode at the quality asked: the floor follows the quality).
        let strict = try Blurfarm.run(["run", job, "--verify", "untiled", "--tile", "53"])
        #expect(strict.status == 0, "\(strict.stderr)")
        #expect(strict.stdout.contains("3 written, 0 failed"), "\(strict.stdout)")
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("out/poor/kite.jpg").path))
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("out/blur/kite-blur.png").path))
        try FileManager.default.removeItem(at: folder.appendingPathComponent("out/poor/kite.jpg"))
        // The default (checksum) writes it: in process there is nothing to transfer and check.
        let relaxed = try Blurfarm.run(["run", job])
        #expect(relaxed.status == 0, "\(relaxed.stderr)")
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("out/poor/kite.jpg").path))
    }
}

extension JobCommandTests {
    @Test func runWritesAJSONReportPerJob() throws {
        let folder = try Self.makeJob(Self.manifest, photos: ["special/kite.webp", "special/truncated.jpg"])
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = folder.appendingPathComponent("farm.conf")
        try "state: farm-state\ntile: 100\n".write(to: config, atomically: true, encoding: .utf8)
        let reportPath = folder.appendingPathComponent("report.json")
        let result = try Blurfarm.run([
            "run", folder.appendingPathComponent("job.job").path, "--config", config.path, "--report", reportPath.path,
        ])
        #expect(result.status == 1)
        let list = try JSONSerialization.jsonObject(with: Data(contentsOf: reportPath)) as? [[String: Any]]
        let report = try #require(list?.first)
        #expect(list?.count == 1 && report["job"] as? String == "test")
        let settings = report["settings"] as? [String: Any]
        #expect(settings?["tile"] as? Int == 100 && settings?["verify"] as? String == "checksum")
        let outputs = report["outputs"] as? [[String: Any]] ?? []
        #expect(outputs.count == 4)
        #expect(outputs.filter { $0["status"] as? String == "written" }.count == 2)
        let failures = outputs.filter { $0["status"] as? String == "failed" }
        #expect(failures.count == 2 && failures.allSatisfy {
            let error = $0["error"] as? [String: Any]
            return (error?["message"] as? String)?.contains("truncated.jpg") == true && error?["kind"] as? String == "decode"
                && error?["code"] as? String == "decodeFailed"
        })
        // The same report in the state folder, relative to the configuration's folder.
        let reports = try FileManager.default.contentsOfDirectory(
            atPath: folder.appendingPathComponent("farm-state/reports").path)
        #expect(reports.count == 1 && reports[0].hasPrefix("test-") && reports[0].hasSuffix(".json"))
    }
}

extension JobCommandTests {
    @Test func aTerminalGetsAProgressLineAndALogDoesNot() throws {
        let folder = try Self.makeJob(Self.manifest, photos: ["special/kite.webp"])
        defer { try? FileManager.default.removeItem(at: folder) }
        let job = folder.appendingPathComponent("job.job").path
        // Off a terminal (cron): the summary line only.
        let logged = try Blurfarm.run(["run", job])
        // Only the warning that the job's JPEG glob matches nothing (its one input is a WebP).
        #expect(
            logged.status == 0 && logged.stderr == "\(job):2:10: warning: the input glob 'photos/**/*.jpg' matches no file in '\(folder.path)/photos'\n",
            "\(logged.stderr)")
        #expect(logged.stdout.hasPrefix("test: 2 written, 0 failed, 1 input, in "), "\(logged.stdout)")
        #expect(logged.stdout.split(separator: "\n").count == 1, "\(logged.stdout)")
        // On a terminal (script(1) gives the command a pseudo-terminal): a live progress line.
        let (status, screen) = try Blurfarm.onTerminal("'\(Blurfarm.executable.path)' run --force '\(job)'")
        #expect(status == 0)
        #expect(screen.contains("test: 1/1 images, 2/2 outputs,"), "\(screen)")
        #expect(screen.contains("MP/s, ETA"), "\(screen)")
    }
}

extension JobCommandTests {
    /// SIGTERM mid-job: the output in hand is finished, nothing new starts, no temporary or
    /// partial file is left, the report says what was written, and the exit status is 143.
    @Test func sigtermStopsCleanlyAndReports() throws {
        let manifest = """
            job: slow
            inputs: [photos/**/*.jpg]
            outputs:
              - name: blur
                path: out/{stem}.png
                filters:
                  - gaussian:
                      sigma: 30

            """
        let folder = try Self.makeJob(manifest, photos: [])
        defer { try? FileManager.default.removeItem(at: folder) }
        for i in 0..<10 {
            try FileManager.default.copyItem(
                atPath: Fixtures.corpus("photos/mate-Aqua.jpg"),
                toPath: folder.appendingPathComponent("photos/p\(i).jpg").path)
        }
        let report = folder.appendingPathComponent("report.json")
        let process = Process()
        process.executableURL = Blurfarm.executable
        process.arguments = ["run", folder.appendingPathComponent("job.job").path, "--report", report.path, "--threads", "1"]
        process.environment = Blurfarm.environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let out = folder.appendingPathComponent("out")
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        try eventually("the run's first output", timeout: .seconds(300)) {
            let files = (try? FileManager.default.contentsOfDirectory(atPath: out.path)) ?? []
            let written = files.contains { $0.hasSuffix(".png") }
            try #require(written || process.isRunning, "the run ended before its first output")
            return written
        }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationStatus == 143)
        let files = try FileManager.default.contentsOfDirectory(atPath: out.path)
        #expect(files.allSatisfy { $0.hasSuffix(".png") && !$0.hasPrefix(".") }, "\(files)")
        #expect(!files.isEmpty && files.count < 10, "\(files)")
        for file in files {
            let header = try ImageReader.header(ofFile: out.appendingPathComponent(file).path)
            #expect(header.width == 2560 && header.height == 1600)
            #expect(try ImageReader.read(out.appendingPathComponent(file).path).pixels.rect.area == 2560 * 1600)
        }
        // Those written listed, with any cut short; those not started counted, not listed.
        let list = try JSONSerialization.jsonObject(with: Data(contentsOf: report)) as? [[String: Any]]
        let outputs = list?.first?["outputs"] as? [[String: Any]] ?? []
        let counts = list?.first?["counts"] as? [String: Int] ?? [:]
        #expect(outputs.filter { $0["status"] as? String == "written" }.count == files.count)
        #expect(counts["written"] == files.count && counts["stopped"] == 10 - files.count, "\(counts)")
        #expect(outputs.allSatisfy { ["written", "stopped"].contains($0["status"] as? String) })
    }
}
