import BlurfarmTestSupport
import BlurfarmCore
import BlurfarmImageIO
import BlurfarmKernels
import Foundation
import Testing

@Suite("Thumbnails")
struct ThumbnailTests {
    /// The 8-bit levels of an opaque buffer, RGB, row by row.
    static func levels(_ buffer: PixelBuffer) -> [UInt8] {
        var out: [UInt8] = []
        for y in buffer.rect.y..<buffer.rect.maxY {
            for x in buffer.rect.x..<buffer.rect.maxX {
                let p = buffer[x, y]
                for c in 0..<3 { out.append(UInt8((p[c] * 255).rounded())) }
            }
        }
        return out
    }

    /// Runs the `vips` program with `arguments`, and requires it to succeed.
    static func vips(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["vips"] + arguments
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "vips \(arguments)")
    }

    /// Expects `thumb` to be ``LanczosResampler``'s resample of `source` (the pixels as stored)
    /// to the thumbnail's size, turned a quarter clockwise when `turned` (EXIF orientation 6).
    static func expectResampled(_ thumb: PixelBuffer, from source: PixelBuffer, turned: Bool, _ label: String) throws {
        let (storedWidth, storedHeight) = turned ? (thumb.rect.height, thumb.rect.width) : (thumb.rect.width, thumb.rect.height)
        let resampler = try #require(
            LanczosResampler(
                sourceWidth: source.rect.width, sourceHeight: source.rect.height, width: storedWidth,
                height: storedHeight, channels: 3))
        let stored = levels(source).withUnsafeBytes { resampler.resample($0, stride: source.rect.width * 3) }
        var expected = stored
        if turned {
            // Displayed (x, y) is stored (y, storedHeight − 1 − x).
            for y in 0..<thumb.rect.height {
                for x in 0..<thumb.rect.width {
                    for c in 0..<3 {
                        expected[(y * thumb.rect.width + x) * 3 + c] = stored[((storedHeight - 1 - x) * storedWidth + y) * 3 + c]
                    }
                }
            }
        }
        let actual = levels(thumb)
        let first = zip(actual, expected).enumerated().first { $0.element.0 != $0.element.1 }
        #expect(actual.count == expected.count && first == nil, "\(label): first difference \(String(describing: first)), \(zip(actual, expected).filter { $0 != $1 }.count) of \(actual.count) differ, most by \(zip(actual, expected).map { abs(Int($0) - Int($1)) }.max() ?? 0)")
    }

    /// An 8-bit colour JPEG is thumbnailed by blurfarm's Lanczos-3 (``LanczosResampler``) over
    /// libjpeg's decode shrunk on load as vips_thumbnail shrinks it (by 1, 2, 4 or 8, leaving at
    /// least 2 for the resampler), then turned upright: its pixels are the resampler's over
    /// libvips's own `jpegload --shrink` of the file (the `vips` program), turned by the EXIF
    /// orientation (6: a quarter clockwise).
    @Test(.tags(.process), arguments: [
        ("photos/mate-Aqua.jpg", 800, 1), ("photos/mate-Aqua.jpg", 500, 2), ("photos/mate-Aqua.jpg", 300, 4),
        ("photos/mate-Aqua.jpg", 150, 8), ("special/exif-orientation-6.jpg", 256, 1),
    ])
    func aJPEGIsTheResamplerOverItsDecodeShrunkOnLoad(file: String, width: Int, shrink: Int) throws {
        let path = Corpus.path(file)
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let decoded = folder.file("decoded.png")
        // Saved without metadata: no EXIF orientation for `read` to apply again.
        try Self.vips(["jpegload", path, decoded + "[strip]", "--shrink", String(shrink)])
        // As stored (jpegload does not turn it), and at libjpeg's size: these files' sides divide
        // by the shrink (libvips rounds a shrunk side down, libjpeg up).
        let source = try ImageReader.read(decoded).pixels
        #expect(source.rect.width == (file.contains("orientation-6") ? 1280 : 2560) / shrink)
        let thumb = try ImageReader.thumbnail(path, width: width, height: nil, fit: .inside, upscale: false).pixels
        try Self.expectResampled(
            thumb, from: source, turned: file.contains("orientation-6"), "\(file) \(width) wide, shrunk by \(shrink) on load")
    }

    /// An 8-bit RGB PNG (no shrink-on-load) is thumbnailed by ``LanczosResampler`` over its rows
    /// as libvips decodes them, then turned upright: its pixels are the resampler's over the
    /// file's own decode, turned by the EXIF orientation (6: a quarter clockwise).
    @Test(.tags(.process), arguments: [
        ("photos/mate-FreshFlower.jpg", 256), ("photos/mate-FreshFlower.jpg", 97), ("photos/mate-FreshFlower.jpg", 24),
        ("special/exif-orientation-6.jpg", 200),
    ])
    func aPNGIsTheResamplerOverItsDecode(file: String, width: Int) throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        // The PNG keeps the photo's EXIF (its orientation); the pixels as stored, without it.
        let png = folder.file("photo.png"), stored = folder.file("stored.png")
        try Self.vips(["copy", Corpus.path(file), png])
        try Self.vips(["copy", png, stored + "[strip]"])
        let source = try ImageReader.read(stored).pixels
        let thumb = try ImageReader.thumbnail(png, width: width, height: nil, fit: .inside, upscale: false).pixels
        #expect(thumb.rect.width == width)
        try Self.expectResampled(thumb, from: source, turned: file.contains("orientation-6"), "\(file) \(width) wide")
    }

    @Test func insideFitToAWidthKeepsTheAspectRatio() throws {
        let path = Corpus.path("photos/mate-Aqua.jpg")  // 2560x1600
        let thumb = try ImageReader.thumbnail(path, width: 256, height: nil, fit: .inside, upscale: false)
        #expect(thumb.pixels.rect == Rect(width: 256, height: 160))
        #expect(thumb.bitDepth == 8 && !thumb.hasAlpha)
        // The same picture as `read` shrunk by averaging 10x10 blocks.
        let reference = boxShrink(try ImageReader.read(path).pixels, by: 10)
        let quality = psnr(thumb.pixels, reference)
        #expect(quality > 30, "PSNR against read + box shrink: \(quality) dB")
    }

    @Test func insideFitToAHeightOnly() throws {
        let path = Corpus.path("photos/mate-Aqua.jpg")
        let thumb = try ImageReader.thumbnail(path, width: nil, height: 160, fit: .inside, upscale: false)
        #expect(thumb.pixels.rect == Rect(width: 256, height: 160))
        let narrow = try ImageReader.thumbnail(path, width: nil, height: 101, fit: .inside, upscale: false)
        #expect(narrow.pixels.rect == Rect(width: 162, height: 101))  // 2560 * 101 / 1600 = 161.6
    }

    @Test func insideFitOfBothSidesIsLimitedByTheTighterOne() throws {
        let path = Corpus.path("photos/mate-Aqua.jpg")
        let wide = try ImageReader.thumbnail(path, width: 1000, height: 100, fit: .inside, upscale: false)
        #expect(wide.pixels.rect == Rect(width: 160, height: 100))
        let tall = try ImageReader.thumbnail(path, width: 100, height: 1000, fit: .inside, upscale: false)
        #expect(tall.pixels.rect == Rect(width: 100, height: 63))  // 1600 * 100 / 2560 = 62.5, rounded up
    }

    @Test func coverFillsTheBoxAndCropsTheMiddle() throws {
        let path = Corpus.path("photos/mate-Aqua.jpg")
        let cover = try ImageReader.thumbnail(path, width: 200, height: 200, fit: .cover, upscale: false)
        #expect(cover.pixels.rect == Rect(width: 200, height: 200))
        // Cover scales 2560x1600 to 320x200 and keeps columns 60..<260: exactly those pixels of
        // the 320-wide inside-fit thumbnail.
        let whole = try ImageReader.thumbnail(path, width: 320, height: nil, fit: .inside, upscale: false)
        #expect(whole.pixels.rect == Rect(width: 320, height: 200))
        var firstMismatch: (Int, Int)?
        outer: for y in 0..<200 {
            for x in 0..<200 where cover.pixels[x, y] != whole.pixels[x + 60, y] {
                firstMismatch = (x, y)
                break outer
            }
        }
        #expect(firstMismatch == nil, "first differing pixel: \(String(describing: firstMismatch))")

        let portrait = try ImageReader.thumbnail(path, width: 100, height: 300, fit: .cover, upscale: false)
        #expect(portrait.pixels.rect == Rect(width: 100, height: 300))
    }

    @Test func exactIgnoresTheAspectRatio() throws {
        let path = Corpus.path("photos/mate-Aqua.jpg")
        let exact = try ImageReader.thumbnail(path, width: 300, height: 100, fit: .exact, upscale: false)
        #expect(exact.pixels.rect == Rect(width: 300, height: 100))
        // Squeezed, not cropped: each third across has the mean colour of that third of the
        // inside fit (the whole height).
        let inside = try ImageReader.thumbnail(path, width: 300, height: nil, fit: .inside, upscale: false)
        #expect(inside.pixels.rect == Rect(width: 300, height: 188))
        for third in 0..<3 {
            let a = meanColour(exact.pixels, x: third * 100..<third * 100 + 100, y: 0..<100)
            let b = meanColour(inside.pixels, x: third * 100..<third * 100 + 100, y: 0..<188)
            #expect(maxDifference(a, b) < 0.02, "third \(third): \(a) against \(b)")
        }
    }

    @Test func noUpscalingUnlessAsked() throws {
        let path = Corpus.path("special/aqua.tif")  // 1024x640
        let kept = try ImageReader.thumbnail(path, width: 2000, height: nil, fit: .inside, upscale: false)
        #expect(kept.pixels.rect == Rect(width: 1024, height: 640))
        // Not resized at all: the pixels are read's.
        #expect(kept.pixels.isBitIdentical(to: try ImageReader.read(path).pixels))

        let grown = try ImageReader.thumbnail(path, width: 2000, height: nil, fit: .inside, upscale: true)
        #expect(grown.pixels.rect == Rect(width: 2000, height: 1250))

        let cover = try ImageReader.thumbnail(path, width: 800, height: 800, fit: .cover, upscale: false)
        #expect(cover.pixels.rect == Rect(width: 800, height: 640))
        let coverGrown = try ImageReader.thumbnail(path, width: 800, height: 800, fit: .cover, upscale: true)
        #expect(coverGrown.pixels.rect == Rect(width: 800, height: 800))

        let exact = try ImageReader.thumbnail(path, width: 2000, height: 100, fit: .exact, upscale: false)
        #expect(exact.pixels.rect == Rect(width: 1024, height: 100))
        let exactGrown = try ImageReader.thumbnail(path, width: 2000, height: 100, fit: .exact, upscale: true)
        #expect(exactGrown.pixels.rect == Rect(width: 2000, height: 100))
    }

    @Test func exifOrientationIsAppliedBeforeFitting() throws {
        let path = Corpus.path("special/exif-orientation-6.jpg")  // stored 1280x853, displays 853x1280
        let thumb = try ImageReader.thumbnail(path, width: 256, height: 256, fit: .inside, upscale: false)
        #expect(thumb.pixels.rect == Rect(width: 171, height: 256))  // 853 * 256 / 1280 = 170.6
        let full = try ImageReader.read(path)
        // The same way up as read's: the four quarters have the same mean colours, and they
        // differ from each other enough that a turned or mirrored image would not match.
        let quarters = { (p: PixelBuffer) -> [SIMD3<Double>] in
            let w = p.rect.width, h = p.rect.height
            return [(0, 0), (1, 0), (0, 1), (1, 1)].map { (qx, qy) in
                meanColour(p, x: qx * w / 2..<(qx + 1) * w / 2, y: qy * h / 2..<(qy + 1) * h / 2)
            }
        }
        let expected = quarters(full.pixels), actual = quarters(thumb.pixels)
        for q in 0..<4 {
            #expect(maxDifference(expected[q], actual[q]) < 0.01, "quarter \(q): \(actual[q]) against \(expected[q])")
        }
        let distinct = [(0, 3), (1, 2), (0, 1), (0, 2)].map { maxDifference(expected[$0.0], expected[$0.1]) }
        #expect(distinct.allSatisfy { $0 > 0.03 }, "quarters too alike to tell orientations apart: \(distinct)")
        // Metadata as read gives it: EXIF orientation reset.
        #expect(thumb.metadata == full.metadata)
    }

    /// A thumbnail kept at the file's depth (``ImageReader/decodeSamples(_:_:pixelLimit:memoryLimit:confinement:)``,
    /// which a worker makes its outputs from) is the thumbnail `decode` gives, before its
    /// samples are made `Float32`: made `Float32` they are its pixels bit for bit, with its
    /// depth, alpha and metadata (opaque, grey, 16-bit, alpha, CMYK, EXIF-rotated; several widths, a
    /// cover crop sharpened, a height alone), in the same order; a whole image is read band by band
    /// instead (nil).
    @Test(arguments: [
        "photos/mate-Aqua.jpg", "special/grayscale.jpg", "special/deep-16bit.png",
        "special/alpha-garbage-under-transparent.png", "special/cmyk.jpg", "special/exif-orientation-6.jpg",
        "special/kite.webp",
    ])
    func samplesAtTheFilesDepthAreTheDecodedPixelsBeforeFloat32(file: String) throws {
        let path = Corpus.path(file)
        let requests: [DecodeRequest] = [
            .thumbnails(widths: [40, 90, 200], upscale: false, sharpen: nil),
            .thumbnail(width: 120, height: 120, fit: .cover, upscale: false, crop: .north, sharpen: 1),
            .thumbnail(width: nil, height: 77, fit: .inside, upscale: false, crop: .centre, sharpen: nil),
        ]
        for request in requests {
            let floats = try ImageReader.decode(path, request)
            let samples = try #require(try ImageReader.decodeSamples(path, request))
            #expect(samples.count == floats.count)
            for (kept, decoded) in zip(samples, floats) {
                #expect(kept.samples.format == .file(bitDepth: decoded.bitDepth), "\(file) \(request)")
                #expect(kept.bitDepth == decoded.bitDepth && kept.hasAlpha == decoded.hasAlpha)
                #expect(kept.metadata == decoded.metadata)
                #expect(kept.floats.pixels.isBitIdentical(to: decoded.pixels), "\(file) \(request)")
            }
        }
        #expect(try ImageReader.decodeSamples(path, .whole) == nil)
    }

    @Test func sixteenBitSourcesStaySixteenBit() throws {
        let thumb = try ImageReader.thumbnail(
            Corpus.path("special/deep-16bit.png"), width: 256, height: nil, fit: .inside, upscale: false)
        #expect(thumb.pixels.rect == Rect(width: 256, height: 160))
        #expect(thumb.bitDepth == 16 && !thumb.hasAlpha)
        // 16-bit levels, and far more distinct ones per channel than an 8-bit intermediate
        // leaves (tried: 335, 217 and 206; the 16-bit path gives tens of thousands).
        var levels = [Set<Int>](repeating: [], count: 3)
        for (i, v) in samples(thumb.pixels).enumerated() where i % 4 != 3 {
            let level = (v * 65535).rounded()
            if abs(v * 65535 - level) > 0.01 {
                Issue.record("sample \(i) = \(v) is not a 16-bit level")
                break
            }
            levels[i % 4].insert(Int(level))
        }
        #expect(levels.allSatisfy { $0.count > 1000 }, "distinct levels per channel: \(levels.map(\.count))")
        let reference = boxShrink(try ImageReader.read(Corpus.path("special/deep-16bit.png")).pixels, by: 5)
        #expect(psnr(thumb.pixels, reference) > 35)
    }

    @Test func alphaStaysPremultipliedWithNoHiddenGreen() throws {
        let path = Corpus.path("special/alpha-garbage-under-transparent.png")  // 1280x800
        let thumb = try ImageReader.thumbnail(path, width: 256, height: nil, fit: .inside, upscale: false)
        #expect(thumb.pixels.rect == Rect(width: 256, height: 160))
        #expect(thumb.hasAlpha && thumb.bitDepth == 8)
        let full = try ImageReader.read(path).pixels
        let check = hiddenGreenCheck(thumb.pixels, source: full, xFactor: 5, yFactor: 5)
        #expect(check.interior > 500, "only \(check.interior) thumbnail pixels inside the transparent areas")
        #expect(check.partial > 500)
        #expect(check.problems.isEmpty, "\(check.problems)")

        // The check catches a leak: shrinking straight (not premultiplied) colours, with the pure
        // green the file stores under its transparent pixels, fails it.
        let leaky = makeBuffer(width: 256, height: 160) { x, y in
            var straight = SIMD3<Float>(), alpha: Float = 0
            for sy in y * 5..<y * 5 + 5 {
                for sx in x * 5..<x * 5 + 5 {
                    let p = full[sx, sy]
                    straight += p.w > 0 ? SIMD3(p.x, p.y, p.z) / p.w : SIMD3(0, 1, 0)
                    alpha += p.w
                }
            }
            let a = alpha / 25
            return SIMD4(straight / 25 * a, a)
        }
        #expect(!hiddenGreenCheck(leaky, source: full, xFactor: 5, yFactor: 5).problems.isEmpty)
    }

    /// libvips 8.14's vips_thumbnail does not premultiply when only one side changes size.
    @Test(arguments: [(1280, 400), (640, 800)])
    func alphaStaysPremultipliedWhenOneSideKeepsItsSize(width: Int, height: Int) throws {
        let path = Corpus.path("special/alpha-garbage-under-transparent.png")  // 1280x800
        let thumb = try ImageReader.thumbnail(path, width: width, height: height, fit: .exact, upscale: false)
        #expect(thumb.pixels.rect == Rect(width: width, height: height))
        #expect(thumb.hasAlpha)
        let full = try ImageReader.read(path).pixels
        let check = hiddenGreenCheck(thumb.pixels, source: full, xFactor: 1280 / width, yFactor: 800 / height)
        #expect(check.interior > 10_000 && check.partial > 10_000)
        #expect(check.problems.isEmpty, "\(check.problems)")
    }

    /// The thumbnail's colours are sRGB as `read` makes them: the file's profile applied once.
    @Test(arguments: ["special/display-p3.jpg", "special/cmyk.jpg"])
    func coloursAreConvertedToSRGBLikeRead(file: String) throws {
        let path = Corpus.path(file)  // 1024x640
        let thumb = try ImageReader.thumbnail(path, width: 256, height: nil, fit: .inside, upscale: false)
        #expect(thumb.pixels.rect == Rect(width: 256, height: 160))
        let full = try ImageReader.read(path)
        let reference = boxShrink(full.pixels, by: 4)
        let whole = (x: 0..<256, y: 0..<160)
        let mean = meanColour(thumb.pixels, x: whole.x, y: whole.y)
        let expected = meanColour(reference, x: whole.x, y: whole.y)
        #expect(maxDifference(mean, expected) < 2.0 / 255, "mean \(mean * 255) against read's \(expected * 255)")
        #expect(thumb.metadata == full.metadata)
        // Region by region (16x16-pixel blocks, where resampling filters hardly differ), the
        // thumbnail has read's colours, and the file decoded without colour management does not.
        if file.hasSuffix("display-p3.jpg") {
            let untagged = try withoutICCProfile(path)
            defer { untagged.folder.remove() }
            let raw = try ImageReader.thumbnail(untagged.path, width: 256, height: nil, fit: .inside, upscale: false)
            let converted = worstBlockDifference(thumb.pixels, reference, block: 16)
            let unconverted = worstBlockDifference(raw.pixels, reference, block: 16)
            print("P3 worst 16x16 block mean: converted \(converted * 255)/255, raw \(unconverted * 255)/255, spread \(spread(samples(thumb.pixels))) \(spread(samples(raw.pixels))) \(spread(samples(reference)))")
            #expect(converted < 1.0 / 255, "thumbnail's worst block is \(converted * 255)/255 off read's")
            #expect(unconverted > 3.0 / 255, "raw P3 is only \(unconverted * 255)/255 off read's")
        }
    }

    @Test func pixelLimitIsCheckedBeforeDecoding() {
        // truncated.jpg fails as soon as its pixels are decoded: over the limit, it must fail
        // for the limit instead.
        let path = Corpus.path("special/truncated.jpg")
        let error = failure {
            try ImageReader.thumbnail(path, width: 64, height: nil, fit: .inside, upscale: false, pixelLimit: 1000)
        }
        #expect(error?.code == .overPixelLimit)
        #expect(error?.description == "\(path): 1920x1280 is 2457600 pixels, over the pixel limit of 1000 (setting pixel-limit, option --pixel-limit)")
    }

    @Test func upscaledSizeIsCheckedAgainstThePixelLimit() {
        let path = Corpus.path("special/aqua.tif")  // 1024x640 = 655360 pixels
        let error = failure {
            try ImageReader.thumbnail(
                path, width: 2048, height: nil, fit: .inside, upscale: true, pixelLimit: 1_000_000)
        }
        #expect(error?.code == .overPixelLimit)
        #expect(error?.description == "\(path): a thumbnail of 2048x1280 is 2621440 pixels, over the pixel limit of 1000000 (setting pixel-limit, option --pixel-limit)")
    }

    @Test func invalidArgumentsAreRefusedBeforeTheFileIsOpened() {
        let path = Corpus.path("special/no-such-photo.jpg")
        func refusal(_ width: Int?, _ height: Int?, _ fit: ThumbnailFit) -> ImageIOError? {
            failure { try ImageReader.thumbnail(path, width: width, height: height, fit: fit, upscale: false) }
        }
        let cases: [(Int?, Int?, ThumbnailFit, String)] = [
            (nil, nil, .inside, "a thumbnail needs a width or a height"),
            (0, 100, .inside, "thumbnail width 0 is not in 1...10000000"),
            (100, -1, .inside, "thumbnail height -1 is not in 1...10000000"),
            (10_000_001, nil, .inside, "thumbnail width 10000001 is not in 1...10000000"),
            (100, nil, .cover, "thumbnail fit 'cover' needs both a width and a height"),
            (nil, 100, .exact, "thumbnail fit 'exact' needs both a width and a height"),
        ]
        for (width, height, fit, message) in cases {
            let error = refusal(width, height, fit)
            #expect(error?.code == .invalidArgument)
            #expect(error?.description == "\(path): \(message)")
        }
        #expect(refusal(100, nil, .inside)?.code == .fileMissing)
    }

    /// A 256-pixel thumbnail of a 2560x1600 baseline JPEG has the box's size. (It is decoded
    /// at 1/8 the size, shrink-on-load; how much faster that is than a full `read` is a
    /// benchmark figure, docs/performance-history.md "Thumbnails", not a timed assertion here.)
    @Test func thumbnailOfALargeJPEGFitsTheBox() throws {
        let path = Corpus.path("photos/mate-Aqua.jpg")
        let thumbnail = try ImageReader.thumbnail(path, width: 256, height: nil, fit: .inside, upscale: false)
        #expect(thumbnail.pixels.rect == Rect(width: 256, height: 160))
    }
}

