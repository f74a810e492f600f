import BlurfarmImageIO
import BlurfarmTestSupport
import Foundation
import Testing

/// Thumbnail variants through the built executable: smart and gravity crops, sharpening,
/// progressive JPEG with chosen subsampling, and each setting in the output's recipe.
@Suite(.tags(.process), .blocking) struct ThumbnailJobTests {
    struct Folder {
        let root: URL
        func path(_ relative: String) -> String { root.appendingPathComponent(relative).path }
        var manifest: String { path("thumbs.job") }
        var config: String { path("farm.conf") }

        init() throws {
            root = try Fixtures.temporaryFolder()
            try FileManager.default.createDirectory(atPath: path("in"), withIntermediateDirectories: true)
            try FileManager.default.copyItem(
                atPath: Corpus.path("photos/mate-FreshFlower.jpg"), toPath: path("in/flower.jpg"))
            try "state: state\n".write(toFile: config, atomically: true, encoding: .utf8)
        }

        func write(crop: String, sharpen: String) throws {
            try """
                job: thumbs
                inputs: [in/*.jpg]
                outputs:
                  - name: smart
                    path: out/smart/{stem}.png
                    resize:
                      width: 256
                      height: 256
                      fit: cover
                      crop: \(crop)
                  - name: web
                    path: out/web/{stem}.jpg
                    quality: 80
                    progressive: true
                    subsampling: 4:4:4
                    resize:
                      width: 200
                      sharpen: \(sharpen)

                """.write(toFile: manifest, atomically: true, encoding: .utf8)
        }

        /// Runs the job; returns the result and the report's counts.
        func run() throws -> (CommandResult, [String: Int]) {
            let report = path("report-\(UUID().uuidString).json")
            let result = try Blurfarm.run(["run", manifest, "--config", config, "--report", report])
            let list = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [[String: Any]]
            return (result, list?.first?["counts"] as? [String: Int] ?? [:])
        }
    }

    @Test func smartCropSharpeningAndJPEGOptionsReachTheFiles() throws {
        let folder = try Folder()
        defer { try? FileManager.default.removeItem(at: folder.root) }
        try folder.write(crop: "attention", sharpen: "true")
        let (first, counts) = try folder.run()
        #expect(first.status == 0, "\(first.stderr)")
        #expect(counts["written"] == 2, "\(counts)")

        // The smart crop is vipsthumbnail's, pixel for pixel.
        let reference = folder.path("reference.png")
        let vipsthumbnail = Process()
        vipsthumbnail.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        vipsthumbnail.arguments = [
            "vipsthumbnail", folder.path("in/flower.jpg"), "--size", "256x256", "--smartcrop", "attention", "-o", reference,
        ]
        try vipsthumbnail.run()
        vipsthumbnail.waitUntilExit()
        let ours = try ImageReader.read(folder.path("out/smart/flower.png")).pixels
        let theirs = try ImageReader.read(reference).pixels
        #expect(ours.rect == theirs.rect)
        #expect(ours.rect == theirs.rect && ours.firstDifference(from: theirs) == nil)

        // Progressive (SOF2), chroma at full resolution (every component 1x1).
        let jpeg = [UInt8](try Data(contentsOf: URL(fileURLWithPath: folder.path("out/web/flower.jpg"))))
        var at = 2, frame: [UInt8]?
        while at + 4 <= jpeg.count, jpeg[at] == 0xFF, frame == nil {
            let length = Int(jpeg[at + 2]) << 8 | Int(jpeg[at + 3])
            if (0xC0...0xC2).contains(jpeg[at + 1]) { frame = Array(jpeg[(at + 1)..<(at + 2 + length)]) }
            at += 2 + length
        }
        let sof = try #require(frame)
        #expect(sof[0] == 0xC2, "SOF marker \(sof[0])")
        #expect(sof[8] == 3 && [sof[10], sof[13], sof[16]] == [0x11, 0x11, 0x11], "\(sof)")

        // Up to date; then each changed setting renders its own output again.
        #expect(try folder.run().1["skipped"] == 2)
        try folder.write(crop: "north-west", sharpen: "true")
        let cropped = try folder.run().1
        #expect(cropped["written"] == 1 && cropped["skipped"] == 1, "\(cropped)")
        try folder.write(crop: "north-west", sharpen: "1.5")
        let sharpened = try folder.run().1
        #expect(sharpened["written"] == 1 && sharpened["skipped"] == 1, "\(sharpened)")
    }
}

