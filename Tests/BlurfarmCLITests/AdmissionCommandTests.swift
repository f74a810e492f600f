import BlurfarmTestSupport
import Foundation
import Testing

/// Admission from the header through the executable: a decompression bomb refused by default
/// by `apply` (streamed and whole) and `run`, with one line naming the file, why, and the
/// setting that raises the limit, nothing written; `--memory-limit` and the configuration's
/// `memory-limit`; `check` saying which inputs are over the limits.
@Suite(.tags(.process), .blocking) struct AdmissionCommandTests {
    /// A 440 KB PNG of 60000 x 60000 black pixels (1 bit a pixel, zlib at level 9).
    static func writeBomb(in folder: URL) throws -> String {
        let path = folder.appendingPathComponent("bomb.png").path
        try LyingFiles.pngBomb(width: 60000, height: 60000).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func refusal(_ path: String) -> String {
        "blurfarm: error: \(path): 60000x60000 is 3600000000 pixels, over the pixel limit of 1073741824 "
            + "(setting pixel-limit, option --pixel-limit)\n"
    }

    @Test(arguments: [["--workers", "0"], ["--workers", "1"], []])
    func applyRefusesTheBombByDefaultAndWritesNothing(_ engine: [String]) throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bomb = try Self.writeBomb(in: folder)
        let output = folder.appendingPathComponent("out.png").path
        let result = try Blurfarm.run(["apply", bomb, output, "--filter", "gaussian sigma=8"] + engine)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr == Self.refusal(bomb))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["bomb.png"])
    }

    @Test func runRefusesTheBombByDefaultAndRemembersItUntilTheLimitsChange() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let photos = folder.appendingPathComponent("photos")
        try FileManager.default.createDirectory(at: photos, withIntermediateDirectories: true)
        let bomb = try Self.writeBomb(in: photos)
        try FileManager.default.copyItem(atPath: Corpus.path("special/kite.webp"), toPath: photos.path + "/kite.webp")
        let (job, config) = try Fixtures.writeBlurJob(named: "bomb", in: folder, configuration: "decoded-images: 1\n")
        // 16 GiB of address space: the memory limit does not depend on the test machine.
        func run(_ extra: [String] = []) throws -> CommandResult {
            try Blurfarm.run(["run", job, "--config", config, "--workers", "0"] + extra, limits: ["-v \(16 << 20)"])
        }
        let first = try run()
        #expect(first.status == 1, "\(first.stderr)")
        #expect(first.stdout.contains("bomb: 1 written, 1 failed"), "\(first.stdout)")
        #expect(first.stderr.hasPrefix(Self.refusal(bomb).dropLast()), "\(first.stderr)")
        #expect(first.stderr.split(separator: "\n").count == 1, "\(first.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path + "/out") == ["kite-blur.png"])
        // Remembered: skipped quietly while the limits stay.
        let second = try run()
        #expect(second.status == 0 && second.stderr.isEmpty, "\(second.stderr)")
        // A raised pixel limit decides afresh: streamed band by band, 60000 pixels wide, it is then
        // over a memory limit of 100 MB.
        let third = try run(["--pixel-limit", "4000000000", "--memory-limit", "100MB"])
        #expect(third.status == 1, "\(third.stderr)")
        #expect(
            third.stderr.contains("\(bomb): streaming 60000x60000 needs about "), "\(third.stderr)")
        #expect(third.stderr.contains("over the memory limit of 100.0 MB"), "\(third.stderr)")
        #expect(third.stderr.contains("(setting memory-limit, option --memory-limit)"), "\(third.stderr)")
    }

    @Test func theMemoryLimitComesFromTheOptionOrTheConfiguration() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let kite = Corpus.path("special/kite.webp")  // 1024 x 640, opaque
        let output = folder.appendingPathComponent("out.png").path
        // Streamed (in process): the estimate of a few bands; whole (a worker): the image in Float32.
        let streamed = try Blurfarm.run(
            ["apply", kite, output, "--filter", "gaussian sigma=2", "--workers", "0", "--memory-limit", "1MB"])
        #expect(streamed.status == 1, "\(streamed.stderr)")
        #expect(streamed.stderr.hasPrefix("blurfarm: error: \(kite): streaming 1024x640 needs about "), "\(streamed.stderr)")
        #expect(
            streamed.stderr.hasSuffix(", over the memory limit of 1.0 MB (setting memory-limit, option --memory-limit)\n"),
            "\(streamed.stderr)")
        let config = folder.appendingPathComponent("farm.conf").path
        try "memory-limit: 9MB\n".write(toFile: config, atomically: true, encoding: .utf8)
        // To standard output the image is decoded whole.
        let whole = try Blurfarm.run(
            ["apply", kite, "-", "--format", "png", "--filter", "gaussian sigma=2", "--workers", "1", "--config", config])
        #expect(
            whole.stderr == "blurfarm: error: \(kite): decoding 1024x640 needs about 9.8 MB, over the memory limit of "
                + "9.0 MB (setting memory-limit, option --memory-limit)\n")
        // The option overrides the configuration.
        let raised = try Blurfarm.run(
            ["apply", kite, "-", "--format", "png", "--filter", "gaussian sigma=2", "--workers", "1", "--config", config,
             "--memory-limit", "10MB"])
        #expect(raised.status == 0, "\(raised.stderr)")
        let bad = try Blurfarm.run(["apply", kite, output, "--memory-limit", "lots"])
        #expect(bad.status == 64 && bad.stderr.contains("--memory-limit"), "\(bad.stderr)")
    }

    @Test func runTakesTheMemoryLimitFromTheOptionOrTheConfiguration() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let photos = folder.appendingPathComponent("photos")
        try FileManager.default.createDirectory(at: photos, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Corpus.path("special/kite.webp"), toPath: photos.path + "/kite.webp")
        let (job, config) = try Fixtures.writeBlurJob(named: "tight", in: folder, configuration: "memory-limit: 4MB\n")
        let kite = photos.path + "/kite.webp"
        for extra in [[], ["--memory-limit", "2MB"]] {
            let run = try Blurfarm.run(["run", job, "--config", config, "--workers", "2"] + extra)
            #expect(run.status == 1, "\(run.stderr)")
            let limit = extra.isEmpty ? "2.0 MB" : "1.0 MB"  // shared by two decoded images
            #expect(run.stderr.contains("\(kite): streaming 1024x640 needs about "), "\(run.stderr)")
            #expect(run.stderr.contains("over the memory limit of \(limit)"), "\(run.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/out/kite-blur.png"))
        let roomy = try Blurfarm.run(["run", job, "--config", config, "--workers", "2", "--memory-limit", "1GB"])
        #expect(roomy.status == 0, "\(roomy.stderr)")
    }

    @Test func checkSaysWhichInputsAreOverTheLimits() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let photos = folder.appendingPathComponent("photos")
        try FileManager.default.createDirectory(at: photos, withIntermediateDirectories: true)
        _ = try Self.writeBomb(in: photos)
        try FileManager.default.copyItem(atPath: Corpus.path("special/kite.webp"), toPath: photos.path + "/kite.webp")
        let (job, config) = try Fixtures.writeBlurJob(named: "limits", in: folder)
        func inputs(_ extra: [String]) throws -> [String: [String: Any]] {
            let result = try Blurfarm.run(["check", job, "--config", config, "--json"] + extra)
            #expect(result.status == 0, "\(result.stderr)")
            let jobs = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
            let list = try #require(jobs.first?["inputs"] as? [[String: Any]])
            return Dictionary(uniqueKeysWithValues: list.map { ($0["input"] as? String ?? "", $0) })
        }
        let plain = try inputs([])
        #expect(plain["photos/bomb.png"]?["overPixelLimit"] as? Bool == true)
        #expect(plain["photos/kite.webp"]?["overPixelLimit"] as? Bool == false)
        #expect(plain["photos/kite.webp"]?["overMemoryLimit"] as? Bool == false)
        // Two decoded images share 16 MB: 8 MB each, under the kite's 9.8 MB.
        let tight = try inputs(["--memory-limit", "16MB"])
        #expect(tight["photos/kite.webp"]?["overMemoryLimit"] as? Bool == true)
        #expect(tight["photos/kite.webp"]?["overPixelLimit"] as? Bool == false)
        let text = try Blurfarm.run(["check", job, "--config", config, "--memory-limit", "16MB", "--pixel-limit", "1000"])
        #expect(text.stdout.contains("kite.webp  1024x640 (over the pixel limit) (over the memory limit)"), "\(text.stdout)")
    }

    /// A job asking for more outputs than `max-outputs` (inputs x sizes x formats of every
    /// variant) is refused before it is planned, at its inputs' line and column, naming the
    /// limit: by `check` and `run` (nothing written), from the option or the configuration.
    @Test func aJobAskingForMoreOutputsThanTheLimitIsRefusedNamingIt() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let photos = folder.appendingPathComponent("in")
        try FileManager.default.createDirectory(at: photos, withIntermediateDirectories: true)
        for name in ["a", "b", "c"] {
            try FileManager.default.copyItem(atPath: Corpus.path("special/kite.webp"), toPath: photos.path + "/\(name).webp")
        }
        let job = folder.appendingPathComponent("many.job").path
        try """
            job: many
            inputs: [in/*.webp]
            outputs:
              - name: thumbs
                path: out/{stem}-{size}.jpg
                resize:
                  sizes: [64, 128]

            """.write(toFile: job, atomically: true, encoding: .utf8)
        let config = folder.appendingPathComponent("blurfarm.conf").path
        try "state: state\nmax-outputs: 5\n".write(toFile: config, atomically: true, encoding: .utf8)
        let refusal = "\(job):2:10: error: job 'many' asks for 6 outputs (3 inputs, 2 each), more than the limit of 5 "
            + "(max-outputs in the configuration, or --max-outputs): split the job, or raise the limit"
        for command in ["check", "run"] {
            let refused = try Blurfarm.run([command, job, "--config", config])
            #expect(refused.status == 2, "\(command): \(refused.stderr)")
            #expect(refused.stderr.contains(refusal), "\(command): \(refused.stderr)")
        }
        let option = try Blurfarm.run(["run", job, "--config", config, "--max-outputs", "4"])
        #expect(option.status == 2 && option.stderr.contains("more than the limit of 4"), "\(option.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("out").path))
        let raised = try Blurfarm.run(["run", job, "--config", config, "--max-outputs", "6"])
        #expect(raised.status == 0, "\(raised.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("out").path).count == 6)
    }
}
