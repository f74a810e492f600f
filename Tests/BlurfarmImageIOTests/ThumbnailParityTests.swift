import BlurfarmCore
import BlurfarmImageIO
import BlurfarmTestSupport
import Foundation
import Testing

/// Thumbnails as vipsthumbnail and sharp make them: gravity and smart crops, sharpening after
/// the downscale, and the JPEG encoder's progressive and subsampling options.
@Suite("Thumbnail parity")
struct ThumbnailParityTests {
    /// Runs `vipsthumbnail` with `arguments` (the output path must be absolute: vipsthumbnail
    /// writes a relative one beside the input).
    static func vipsthumbnail(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["vipsthumbnail"] + arguments
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "vipsthumbnail \(arguments)")
    }

    /// The first pixel at which `a` and `b` differ, or nil.
    static func firstDifference(_ a: PixelBuffer, _ b: PixelBuffer) -> (Int, Int)? {
        for y in 0..<a.rect.height {
            for x in 0..<a.rect.width where a[x, y] != b[x, y] { return (x, y) }
        }
        return nil
    }

    @Test(.tags(.process), arguments: [("attention", ThumbnailCrop.attention), ("entropy", .entropy)])
    func smartCropGivesVipsthumbnailsPixels(strategy: String, crop: ThumbnailCrop) throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        for (file, box) in [("photos/mate-FreshFlower.jpg", (256, 256)), ("photos/mate-Aqua.jpg", (200, 300))] {
            let reference = scratch.file("reference.png")
            try Self.vipsthumbnail([
                Corpus.path(file), "--size", "\(box.0)x\(box.1)", "--smartcrop", strategy, "-o", reference,
            ])
            let expected = try ImageReader.read(reference)
            let thumb = try ImageReader.thumbnail(
                Corpus.path(file), width: box.0, height: box.1, fit: .cover, upscale: false, crop: crop)
            #expect(thumb.pixels.rect == expected.pixels.rect)
            guard thumb.pixels.rect == expected.pixels.rect else { continue }
            let centred = try ImageReader.thumbnail(Corpus.path(file), width: box.0, height: box.1, fit: .cover, upscale: false)
            #expect(Self.firstDifference(thumb.pixels, expected.pixels) == nil, "\(file) \(strategy)")
            // The smart crop chose another region than the middle.
            #expect(Self.firstDifference(centred.pixels, expected.pixels) != nil, "\(file) \(strategy)")
        }
    }

    /// A PNG that is not 8-bit RGB (grey, or with alpha), one reduced so far that the resampler
    /// would hold too many of its rows, and a smart crop of any PNG, are made from the image
    /// opened once (vips_thumbnail_image): the pixels vips_thumbnail makes of the file, as
    /// vipsthumbnail saves them. (An 8-bit RGB PNG inside a box is the resampler's:
    /// `ThumbnailTests.aPNGIsTheResamplerOverItsDecode`.)
    @Test(.tags(.process)) func aPNGsThumbnailByLibvipsIsVipsthumbnailsOfTheFile() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let rgb = scratch.file("photo.png"), grey = scratch.file("grey.png"), wide = scratch.file("wide.png")
        try ThumbnailTests.vips(["copy", Corpus.path("photos/mate-FreshFlower.jpg"), rgb + "[strip]"])  // 1600 x 1203
        try ThumbnailTests.vips(["copy", Corpus.path("special/grayscale.jpg"), grey + "[strip]"])
        // 4000 x 2500: to 24 wide the resampler would hold more than 16 MB of its rows.
        try ThumbnailTests.vips(["resize", Corpus.path("photos/mate-Aqua.jpg"), wide + "[strip]", "1.5625"])
        let alpha = Corpus.path("special/alpha-garbage-under-transparent.png")  // 1280 x 800, 8-bit RGBA
        let greyHeader = try ImageReader.header(ofFile: grey)
        let greyThumbHeight = Int((Double(greyHeader.height) * 120 / Double(greyHeader.width)).rounded())
        let cases: [(path: String, width: Int, height: Int?, fit: ThumbnailFit, crop: ThumbnailCrop, vipsthumbnail: [String])] = [
            (rgb, 200, 200, .cover, .attention, ["--size", "200x200", "--smartcrop", "attention"]),
            (alpha, 300, nil, .inside, .centre, ["--size", "300x188!"]),
            (grey, 120, nil, .inside, .centre, ["--size", "120x\(greyThumbHeight)!"]),
            (wide, 24, nil, .inside, .centre, ["--size", "24x15!"]),
        ]
        for (index, item) in cases.enumerated() {
            let reference = scratch.file("reference-\(index).png")
            try Self.vipsthumbnail([item.path] + item.vipsthumbnail + ["-o", reference])
            let expected = try ImageReader.read(reference)
            let thumb = try ImageReader.thumbnail(
                item.path, width: item.width, height: item.height, fit: item.fit, upscale: false, crop: item.crop)
            try #require(thumb.pixels.rect == expected.pixels.rect, "\(item.vipsthumbnail)")
            #expect(thumb.hasAlpha == (item.path == alpha))
            #expect(Self.firstDifference(thumb.pixels, expected.pixels) == nil, "\(item.path) \(item.vipsthumbnail)")
        }
    }

    /// A TIFF whose later pages halve in size is a pyramid to `vips_thumbnail`, which takes
    /// the smallest page at least the thumbnail's size when given the file; those pages need not
    /// be the picture (here blank). The thumbnail is the first page's, as the output at full
    /// size is: a detector's look at a whole large photo took the blank page, and the face on
    /// the first was published unredacted.
    @Test func aThumbnailIsOfThePictureNeverOfAnotherPage() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let (width, height) = (1600, 1200)
        var picture: [UInt8] = []
        picture.reserveCapacity(width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                picture += [UInt8(x * 255 / width), UInt8(y * 255 / height), UInt8(truncatingIfNeeded: (x / 16) ^ (y / 16))]
            }
        }
        func blank(_ width: Int, _ height: Int) -> [UInt8] {
            [[UInt8]](repeating: [90, 120, 90], count: width * height).flatMap { $0 }
        }
        let pyramid = scratch.file("pyramid.tif"), single = scratch.file("single.tif")
        try Data(Self.tiff(pages: [(width, height, picture)] + (1...3).map { (width >> $0, height >> $0, blank(width >> $0, height >> $0)) }))
            .write(to: URL(fileURLWithPath: pyramid))
        try Data(Self.tiff(pages: [(width, height, picture)])).write(to: URL(fileURLWithPath: single))
        let thumb = try ImageReader.thumbnail(pyramid, width: 200, height: nil, fit: .inside, upscale: false)
        let expected = try ImageReader.thumbnail(single, width: 200, height: nil, fit: .inside, upscale: false)
        try #require(thumb.pixels.rect == expected.pixels.rect && thumb.pixels.rect.width == 200)
        #expect(Self.firstDifference(thumb.pixels, expected.pixels) == nil)
        #expect(thumb.pixels[10, 140] != thumb.pixels[190, 10], "the thumbnail is flat: another page's")
    }

    /// A baseline TIFF (little-endian, uncompressed 8-bit RGB, one strip a page) of `pages`, in
    /// order, each its width, height and samples.
    static func tiff(pages: [(width: Int, height: Int, samples: [UInt8])]) -> [UInt8] {
        var bytes: [UInt8] = Array("II".utf8) + [42, 0, 8, 0, 0, 0]
        func put(_ value: Int, _ size: Int, at offset: Int? = nil) {
            let little = (0..<size).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
            if let offset { bytes.replaceSubrange(offset..<(offset + size), with: little) } else { bytes += little }
        }
        for (index, page) in pages.enumerated() {
            let entries: [(tag: Int, type: Int, value: Int)] = [
                (256, 4, page.width), (257, 4, page.height), (258, 3, 0), (259, 3, 1), (262, 3, 2), (273, 4, 0),
                (277, 3, 3), (278, 4, page.height), (279, 4, page.samples.count), (284, 3, 1),
            ]
            let ifd = bytes.count
            put(entries.count, 2)
            for entry in entries {
                put(entry.tag, 2)
                put(entry.type, 2)
                put(entry.tag == 258 ? 3 : 1, 4)
                put(entry.value, 4)
            }
            let next = bytes.count
            put(0, 4)
            // Bits per sample (three shorts) and the strip, after the directory.
            put(bytes.count, 4, at: ifd + 2 + 2 * 12 + 8)
            for _ in 0..<3 { put(8, 2) }
            put(bytes.count, 4, at: ifd + 2 + 5 * 12 + 8)
            bytes += page.samples
            if bytes.count % 2 == 1 { bytes.append(0) }
            if index + 1 < pages.count { put(bytes.count, 4, at: next) }
        }
        return bytes
    }

    /// Each gravity keeps its side or corner of the scaled image: the same pixels as the whole
    /// `inside` thumbnail at the matching offset.
    @Test func gravityKeepsTheNamedSideOrCorner() throws {
        let path = Corpus.path("photos/mate-FreshFlower.jpg")  // 1600 x 1203
        // Cover 200 x 120 scales to 200 x 150 (a spare of 30 rows); 120 x 200 to 266 x 200.
        let wide = try ImageReader.thumbnail(path, width: 200, height: nil, fit: .inside, upscale: false)
        let tall = try ImageReader.thumbnail(path, width: nil, height: 200, fit: .inside, upscale: false)
        #expect(wide.pixels.rect == Rect(width: 200, height: 150) && tall.pixels.rect == Rect(width: 266, height: 200))
        let cases: [(ThumbnailCrop, wideTop: Int, tallLeft: Int)] = [
            (.north, 0, 73), (.south, 30, 73), (.east, 15, 146), (.west, 15, 0), (.northEast, 0, 146),
            (.southWest, 30, 0), (.northWest, 0, 0), (.southEast, 30, 146), (.centre, 15, 73),
        ]
        for (crop, wideTop, tallLeft) in cases {
            let a = try ImageReader.thumbnail(path, width: 200, height: 120, fit: .cover, upscale: false, crop: crop)
            let b = try ImageReader.thumbnail(path, width: 120, height: 200, fit: .cover, upscale: false, crop: crop)
            #expect(a.pixels.rect == Rect(width: 200, height: 120) && b.pixels.rect == Rect(width: 120, height: 200))
            var mismatches = 0
            for y in 0..<120 { for x in 0..<200 where a.pixels[x, y] != wide.pixels[x, y + wideTop] { mismatches += 1 } }
            for y in 0..<200 { for x in 0..<120 where b.pixels[x, y] != tall.pixels[x + tallLeft, y] { mismatches += 1 } }
            #expect(mismatches == 0, "\(crop): \(mismatches) pixels differ")
        }
    }

    /// Sharpening raises the local contrast of the downscaled image (the mean absolute
    /// difference between neighbours), more with a larger sigma, and keeps the size and the
    /// mean colour; 16-bit sources stay 16-bit.
    @Test func sharpeningAfterTheDownscaleRaisesLocalContrast() throws {
        func contrast(_ buffer: PixelBuffer) -> Double {
            var sum = 0.0
            for y in 0..<buffer.rect.height {
                for x in 1..<buffer.rect.width { sum += Double(abs(buffer[x, y].y - buffer[x - 1, y].y)) }
            }
            return sum / Double(buffer.rect.area)
        }
        let path = Corpus.path("photos/mate-GreenMeadow.jpg")
        let plain = try ImageReader.thumbnail(path, width: 256, height: nil, fit: .inside, upscale: false)
        let mild = try ImageReader.thumbnail(path, width: 256, height: nil, fit: .inside, upscale: false, sharpen: 0.5)
        let strong = try ImageReader.thumbnail(path, width: 256, height: nil, fit: .inside, upscale: false, sharpen: 1.5)
        #expect(mild.pixels.rect == plain.pixels.rect && strong.pixels.rect == plain.pixels.rect)
        #expect(contrast(mild.pixels) > contrast(plain.pixels) * 1.01, "\(contrast(mild.pixels)) vs \(contrast(plain.pixels))")
        #expect(contrast(strong.pixels) > contrast(mild.pixels))
        let means = [plain, mild].map { meanColour($0.pixels, x: 0..<256, y: 0..<$0.pixels.rect.height) }
        #expect(maxDifference(means[0], means[1]) < 2, "\(means)")

        let deep = try ImageReader.thumbnail(
            Corpus.path("special/deep-16bit.png"), width: 64, height: nil, fit: .inside, upscale: false, sharpen: 0.5)
        #expect(deep.bitDepth == 16)
        #expect(failure { try ImageReader.thumbnail(path, width: 9, height: nil, fit: .inside, upscale: false, sharpen: 0) }?
            .code == .invalidArgument)
    }

    /// The JPEG's frame header: the SOF marker (0xC0 baseline, 0xC2 progressive) and each
    /// component's horizontal and vertical sampling factors.
    static func frame(_ bytes: [UInt8]) -> (marker: UInt8, sampling: [(Int, Int)])? {
        var at = 2
        while at + 4 <= bytes.count, bytes[at] == 0xFF {
            let marker = bytes[at + 1]
            let length = Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
            if [0xC0, 0xC1, 0xC2].contains(marker) {
                let count = Int(bytes[at + 9])
                let sampling = (0..<count).map { k in
                    let factors = bytes[at + 11 + 3 * k]
                    return (Int(factors >> 4), Int(factors & 0x0F))
                }
                return (marker, sampling)
            }
            at += 2 + length
        }
        return nil
    }

    @Test func progressiveAndSubsamplingAreInTheFile() throws {
        let image = try ImageReader.thumbnail(
            Corpus.path("photos/mate-Aqua.jpg"), width: 128, height: nil, fit: .inside, upscale: false)
        func encoded(_ options: EncodeOptions) throws -> (marker: UInt8, sampling: [(Int, Int)]) {
            let bytes = try ImageWriter.encode(
                image.pixels, for: "/tmp/x.jpg", sourceBitDepth: 8, sourceHadAlpha: false, metadata: nil,
                options: options
            ).bytes
            return try #require(Self.frame(bytes))
        }
        let baseline = try encoded(EncodeOptions(quality: 80))
        #expect(baseline.marker == 0xC0)
        #expect(baseline.sampling.map { [$0.0, $0.1] } == [[2, 2], [1, 1], [1, 1]])  // auto below 90: 4:2:0
        let progressive = try encoded(EncodeOptions(quality: 80, progressive: true, subsampling: .full))
        #expect(progressive.marker == 0xC2)
        #expect(progressive.sampling.map { [$0.0, $0.1] } == [[1, 1], [1, 1], [1, 1]])
        let halved = try encoded(EncodeOptions(quality: 95, subsampling: .halved))
        #expect(halved.marker == 0xC0)
        #expect(halved.sampling.map { [$0.0, $0.1] } == [[2, 2], [1, 1], [1, 1]])
        #expect(try encoded(EncodeOptions(quality: 95)).sampling.map { [$0.0, $0.1] } == [[1, 1], [1, 1], [1, 1]])
        // JPEG's alone.
        for options in [EncodeOptions(progressive: true), EncodeOptions(subsampling: .full)] {
            let refusal = failure {
                try ImageWriter.encode(
                    image.pixels, for: "/tmp/x.png", sourceBitDepth: 8, sourceHadAlpha: false, metadata: nil,
                    options: options)
            }
            #expect(refusal?.code == .invalidArgument)
            #expect(refusal?.message.contains("applies to JPEG outputs only") == true, "\(String(describing: refusal))")
        }
    }
}