// With the other tests that make libvips fail: they run one at a time, each reading its own
// message from libvips's process-wide error buffer.
extension FailureTests {
    @Test func thumbnailOfTruncatedJPEGIsAnError() {
        let path = Corpus.path("special/truncated.jpg")
        let error = failure { try ImageReader.thumbnail(path, width: 256, height: nil, fit: .inside, upscale: false) }
        #expect(error?.code == .decodeFailed)
        #expect(error?.path == path)
        #expect(error?.description.hasPrefix("\(path): ") == true)
        #expect(error?.message.contains("truncated") == true, "message: \(error?.message ?? "none")")
        #expect(error?.message.contains("\n") == false)
    }

    @Test func thumbnailOfATextFileIsNotAnImage() {
        let path = Corpus.path("special/not-an-image.png")
        let error = failure { try ImageReader.thumbnail(path, width: 256, height: nil, fit: .inside, upscale: false) }
        #expect(error?.code == .notAnImage)
        #expect(error?.description == "\(path): not an image in any format libvips reads")
    }
}

/// Checks a thumbnail, `xFactor` × `yFactor` times smaller, of the premultiplied `source` for
/// colour from under transparent pixels. Thumbnail pixel (x, y) is made from the source's block
/// of pixels xFactor·x ..< xFactor·(x+1) by yFactor·y ..< yFactor·(y+1) and a few around (lanczos3
/// reaches 3 thumbnail pixels each way): its neighbourhood is 4 blocks each way. Where that is all
/// transparent, the pixel must be all zero; where it has some transparency, its green must not
/// exceed the neighbourhood's most green (premultiplied) plus 0.03 (lanczos overshoot);
/// everywhere, no colour may exceed alpha.
func hiddenGreenCheck(
    _ thumb: PixelBuffer, source: PixelBuffer, xFactor: Int, yFactor: Int
) -> (interior: Int, partial: Int, problems: [String]) {
    let width = thumb.rect.width, height = thumb.rect.height, reach = 4
    // Per block of the source: any transparent, all transparent, most green.
    var some = [Bool](repeating: false, count: width * height)
    var all = [Bool](repeating: true, count: width * height)
    var green = [Float](repeating: 0, count: width * height)
    for y in 0..<height * yFactor {
        for x in 0..<width * xFactor {
            let p = source[x, y], b = (y / yFactor) * width + x / xFactor
            if p.w == 0 { some[b] = true } else { all[b] = false }
            green[b] = max(green[b], p.y)
        }
    }
    var interior = 0, partial = 0
    var problems: [String] = []
    for y in 0..<height {
        for x in 0..<width {
            let p = thumb[x, y]
            var allTransparent = true, someTransparent = false
            var greenBound: Float = 0
            for by in max(0, y - reach)...min(height - 1, y + reach) {
                for bx in max(0, x - reach)...min(width - 1, x + reach) {
                    let b = by * width + bx
                    allTransparent = allTransparent && all[b]
                    someTransparent = someTransparent || some[b]
                    greenBound = max(greenBound, green[b])
                }
            }
            if allTransparent {
                interior += 1
                if p != .zero { problems.append("(\(x), \(y)) = \(p) in transparency") }
            } else if p.w > 0 && p.w < 1 {
                partial += 1
            }
            if someTransparent && p.y > greenBound + 0.03 {
                problems.append("(\(x), \(y)) green \(p.y) over \(greenBound)")
            }
            if p.x > p.w || p.y > p.w || p.z > p.w {
                problems.append("(\(x), \(y)) = \(p) is not premultiplied")
            }
        }
    }
    return (interior, partial, Array(problems.prefix(5)))
}

