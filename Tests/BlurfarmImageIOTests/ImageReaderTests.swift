import BlurfarmTestSupport
import BlurfarmCore
import BlurfarmImageIO
import Foundation
import Testing

@Suite("Reading images")
struct ImageReaderTests {
    @Test func headerReportsDisplayedSizeAfterOrientation() throws {
        let header = try ImageReader.header(ofFile: Corpus.path("special/exif-orientation-6.jpg"))
        #expect(header.width == 853)
        #expect(header.height == 1280)
        #expect(header.orientation == 6)
        #expect(header.bitDepth == 8)
        #expect(!header.hasAlpha)
        #expect(header.loader == "jpegload")
    }

    @Test func headerReportsDepthAlphaAndLoader() throws {
        let deep = try ImageReader.header(ofFile: Corpus.path("special/deep-16bit.png"))
        #expect(deep.bitDepth == 16)
        #expect(!deep.hasAlpha)
        #expect(deep.loader.hasPrefix("pngload"))
        #expect(deep.width == 1280 && deep.height == 800)

        let alpha = try ImageReader.header(ofFile: Corpus.path("special/alpha-garbage-under-transparent.png"))
        #expect(alpha.hasAlpha)
        #expect(alpha.bitDepth == 8)

        // Four bands, but CMYK: no alpha.
        let cmyk = try ImageReader.header(ofFile: Corpus.path("special/cmyk.jpg"))
        #expect(!cmyk.hasAlpha)
        #expect(cmyk.hasICCProfile)
    }

    @Test func pixelLimitAcceptsTheExactCountAndRefusesOneLess() throws {
        let path = Corpus.path("special/deep-16bit.png")  // 1280x800
        let image = try ImageReader.read(path, pixelLimit: 1280 * 800)
        #expect(image.pixels.rect == Rect(width: 1280, height: 800))
        let error = failure { try ImageReader.read(path, pixelLimit: 1280 * 800 - 1) }
        #expect(error?.code == .overPixelLimit)
        #expect(error?.description == "\(path): 1280x800 is 1024000 pixels, over the pixel limit of 1023999 (setting pixel-limit, option --pixel-limit)")
    }

    @Test func pixelLimitIsCheckedBeforeDecoding() {
        // truncated.jpg fails as soon as its pixels are decoded; over the limit, it must fail
        // for the limit instead, so no pixel was decoded.
        let path = Corpus.path("special/truncated.jpg")
        let error = failure { try ImageReader.read(path, pixelLimit: 1000) }
        #expect(error?.code == .overPixelLimit)
        #expect(error?.description == "\(path): 1920x1280 is 2457600 pixels, over the pixel limit of 1000 (setting pixel-limit, option --pixel-limit)")
    }

    @Test func exifOrientationSixIsApplied() throws {
        let image = try ImageReader.read(Corpus.path("special/exif-orientation-6.jpg"))
        #expect(image.pixels.rect == Rect(width: 853, height: 1280))
    }

