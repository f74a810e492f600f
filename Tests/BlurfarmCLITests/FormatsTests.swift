import BlurfarmImageIO
import BlurfarmTestSupport
import Foundation
import Testing

/// `formats: [avif, webp, jpg]`: one variant writes each format from one decode and one
/// render, `{ext}` in its path standing for each; every file has the bytes a variant of that
/// format alone writes, whichever path makes it (streamed bands, a worker's whole-image task,
/// this process).
@Suite(.tags(.process), .blocking) struct FormatsTests {
    /// The flower photo, and a job with a three-format variant and the same variant written
    /// once per format by three single-format variants.
    static func folder(resize: Bool) throws -> ThumbnailJobTests.Folder {
        let folder = try ThumbnailJobTests.Folder()
        let resizing = resize ? "    resize:\n      width: 400\n" : ""
        func variant(_ name: String, path: String, formats: String = "", progressive: Bool = true) -> String {
            "  - name: \(name)\n    path: \(path)\n" + formats + """
                    filters:
                      - gaussian:
                          sigma: 3
                    quality: 80

                """ + (progressive ? "    progressive: true\n" : "") + resizing
        }
        try ("job: formats\ninputs: [in/*.jpg]\noutputs:\n"
            + variant("web", path: "out/{stem}.{ext}", formats: "    formats: [avif, webp, jpg]\n"))
            .write(toFile: folder.manifest, atomically: true, encoding: .utf8)
        try ("job: single\ninputs: [in/*.jpg]\noutputs:\n"
            + variant("avif", path: "single/{stem}.avif", progressive: false)
            + variant("webp", path: "single/{stem}.webp", progressive: false)
            + variant("jpg", path: "single/{stem}.jpg"))
            .write(toFile: folder.path("single.job"), atomically: true, encoding: .utf8)
        return folder
    }

    /// The report's outputs of a run, by file name and folder ("out/flower.avif").
    static func run(
        _ folder: ThumbnailJobTests.Folder, _ manifest: String, workers: Int
    ) throws -> (CommandResult, [String: [String: Any]], [String: Int]) {
        let report = folder.path("report-\(UUID().uuidString).json")
        let result = try Blurfarm.run(
            ["run", manifest, "--config", folder.config, "--report", report, "--workers", "\(workers)"])
        #expect(FileManager.default.fileExists(atPath: report), "\(result.stderr)")
        let list = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [[String: Any]]
        let job = list?.first ?? [:]
        var outputs: [String: [String: Any]] = [:]
        for output in job["outputs"] as? [[String: Any]] ?? [] {
            let path = output["output"] as? String ?? ""
            outputs[URL(fileURLWithPath: path).deletingLastPathComponent().lastPathComponent + "/" + (path as NSString).lastPathComponent] = output
        }
        return (result, outputs, job["counts"] as? [String: Int] ?? [:])
    }

    /// Streamed (no resize, workers), a worker's whole-image task (a resize, one worker for
    /// the one input), the pool from this process (a resize, two workers: fewer inputs than
    /// workers) and this process alone (`--workers 0`).
    @Test(arguments: [(false, 2), (true, 1), (true, 2), (true, 0), (false, 0)])
    func threeFormatsFromOneDecodeAndOneRender(resize: Bool, workers: Int) throws {
        let folder = try Self.folder(resize: resize)
        defer { try? FileManager.default.removeItem(at: folder.root) }
        let (result, shared, counts) = try Self.run(folder, folder.manifest, workers: workers)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(counts["written"] == 3 && counts["decoded"] == 1, "\(counts)")
        // The same variant written once per format by three variants, which differ only in
        // their encoding: they share one render too.
        let (alone, singles, _) = try Self.run(folder, folder.path("single.job"), workers: workers)
        #expect(alone.status == 0, "\(alone.stderr)")
        var outputs = shared
        outputs.merge(singles) { a, _ in a }
        // One render for the three formats: the first counts the tiles, the others none.
        for folderName in ["out", "single"] {
            let tiles = ["avif", "webp", "jpg"].map { outputs["\(folderName)/flower.\($0)"]?["tiles"] as? Int ?? -1 }
            #expect(tiles.filter { $0 > 0 }.count == 1 && tiles.filter { $0 == 0 }.count == 2, "\(folderName): \(tiles)")
        }
        for ext in ["avif", "webp", "jpg"] {
            let made = try Data(contentsOf: URL(fileURLWithPath: folder.path("out/flower.\(ext)")))
            let alone = try Data(contentsOf: URL(fileURLWithPath: folder.path("single/flower.\(ext)")))
            #expect(made == alone, "\(ext): \(made.count) bytes, alone \(alone.count)")
            #expect(outputs["out/flower.\(ext)"]?["checksum"] as? String == outputs["single/flower.\(ext)"]?["checksum"] as? String)
        }
        // Progressive applies to the JPEG (SOF2), the other formats leave it.
        let jpeg = try [UInt8](Data(contentsOf: URL(fileURLWithPath: folder.path("out/flower.jpg"))))
        #expect(zip(jpeg, jpeg.dropFirst()).contains { $0 == 0xFF && $1 == 0xC2 })
        let again = try Self.run(folder, folder.manifest, workers: workers)
        #expect(again.2["skipped"] == 3 && again.2["written"] == 0, "\(again.2)")
    }

    /// Per-format blocks over the variant's settings, and the metadata kept: `webp: quality:
    /// 30` makes a smaller WebP than the variant's quality 90, `jpeg: optimize-coding: true` a
    /// smaller JPEG of the same pixels; the default `keep-icc` keeps the ICC profile and drops
    /// the photo's EXIF (with its GPS position) and XMP, `metadata: keep` keeps them. `apply`
    /// takes the same settings as options.
    @Test func perFormatSettingsAndTheMetadataKept() throws {
        let folder = try ThumbnailJobTests.Folder()
        defer { try? FileManager.default.removeItem(at: folder.root) }
        try FileManager.default.copyItem(atPath: Corpus.path("photos/plasma-ColorfulCups.jpg"), toPath: folder.path("in/cups.jpg"))
        try """
            job: settings
            inputs: [in/cups.jpg]
            outputs:
              - name: blocks
                path: out/blocks/{stem}.{ext}
                formats: [webp, jpg]
                quality: 90
                webp:
                  quality: 30
                  effort: 6
                jpeg:
                  optimize-coding: true
              - name: plain
                path: out/plain/{stem}.{ext}
                formats: [webp, jpg]
                quality: 90
                metadata: keep
              - name: baseline
                path: out/baseline/{stem}.jpg
                quality: 90

            """.write(toFile: folder.manifest, atomically: true, encoding: .utf8)
        let result = try Blurfarm.run(["run", folder.manifest, "--config", folder.config])
        #expect(result.status == 0, "\(result.stderr)")
        func size(_ path: String) throws -> Int {
            try FileManager.default.attributesOfItem(atPath: folder.path(path))[.size] as? Int ?? 0
        }
        #expect(try size("out/blocks/cups.webp") < size("out/plain/cups.webp") * 2 / 3)
        // Against the same JPEG with the same metadata (keep-icc), only the coding differs.
        #expect(try size("out/blocks/cups.jpg") < size("out/baseline/cups.jpg"))
        let baseline = try ImageReader.read(folder.path("out/baseline/cups.jpg"))
        let optimized = try ImageReader.read(folder.path("out/blocks/cups.jpg"))
        let plain = try ImageReader.read(folder.path("out/plain/cups.jpg"))
        #expect(optimized.pixels.firstDifference(from: baseline.pixels) == nil, "optimized coding changes no pixel")
        #expect(plain.pixels.firstDifference(from: baseline.pixels) == nil, "the metadata changes no pixel")
        #expect(plain.metadata.exif != nil && plain.metadata.xmp != nil && plain.metadata.iccProfile != nil)
        #expect(optimized.metadata.exif == nil && optimized.metadata.xmp == nil && optimized.metadata.iccProfile != nil)
        let webp = try ImageReader.read(folder.path("out/blocks/cups.webp"))
        #expect(webp.metadata.exif == nil && webp.metadata.xmp == nil && webp.metadata.iccProfile != nil)

        let applied = try Blurfarm.run(
            ["apply", "in/cups.jpg", "a.jpg", "--optimize-coding", "--metadata", "keep", "--quality", "90"], in: folder.root)
        let unoptimized = try Blurfarm.run(
            ["apply", "in/cups.jpg", "b.jpg", "--metadata", "keep", "--quality", "90"], in: folder.root)
        #expect(applied.status == 0 && unoptimized.status == 0, "\(applied.stderr)")
        #expect(try size("a.jpg") < size("b.jpg"))
        #expect(try ImageReader.read(folder.path("a.jpg")).metadata.exif != nil)
        let tooHard = try Blurfarm.run(["apply", "in/cups.jpg", "a.webp", "--effort", "8"], in: folder.root)
        #expect(tooHard.status != 0 && tooHard.stderr.contains("WebP's effort is 0 to 6, not 8"), "\(tooHard.stderr)")
        let notJPEG = try Blurfarm.run(["apply", "in/cups.jpg", "a.png", "--optimize-coding"], in: folder.root)
        #expect(notJPEG.status != 0 && notJPEG.stderr.contains("'optimize-coding' applies to JPEG outputs only"), "\(notJPEG.stderr)")
    }

    @Test func badFormatsAreRefusedAtTheirPlace() throws {
        let folder = try ThumbnailJobTests.Folder()
        defer { try? FileManager.default.removeItem(at: folder.root) }
        for (formats, path, message) in [
            ("[webp, gif]", "out/{stem}.{ext}", "6:21: error: 'gif' is not a format blurfarm writes"),
            ("[jpg, jpeg]", "out/{stem}.{ext}", "6:20: error: 'jpeg' names JPEG again (after 'jpg')"),
            ("[]", "out/{stem}.{ext}", "6:14: error: 'formats' must name at least one format"),
            ("[webp, png]", "out/{stem}.webp", "5:11: error: with 'formats', the output path ends in '.{ext}'"),
        ] {
            try "job: bad\ninputs: [in/*.jpg]\noutputs:\n  - name: web\n    path: \(path)\n    formats: \(formats)\n    lossless: true\n"
                .write(toFile: folder.manifest, atomically: true, encoding: .utf8)
            let check = try Blurfarm.run(["check", folder.manifest, "--config", folder.config])
            #expect(check.status == 2 && check.stderr.contains(folder.manifest + ":" + message), "\(formats): \(check.stderr)")
        }
        try "job: bad\ninputs: [in/*.jpg]\noutputs:\n  - name: web\n    path: out/{stem}.{ext}\n    formats: [avif, png]\n    lossless: true\n"
            .write(toFile: folder.manifest, atomically: true, encoding: .utf8)
        let lossless = try Blurfarm.run(["check", folder.manifest, "--config", folder.config])
        #expect(
            lossless.status == 2
                && lossless.stderr.contains(":7:15: error: 'lossless' applies to WebP outputs only, and 'formats' has none"),
            "\(lossless.stderr)")
    }
}