/// `buffer` shrunk by averaging `factor` × `factor` blocks (its size must be a multiple).
func boxShrink(_ buffer: PixelBuffer, by factor: Int) -> PixelBuffer {
    precondition(buffer.rect.width % factor == 0 && buffer.rect.height % factor == 0)
    let scale = 1 / Float(factor * factor)
    return makeBuffer(width: buffer.rect.width / factor, height: buffer.rect.height / factor) { x, y in
        var sum = SIMD4<Float>()
        for sy in y * factor..<(y + 1) * factor {
            for sx in x * factor..<(x + 1) * factor { sum += buffer[sx, sy] }
        }
        return sum * scale
    }
}

/// The mean red, green and blue over a rectangle of `buffer`.
func meanColour(_ buffer: PixelBuffer, x xs: Range<Int>, y ys: Range<Int>) -> SIMD3<Double> {
    var sum = SIMD3<Double>()
    for y in ys {
        for x in xs {
            let p = buffer[x, y]
            sum += SIMD3(Double(p.x), Double(p.y), Double(p.z))
        }
    }
    return sum / Double(xs.count * ys.count)
}

func maxDifference(_ a: SIMD3<Double>, _ b: SIMD3<Double>) -> Double {
    let d = a - b
    return max(abs(d.x), abs(d.y), abs(d.z))
}

/// The largest difference of a colour channel's mean over the same `block` × `block` square of
/// two same-sized buffers (whose sides are multiples of `block`).
func worstBlockDifference(_ a: PixelBuffer, _ b: PixelBuffer, block: Int) -> Double {
    precondition(a.rect == b.rect && a.rect.width % block == 0 && a.rect.height % block == 0)
    var worst = 0.0
    for y in stride(from: 0, to: a.rect.height, by: block) {
        for x in stride(from: 0, to: a.rect.width, by: block) {
            let xs = x..<x + block, ys = y..<y + block
            worst = max(worst, maxDifference(meanColour(a, x: xs, y: ys), meanColour(b, x: xs, y: ys)))
        }
    }
    return worst
}