/// Several widths from one decode (a variant's `sizes`).
@Suite("Thumbnail sizes")
struct ThumbnailSizesTests {
    /// The largest is exactly the single thumbnail of its width; each smaller one has the size
    /// a thumbnail of its own width has, and nearly its pixels (reduced from the largest
    /// rather than shrunk on load at its own factor).
    @Test(arguments: ["photos/mate-Aqua.jpg", "special/exif-orientation-6.jpg", "special/alpha-garbage-under-transparent.png", "special/deep-16bit.png"])
    func oneDecodeServesEveryWidth(file: String) throws {
        let path = Corpus.path(file)
        let widths = [60, 125, 250]
        let all = try ImageReader.thumbnails(path, widths: widths, upscale: false)
        #expect(all.count == 3)
        for (width, image) in zip(widths, all) {
            let alone = try ImageReader.thumbnail(path, width: width, height: nil, fit: .inside, upscale: false)
            #expect(image.pixels.rect == alone.pixels.rect, "\(file) \(width)")
            #expect(image.bitDepth == alone.bitDepth && image.hasAlpha == alone.hasAlpha)
            guard image.pixels.rect == alone.pixels.rect else { continue }
            if width == widths.last {
                #expect(image.pixels.firstDifference(from: alone.pixels) == nil, "\(file) \(width)")
            } else {
                let quality = psnr(image.pixels, alone.pixels)
                #expect(quality > 30, "\(file) \(width): \(quality) dB against its own thumbnail")
            }
        }
    }

    @Test func widthsMustBeAscendingDistinctAndInRange() {
        let path = Corpus.path("photos/mate-Aqua.jpg")
        for widths in [[], [256, 128], [128, 128], [0, 128]] {
            #expect(failure { try ImageReader.thumbnails(path, widths: widths, upscale: false) }?.code == .invalidArgument)
        }
    }
}