/// `.avif` outputs through the executable: written, lossy-verified, stripped; and `--version`
/// and `filters` say AVIF is available.
@Suite(.tags(.process), .blocking) struct AVIFJobTests {
    @Test func anAVIFVariantIsWrittenStrippedAndVerified() throws {
        let folder = try ThumbnailJobTests.Folder()
        defer { try? FileManager.default.removeItem(at: folder.root) }
        try FileManager.default.copyItem(
            atPath: Corpus.path("photos/plasma-ColorfulCups.jpg"), toPath: folder.path("in/cups.jpg"))
        try """
            job: avif
            inputs: [in/*.jpg]
            outputs:
              - name: small
                path: out/{stem}.avif
                quality: 90
                strip: true
                resize:
                  width: 240
            verify: decode

            """.write(toFile: folder.manifest, atomically: true, encoding: .utf8)
        let check = try Blurfarm.run(["check", folder.manifest, "--config", folder.config])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout.contains("out/cups.avif"), "\(check.stdout)")
        let (run, counts) = try folder.run()
        #expect(run.status == 0, "\(run.stderr)")
        #expect(counts["written"] == 2, "\(counts)")
        let cups = folder.path("out/cups.avif")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: cups)))
        #expect(Array(bytes[4..<12]) == Array("ftypavif".utf8))
        let read = try ImageReader.read(cups)
        #expect(read.pixels.rect.width == 240)
        #expect(read.metadata.exif == nil && read.metadata.iccProfile != nil)

        let version = try Blurfarm.run(["--version"])
        #expect(version.stdout.contains("\navif-output yes\n"), "\(version.stdout)")
        let filters = try Blurfarm.run(["filters", "--config", folder.config])
        #expect(filters.stdout.contains("output formats: .jpg .jpeg .png .webp .tif .tiff .avif\navif-output yes\n"))
    }
}