    /// Each EXIF orientation, made by changing the tag of exif-orientation-6.jpg, decodes as
    /// the orientation-1 file turned and flipped as the EXIF specification says.
    @Test(arguments: 1...8)
    func everyExifOrientationIsApplied(orientation: Int) throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Corpus.path("special/exif-orientation-6.jpg"))))
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        try #require(replaceOrientation(in: &bytes, with: 1))
        try Data(bytes).write(to: URL(fileURLWithPath: scratch.file("stored.jpg")))
        try #require(replaceOrientation(in: &bytes, with: UInt8(orientation)))
        try Data(bytes).write(to: URL(fileURLWithPath: scratch.file("oriented.jpg")))

        let stored = try ImageReader.read(scratch.file("stored.jpg")).pixels
        let oriented = try ImageReader.read(scratch.file("oriented.jpg")).pixels
        let header = try ImageReader.header(ofFile: scratch.file("oriented.jpg"))
        let (w, h) = (1280, 853)
        #expect(stored.rect == Rect(width: w, height: h))
        let turned = orientation >= 5
        #expect(oriented.rect == (turned ? Rect(width: h, height: w) : Rect(width: w, height: h)))
        #expect(header.width == oriented.rect.width && header.height == oriented.rect.height)
        #expect(header.orientation == orientation)

        // Displayed (x, y) comes from stored source(x, y).
        let source: (Int, Int) -> (Int, Int) = { x, y in
            switch orientation {
            case 1: (x, y)
            case 2: (w - 1 - x, y)
            case 3: (w - 1 - x, h - 1 - y)
            case 4: (x, h - 1 - y)
            case 5: (y, x)
            case 6: (y, h - 1 - x)
            case 7: (w - 1 - y, h - 1 - x)
            default: (w - 1 - y, x)
            }
        }
        var firstMismatch: (Int, Int)?
        let xs = Array(stride(from: 0, to: oriented.rect.width, by: 5)) + [oriented.rect.width - 1]
        let ys = Array(stride(from: 0, to: oriented.rect.height, by: 5)) + [oriented.rect.height - 1]
        outer: for y in ys {
            for x in xs {
                let (sx, sy) = source(x, y)
                if oriented[x, y] != stored[sx, sy] {
                    firstMismatch = (x, y)
                    break outer
                }
            }
        }
        #expect(firstMismatch == nil, "first differing displayed pixel: \(String(describing: firstMismatch))")
    }

    @Test func sixteenBitPNGKeepsSixteenBitPrecision() throws {
        let image = try ImageReader.read(Corpus.path("special/deep-16bit.png"))
        #expect(image.bitDepth == 16)
        #expect(!image.hasAlpha)
        // 8-bit values would land on multiples of 257 out of 65535.
        let values = samples(image.pixels)
        var offGrid = 0, colour = 0
        for (i, v) in values.enumerated() where i % 4 != 3 {
            colour += 1
            let level = (v * 65535).rounded()
            #expect(abs(v * 65535 - level) < 0.01, "sample \(i) is not a 16-bit level")
            if Int(level) % 257 != 0 { offGrid += 1 }
        }
        #expect(Double(offGrid) / Double(colour) > 0.5, "only \(offGrid) of \(colour) samples are off the 8-bit grid")
    }

    @Test func alphaIsPremultipliedSoHiddenGreenIsGone() throws {
        let image = try ImageReader.read(Corpus.path("special/alpha-garbage-under-transparent.png"))
        #expect(image.hasAlpha)
        #expect(image.bitDepth == 8)
        var transparent = 0, partial = 0
        var offender: (Int, Int)?
        for y in 0..<image.pixels.rect.height {
            for x in 0..<image.pixels.rect.width {
                let p = image.pixels[x, y]
                if p.w == 0 {
                    transparent += 1
                    if p != .zero && offender == nil { offender = (x, y) }
                } else if p.w < 1 {
                    partial += 1
                }
                // Premultiplied: no colour exceeds its alpha.
                if (p.x > p.w || p.y > p.w || p.z > p.w) && offender == nil { offender = (x, y) }
            }
        }
        #expect(transparent > 10_000)
        #expect(partial > 1_000)
        #expect(offender == nil, "pixel \(String(describing: offender)) is not premultiplied")
    }

    @Test func opaqueImagesGetAlphaOneAndValuesAreSampleOver255() throws {
        let image = try ImageReader.read(Corpus.path("special/aqua.tif"))
        #expect(!image.hasAlpha)
        let values = samples(image.pixels)
        for i in stride(from: 3, to: values.count, by: 4) where values[i] != 1 {
            Issue.record("alpha \(values[i]) at sample \(i)")
            break
        }
        // Every colour is exactly v / 255 for some 8-bit v.
        for (i, v) in values.enumerated() where i % 4 != 3 && Float((v * 255).rounded()) / 255 != v {
            Issue.record("sample \(i) = \(v) is not an 8-bit value / 255")
            break
        }
    }

    @Test func grayscaleDecodesToGreyRGB() throws {
        let image = try ImageReader.read(Corpus.path("special/grayscale.jpg"))
        #expect(image.pixels.rect == Rect(width: 1024, height: 819))
        #expect(!image.hasAlpha)
        var distinct = Set<Float>()
        for y in stride(from: 0, to: 819, by: 7) {
            for x in stride(from: 0, to: 1024, by: 7) {
                let p = image.pixels[x, y]
                #expect(p.x == p.y && p.y == p.z && p.w == 1)
                distinct.insert(p.x)
            }
        }
        #expect(distinct.count > 50)
    }

    @Test func cmykDecodesToOpaqueSRGB() throws {
        let image = try ImageReader.read(Corpus.path("special/cmyk.jpg"))
        #expect(image.pixels.rect == Rect(width: 1024, height: 640))
        #expect(!image.hasAlpha)
        let values = samples(image.pixels)
        var sum = SIMD4<Double>()
        for i in stride(from: 0, to: values.count, by: 4) {
            sum += SIMD4(Double(values[i]), Double(values[i + 1]), Double(values[i + 2]), Double(values[i + 3]))
        }
        let mean = sum / Double(values.count / 4)
        #expect(mean.w == 1)
        for c in 0..<3 { #expect(mean[c] > 0.05 && mean[c] < 0.95, "channel \(c) mean \(mean[c])") }
        // The profile travelling on describes the sRGB pixels, not the CMYK file.
        let profile = try #require(image.metadata.iccProfile)
        #expect(profile.count < 100_000)
    }

    @Test func displayP3IsConvertedToSRGB() throws {
        let path = Corpus.path("special/display-p3.jpg")
        let converted = try ImageReader.read(path)
        #expect(converted.pixels.rect == Rect(width: 1024, height: 640))
        let profile = try #require(converted.metadata.iccProfile)
        #expect(profile.count != 736, "the source's P3 profile was passed on unchanged")

        // The same file without its profile decodes to the raw values: they must differ.
        let untagged = try withoutICCProfile(path)
        #expect(try ImageReader.header(ofFile: untagged.path).hasICCProfile == false)
        let raw = try ImageReader.read(untagged.path)
        untagged.folder.remove()
        #expect(raw.metadata.iccProfile == nil)
        let a = samples(converted.pixels), b = samples(raw.pixels)
        var difference = 0.0
        for i in a.indices { difference += Double(abs(a[i] - b[i])) }
        difference /= Double(a.count * 3 / 4)
        #expect(difference > 0.003, "mean difference \(difference): was the P3 profile applied?")
        // Converting P3 to sRGB makes colours more saturated: the spread between channels grows.
        #expect(spread(a) > spread(b))
    }

    @Test func readingDoesNotDependOnTheCaller() throws {
        // Two reads of the same file are bit-identical.
        let path = Corpus.path("special/kite.webp")
        let first = try ImageReader.read(path), second = try ImageReader.read(path)
        #expect(first.pixels.isBitIdentical(to: second.pixels))
        #expect(first.metadata == second.metadata)
    }
}

