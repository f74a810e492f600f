import BlurfarmTestSupport
import Foundation
import Testing

/// Files that lie, through `apply` and `run`: a JPEG cut and padded with zeros, damaged
/// entropy-coded data, a truncated PNG, and small files whose header claims a huge image,
/// each refused with one line naming the file, nothing written. The pixel limit is raised past
/// the huge claims, so the memory estimate must stop them: streamed band by band (their
/// outputs stream), a window 60000 pixels wide needs about 1.4 GB, over the runs' memory limit of
/// 200 MB; the runs also get a 16 GiB address-space limit (`ulimit -v`), so the outcome does
/// not depend on the test machine's memory.
@Suite(.tags(.process), .blocking) struct LyingInputTests {
    /// 16 GiB of address space, in the KiB `ulimit -v` takes.
    static let addressSpace = "-v \(16 << 20)"

    /// Writes the lying files into `folder`; their names.
    static func makeLyingFiles(in folder: URL) throws -> [String: String] {
        let files: [(String, Data)] = [
            ("padded.jpg", try LyingFiles.truncatedAndPadded(Corpus.path("photos/mate-Aqua.jpg"), keeping: 0.95)),
            ("damaged.jpg", try LyingFiles.damagedEntropyCodedData(Corpus.path("batch1080/b00.jpg"))),
            ("cut.png", try LyingFiles.truncated(Corpus.path("special/deep-16bit.png"), keeping: 0.6)),
            ("bomb.png", try LyingFiles.pngBomb(width: 60000, height: 60000)),
            ("claims.jpg", try LyingFiles.jpegClaiming(Corpus.path("batch1080/b01.jpg"), width: 65000, height: 65000)),
        ]
        var paths: [String: String] = [:]
        for (name, data) in files {
            let path = folder.appendingPathComponent(name).path
            try data.write(to: URL(fileURLWithPath: path))
            paths[name] = path
        }
        return paths
    }

    /// What the error line of each file must contain.
    static let expected = [
        "padded.jpg": ["the file ends before its end-of-image marker"],
        "damaged.jpg": ["Corrupt JPEG data"],
        "cut.png": ["libpng read error"],
        // The estimate at the file's depth: about 650 MB (run and apply differ by their chains).
        "bomb.png": ["streaming 60000x60000 needs about 65", " MB, over the memory limit of 200.0 MB"],
        "claims.jpg": ["streaming 65000x65000 needs about 70", " MB, over the memory limit of 200.0 MB"],
    ]

    /// Whether `text` says what is expected of the file `name`.
    static func says(_ text: some StringProtocol, about name: String) -> Bool { expected[name]!.allSatisfy { text.contains($0) } }

    @Test func applyRefusesEachWithOneLineAndWritesNothing() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let files = try Self.makeLyingFiles(in: folder)
        for (name, path) in files.sorted(by: { $0.key < $1.key }) {
            let output = folder.appendingPathComponent("out-\(name).png").path
            let clock = ContinuousClock()
            var result: CommandResult?
            let elapsed = try clock.measure {
                // A pixel limit past the claims: the memory estimate must stop them.
                result = try Blurfarm.run(
                    ["apply", path, output, "--filter", "gaussian sigma=2", "--pixel-limit", "5000000000",
                     "--memory-limit", "200MB"],
                    limits: [Self.addressSpace])
            }
            print("apply \(name): refused in \(elapsed)")
            #expect(result?.status == 1, "\(name): \(result?.stderr ?? "")")
            #expect(result?.stderr.split(separator: "\n").count == 1, "\(name): \(result?.stderr ?? "")")
            #expect(result?.stderr.hasPrefix("blurfarm: error: \(path): ") == true, "\(result?.stderr ?? "")")
            #expect(Self.says(result?.stderr ?? "", about: name), "\(name): \(result?.stderr ?? "")")
            #expect(!FileManager.default.fileExists(atPath: output))
        }
    }

    @Test func runFailsEachInputAloneWithOneLine() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let photos = folder.appendingPathComponent("photos")
        try FileManager.default.createDirectory(at: photos, withIntermediateDirectories: true)
        let files = try Self.makeLyingFiles(in: photos)
        try FileManager.default.copyItem(atPath: Corpus.path("special/kite.webp"), toPath: photos.path + "/kite.webp")
        let (job, config) = try Fixtures.writeBlurJob(
            named: "lying", in: folder, configuration: "pixel-limit: 5000000000\nmemory-limit: 200MB\ndecoded-images: 1\n")
        for workers in ["0", "1"] {
            let clock = ContinuousClock()
            var result: CommandResult?
            let elapsed = try clock.measure {
                result = try Blurfarm.run(
                    ["run", job, "--config", config, "--workers", workers, "--force"], limits: [Self.addressSpace])
            }
            print("run --workers \(workers): done in \(elapsed)")
            let stderr = result?.stderr ?? ""
            #expect(result?.status == 1, "\(stderr)")
            #expect(result?.stdout.contains("lying: 1 written, 5 failed") == true, "\(result?.stdout ?? "")")
            let lines = stderr.split(separator: "\n")
            #expect(lines.count == 5, "\(stderr)")
            for (name, path) in files {
                let mentions = lines.filter { $0.hasPrefix("blurfarm: error: \(path): ") }
                #expect(mentions.count == 1, "\(name): \(stderr)")
                #expect(mentions.allSatisfy { Self.says($0, about: name) }, "\(name): \(stderr)")
            }
            let written = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("out").path)
            #expect(written == ["kite-blur.png"])
        }
    }
}