/// `sizes` through the executable: one output per size in the plan, in the records and in the
/// up-to-date checks, all from one decode of each input.
@Suite(.tags(.process), .blocking) struct ThumbnailSizesJobTests {
    @Test func everySizeIsAnOutputOfItsOwnFromOneDecode() throws {
        let folder = try ThumbnailJobTests.Folder()
        defer { try? FileManager.default.removeItem(at: folder.root) }
        try FileManager.default.copyItem(atPath: Corpus.path("photos/mate-Aqua.jpg"), toPath: folder.path("in/aqua.jpg"))
        func write(sharpen: String) throws {
            try """
                job: srcset
                inputs: [in/*.jpg]
                outputs:
                  - name: w
                    path: out/{stem}-{size}.webp
                    resize:
                      sizes: [480, 120, 240]
                      sharpen: \(sharpen)

                """.write(toFile: folder.manifest, atomically: true, encoding: .utf8)
        }
        try write(sharpen: "false")
        let check = try Blurfarm.run(["check", folder.manifest, "--config", folder.config])
        #expect(check.status == 0, "\(check.stderr)")
        for size in [120, 240, 480] {
            #expect(check.stdout.contains("out/aqua-\(size).webp  resize inside to \(size)x"), "\(check.stdout)")
        }
        #expect(check.stdout.contains("2 inputs, 6 outputs"), "\(check.stdout)")

        let (first, counts) = try folder.run()
        #expect(first.status == 0, "\(first.stderr)")
        #expect(counts["written"] == 6 && counts["decoded"] == 2, "\(counts)")
        for (stem, size, height) in [("aqua", 120, 75), ("aqua", 480, 300), ("flower", 240, 180)] {
            let header = try ImageReader.header(ofFile: folder.path("out/\(stem)-\(size).webp"))
            #expect(header.width == size && header.height == height, "\(stem) \(size): \(header)")
        }
        // The largest is the single thumbnail of its width, byte for byte in pixels.
        let largest = try ImageReader.read(folder.path("out/aqua-480.webp"))
        #expect(largest.pixels.rect.width == 480)

        // Up to date per size: a missing one is written again, alone, from one decode.
        #expect(try folder.run().1["skipped"] == 6)
        let before = try Data(contentsOf: URL(fileURLWithPath: folder.path("out/flower-240.webp")))
        try FileManager.default.removeItem(atPath: folder.path("out/flower-240.webp"))
        let again = try folder.run().1
        #expect(again["written"] == 1 && again["skipped"] == 5 && again["decoded"] == 1, "\(again)")
        // Reduced from the largest's decode as before, though the largest was up to date.
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder.path("out/flower-240.webp"))) == before)
        // A setting of the variant is in every size's recipe.
        try write(sharpen: "true")
        let sharpened = try folder.run().1
        #expect(sharpened["written"] == 6 && sharpened["decoded"] == 2, "\(sharpened)")
    }

    /// A variant resized to one width alone that another variant makes as one of its sizes
    /// shares that decode: it has the size's pixels (a srcset and a blurred backdrop at one of
    /// its widths, as a libvips script makes them), one decode less an input; a width that is
    /// none of the sizes, or the same width with other settings, decodes on its own.
    @Test func aWidthAloneThatIsOneOfTheSizesHasThatSizesPixelsFromItsDecode() throws {
        let folder = try ThumbnailJobTests.Folder()
        defer { try? FileManager.default.removeItem(at: folder.root) }
        try FileManager.default.copyItem(atPath: Corpus.path("photos/mate-Aqua.jpg"), toPath: folder.path("in/aqua.jpg"))
        try """
            job: srcset
            inputs: [in/*.jpg]
            outputs:
              - name: srcset
                path: out/{stem}-{size}.png
                resize:
                  sizes: [120, 240, 480]
              - name: alone
                path: out/alone/{stem}.png
                resize:
                  width: 240
              - name: backdrop
                path: out/backdrop/{stem}.png
                resize:
                  width: 240
                filters:
                  - gaussian:
                      sigma: 4
              - name: other
                path: out/other/{stem}.png
                resize:
                  width: 200
              - name: sharpened
                path: out/sharpened/{stem}.png
                resize:
                  width: 240
                  sharpen: true

            """.write(toFile: folder.manifest, atomically: true, encoding: .utf8)
        let (run, counts) = try folder.run()
        #expect(run.status == 0, "\(run.stderr)")
        #expect(counts["written"] == 14, "\(counts)")
        for stem in ["aqua", "flower"] {
            let size = try ImageReader.read(folder.path("out/\(stem)-240.png"))
            let alone = try ImageReader.read(folder.path("out/alone/\(stem).png"))
            // Reduced from the 480's decode, as the size is: not the thumbnail at 240 on its own.
            #expect(samples(alone) == samples(size), "\(stem): the width alone is not the size's pixels")
            let own = try ImageReader.thumbnail(folder.path("in/\(stem).jpg"), width: 240, height: nil, fit: .inside, upscale: false)
            #expect(samples(own) != samples(size))
            // Other settings, or a width that is none of the sizes: the thumbnail of their own.
            let sharpened = try ImageReader.read(folder.path("out/sharpened/\(stem).png"))
            let ownSharpened = try ImageReader.thumbnail(
                folder.path("in/\(stem).jpg"), width: 240, height: nil, fit: .inside, upscale: false, sharpen: 0.5)
            #expect(samples(sharpened) == samples(ownSharpened), "\(stem): sharpened")
            let other = try ImageReader.read(folder.path("out/other/\(stem).png"))
            let ownOther = try ImageReader.thumbnail(folder.path("in/\(stem).jpg"), width: 200, height: nil, fit: .inside, upscale: false)
            #expect(samples(other) == samples(ownOther), "\(stem): 200 wide")
            // The backdrop is the size's pixels blurred, as the in-process engine blurs them.
            let backdrop = try ImageReader.read(folder.path("out/backdrop/\(stem).png"))
            let blurred = try Blurfarm.run([
                "apply", folder.path("out/\(stem)-240.png"), folder.path("blurred-\(stem).png"), "--filter", "gaussian sigma=4",
            ])
            #expect(blurred.status == 0, "\(blurred.stderr)")
            #expect(samples(try ImageReader.read(folder.path("blurred-\(stem).png"))) == samples(backdrop))
        }
        // Its recipe says where its pixels come from, so it is up to date by it.
        #expect(try folder.run().1["skipped"] == 14)

        /// Every sample of a decoded image, row by row.
        func samples(_ image: DecodedImage) -> [Float] {
            let p = image.pixels
            return (p.rect.y..<p.rect.maxY).flatMap { y in
                (p.rect.x..<p.rect.maxX).flatMap { x in [p[x, y].x, p[x, y].y, p[x, y].z, p[x, y].w] }
            }
        }
    }
}