/// Replaces the value of the first EXIF orientation entry (tag 0x0112, SHORT, count 1) in a
/// JPEG's bytes. Returns false when there is none.
func replaceOrientation(in bytes: inout [UInt8], with value: UInt8) -> Bool {
    let little: [UInt8] = [0x12, 0x01, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00]
    let big: [UInt8] = [0x01, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01]
    for i in 0..<(bytes.count - 10) {
        if Array(bytes[i..<i + 8]) == little {
            bytes[i + 8] = value
            bytes[i + 9] = 0
            return true
        }
        if Array(bytes[i..<i + 8]) == big {
            bytes[i + 8] = 0
            bytes[i + 9] = value
            return true
        }
    }
    return false
}

/// A copy of the JPEG at `path` with its APP2 (ICC profile) segments removed.
func withoutICCProfile(_ path: String) throws -> (path: String, folder: ScratchFolder) {
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    var out: [UInt8] = [0xFF, 0xD8]
    var i = 2
    while i + 4 <= bytes.count, bytes[i] == 0xFF {
        let marker = bytes[i + 1]
        if marker == 0xDA { break }  // start of scan: the rest is image data
        let length = Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
        if marker != 0xE2 { out += bytes[i..<i + 2 + length] }
        i += 2 + length
    }
    out += bytes[i...]
    let folder = try ScratchFolder()
    let copy = folder.file("untagged.jpg")
    try Data(out).write(to: URL(fileURLWithPath: copy))
    return (copy, folder)
}

/// Mean over pixels of max(r, g, b) - min(r, g, b).
func spread(_ values: [Float]) -> Double {
    var total = 0.0
    for i in stride(from: 0, to: values.count, by: 4) {
        let rgb = values[i..<i + 3]
        total += Double(rgb.max()! - rgb.min()!)
    }
    return total / Double(values.count / 4)
}
