import BlurfarmCore
import BlurfarmFileFormats
@testable import BlurfarmImageIO
import BlurfarmTestSupport
import CVips
import Foundation
import Testing

/// libjpeg on the calling thread (``JPEGDecoder``, ``JPEGEncoder``) stands in for libvips only
/// where it gives libvips's pixels and bytes: checked here against libvips itself.
@Suite struct JPEGCodecTests {
    static let streaming = DecodeMemory.Streaming(bandRows: 64, haloRows: 0, buffers: 2, samples: .bytes(1))

    /// The corpus's JPEGs whose samples need no colour conversion: baseline and progressive,
    /// chroma 4:2:0, 4:2:2 and 4:4:4 (none carries a profile).
    static let direct = [
        "photos/mate-Aqua.jpg", "photos/mate-FreshFlower.jpg", "photos/mate-Storm.jpg", "photos/plasma-Volna.jpg",
        "photos/plasma-EveningGlow.jpg", "batch1080/b07.jpg",
    ]

    @Test(arguments: direct)
    func libjpegDecodesBandsToLibvipssPixels(_ file: String) throws {
        let reader = try #require(try BandReader.open(Corpus.path(file), streaming: Self.streaming))
        #expect(reader.decodesWithLibjpeg)
        let samples = AnyPixels.uninitialized(
            Rect(width: reader.width, height: reader.height), channels: reader.channels, format: reader.format)
        // Bands of uneven heights, some not a multiple of the 8 or 16 rows of an MCU.
        var generator = SplitMix(seed: 27)
        while reader.rowsRead < reader.height {
            let rows = min(reader.height - reader.rowsRead, Int.random(in: 1...41, using: &generator))
            try reader.read(into: samples.view(Rect(x: 0, y: reader.rowsRead, width: reader.width, height: rows)))
        }
        let whole = try ImageReader.read(Corpus.path(file))
        let pixels = samples.floats(in: samples.rect)
        #expect(pixels.isBitIdentical(to: whole.pixels), "first difference at \(String(describing: pixels.firstDifference(from: whole.pixels)))")
        #expect(reader.metadata == whole.metadata)
    }

    /// `file` with `donor`'s EXIF block (the APP1 payload starting "Exif"), its orientation set
    /// to `orientation`, put in after the start-of-image marker: the first EXIF block, which is
    /// the one libvips keeps (mate-Aqua has one of its own, later).
    static func withEXIF(_ file: String, from donor: String, orientation: UInt8, tiffMagic: UInt8? = nil) throws -> Data {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Corpus.path(donor))))
        var at = 2
        var payload: [UInt8]?
        while at + 4 <= bytes.count, bytes[at] == 0xFF, bytes[at + 1] != 0xDA {
            let length = Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
            let body = Array(bytes[(at + 4)..<(at + 2 + length)])
            if bytes[at + 1] == 0xE1, body.starts(with: Array("Exif".utf8)) { payload = body }
            at += 2 + length
        }
        var exif = try #require(payload)
        #expect(EXIF.orientation(exif) == 6)
        exif = EXIF.withOrientationReset(exif)
        #expect(EXIF.orientation(exif) == 1)
        if orientation != 1 {
            // withOrientationReset wrote 1 in the entry's byte order: find it again and set it.
            let reset = exif
            for i in 0..<(reset.count - 1) where Array(reset[i..<(i + 2)]) == [0x01, 0x12] || Array(reset[i..<(i + 2)]) == [0x12, 0x01] {
                let littleEndian = reset[i] == 0x12
                let value = i + 8
                if littleEndian, reset[value] == 1 { exif[value] = orientation; break }
                if !littleEndian, reset[value + 1] == 1 { exif[value + 1] = orientation; break }
            }
            #expect(EXIF.orientation(exif) == Int(orientation))
        }
        if let tiffMagic {
            // TIFF's 42 after the byte order mark, "Exif\0\0" before it.
            (exif[8], exif[9]) = (tiffMagic, tiffMagic)
            #expect(EXIF.orientation(exif) == nil)
        }
        let photo = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Corpus.path(file))))
        let segment: [UInt8] = [0xFF, 0xE1, UInt8((exif.count + 2) >> 8), UInt8((exif.count + 2) & 0xFF)] + exif
        return Data(photo[0..<2] + segment + photo[2...])
    }

    /// A JPEG with no metadata but EXIF, upright, is opened by libjpeg alone (libvips not
    /// asked): the same pixels and the same metadata as libvips gives.
    @Test(arguments: ["photos/mate-Aqua.jpg", "photos/plasma-Volna.jpg", "batch1080/b03.jpg"])
    func aJPEGWithOnlyEXIFIsOpenedByLibjpegAloneWithLibvipssMetadata(_ file: String) throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let path = scratch.file("exif.jpg")
        try Self.withEXIF(file, from: "special/exif-orientation-6.jpg", orientation: 1).write(to: URL(fileURLWithPath: path))
        let descriptor = open(path, O_RDONLY)
        defer { close(descriptor) }
        let header = try JPEGDecoder(descriptor: descriptor).header
        #expect(header.decodesWithoutLibvips && header.exif != nil)
        let original = open(Corpus.path(file), O_RDONLY)
        defer { close(original) }
        #expect(try JPEGDecoder(descriptor: original).header.decodesWithoutLibvips)

        let reader = try #require(try BandReader.open(path, streaming: Self.streaming))
        #expect(reader.decodesWithLibjpeg)
        let samples = AnyPixels.uninitialized(
            Rect(width: reader.width, height: reader.height), channels: reader.channels, format: reader.format)
        try reader.read(into: samples)
        let whole = try ImageReader.read(path)
        #expect(reader.metadata == whole.metadata)
        #expect(reader.metadata.exif != nil)
        #expect(samples.floats(in: samples.rect).isBitIdentical(to: whole.pixels))
    }

    /// The header of an 8-bit colour JPEG, read by libjpeg, is the one libvips reads: plain,
    /// with a profile or XMP, to turn upright (6, and 8 written here); grey and CMYK are
    /// libvips's own.
    @Test(arguments: direct + [
        "special/bench-3840x2160.jpg", "special/exif-orientation-6.jpg", "special/display-p3.jpg",
        "photos/plasma-Kite.jpg", "special/grayscale.jpg", "special/cmyk.jpg", "turned", "not TIFF",
        "chunk 2",
    ])
    func aColourJPEGsHeaderIsLibvipss(_ file: String) throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        var path = Corpus.path(file)
        if file == "turned" || file == "not TIFF" {
            // Turned by 8; or by 6 in an EXIF whose TIFF magic is not 42, which libexif (and so
            // libvips) does not read: upright.
            path = scratch.file("turned.jpg")
            try Self.withEXIF(
                "photos/mate-Aqua.jpg", from: "special/exif-orientation-6.jpg", orientation: file == "turned" ? 8 : 6,
                tiffMagic: file == "turned" ? nil : 43
            ).write(to: URL(fileURLWithPath: path))
        }
        if file == "chunk 2" {
            // A profile whose one chunk says it is the second: libvips, which joins the chunks
            // from the first, sees no profile.
            var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Corpus.path("special/display-p3.jpg"))))
            let name = Array("ICC_PROFILE".utf8) + [0]
            let at = try #require(bytes.indices.first { Array(bytes[$0..<min($0 + name.count, bytes.count)]) == name })
            #expect(bytes[at + 12] == 1)
            bytes[at + 12] = 2
            path = scratch.file("chunk2.jpg")
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        }
        let viaLibvips = try ImageReader.libvipsHeader(of: InputFile(path))
        #expect(try ImageReader.header(ofFile: path) == viaLibvips)
        #expect(viaLibvips.hasICCProfile == ["special/display-p3.jpg", "photos/plasma-Kite.jpg", "special/cmyk.jpg"].contains(file), "\(file)")
        let descriptor = open(path, O_RDONLY)
        defer { close(descriptor) }
        let byLibjpeg = try JPEGDecoder(descriptor: descriptor).header.readsWithoutLibvips
        #expect(byLibjpeg == !["special/grayscale.jpg", "special/cmyk.jpg", "not TIFF"].contains(file), "\(file)")
    }

    /// What libjpeg alone does not open: a file to turn upright, one with a profile or XMP,
    /// grey, CMYK; `BandReader` leaves those to libvips (an upright one is not streamed).
    @Test func aJPEGToTurnOrWithAProfileIsLeftToLibvips() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let turned = scratch.file("turned.jpg")
        try Self.withEXIF("photos/mate-Aqua.jpg", from: "special/exif-orientation-6.jpg", orientation: 8)
            .write(to: URL(fileURLWithPath: turned))
        for path in [turned, Corpus.path("special/exif-orientation-6.jpg")] {
            let descriptor = open(path, O_RDONLY)
            defer { close(descriptor) }
            #expect(try !JPEGDecoder(descriptor: descriptor).header.decodesWithoutLibvips)
            #expect(try BandReader.open(path, streaming: Self.streaming) == nil, "turned upright whole")
        }
        for file in ["special/display-p3.jpg", "photos/plasma-Kite.jpg", "special/grayscale.jpg", "special/cmyk.jpg"] {
            let descriptor = open(Corpus.path(file), O_RDONLY)
            defer { close(descriptor) }
            #expect(try !JPEGDecoder(descriptor: descriptor).header.decodesWithoutLibvips, "\(file)")
        }
    }

    /// Files whose samples libvips converts (another profile, CMYK, grey) or turns upright stay
    /// with libvips.
    @Test(arguments: ["special/display-p3.jpg", "special/cmyk.jpg", "special/grayscale.jpg"])
    func aJPEGWhoseColoursAreConvertedIsLibvipss(_ file: String) throws {
        let reader = try #require(try BandReader.open(Corpus.path(file), streaming: Self.streaming))
        #expect(!reader.decodesWithLibjpeg)
    }

    /// The encoder writes libvips's `jpegsave` bytes, its own EXIF block stripped, for random
    /// images of odd sizes, every quality band, subsampling, progressive, optimised tables,
    /// restart markers, with and without a profile.
    @Test(arguments: 0..<4)
    func theEncoderWritesLibvipssBytes(_ seed: Int) throws {
        var generator = SplitMix(seed: UInt64(seed) &* 7919 &+ 3)
        let profile = try ImageReader.read(Corpus.path("special/display-p3.jpg")).metadata.iccProfile
        #expect(profile != nil)
        for _ in 0..<6 {
            let width = Int.random(in: 1...300, using: &generator), height = Int.random(in: 1...120, using: &generator)
            // Smooth gradients with noise: something between flat and random for the coder.
            let samples = (0..<(width * height * 3)).map { i -> UInt8 in
                let x = (i / 3) % width, y = (i / 3) / width
                return UInt8(truncatingIfNeeded: x * 3 + y * 2 + (i % 3) * 40 + Int.random(in: 0...24, using: &generator))
            }
            var options = EncodeOptions(
                quality: [1, 37, 75, 89, 90, 96, 100].randomElement(using: &generator)!,
                metadata: Bool.random(using: &generator) ? .keepICC : .strip,
                progressive: Bool.random(using: &generator),
                subsampling: ChromaSubsampling.allCases.randomElement(using: &generator)!,
                optimizeCoding: Bool.random(using: &generator))
            if Bool.random(using: &generator) { options.metadata = .keepICC }
            let restart = [0, 0, 1, 5].randomElement(using: &generator)!
            let metadata = Bool.random(using: &generator) ? ImageMetadata(iccProfile: profile, exif: nil, xmp: nil) : nil
            #expect(JPEGEncoder.canEncode(format: .jpeg, bitDepth: 8, channels: 3, options: options))

            let image = try Libvips.withInterpretation(
                try Libvips.image(copying: samples, width: width, height: height, bands: 3, format: VIPS_FORMAT_UCHAR),
                VIPS_INTERPRETATION_sRGB)
            ImageWriter.tag(image, metadata: metadata, options: options)
            let libvips = try ImageFormat.jpeg.encode(image, options: options, restartInterval: restart)

            let encoder = try JPEGEncoder(
                width: width, height: height, options: options, restartInterval: restart, metadata: metadata)
            // In bands of random heights, as a streamed output appends them.
            var row = 0
            while row < height {
                let rows = min(height - row, Int.random(in: 1...20, using: &generator))
                try samples.withUnsafeBytes { try encoder.write($0.baseAddress! + row * width * 3, stride: width * 3, count: rows) }
                row += rows
            }
            let direct = try encoder.finish()
            #expect(direct == libvips, "\(width)x\(height) \(options) restart \(restart): \(direct.count) bytes, libvips \(libvips.count)")
        }
    }

    /// With `keep`, libvips writes an EXIF block of its own: libvips encodes those, and 16-bit
    /// or alpha never reach a JPEG encoder here.
    @Test func onlyAnEightBitJPEGWithoutAllItsMetadataIsEncodedHere() {
        #expect(!JPEGEncoder.canEncode(format: .jpeg, bitDepth: 8, channels: 3, options: EncodeOptions(metadata: .keep)))
        #expect(JPEGEncoder.canEncode(format: .jpeg, bitDepth: 8, channels: 3, options: EncodeOptions(metadata: .keepICC)))
        #expect(!JPEGEncoder.canEncode(format: .png, bitDepth: 8, channels: 3, options: EncodeOptions(metadata: .strip)))
        #expect(!JPEGEncoder.canEncode(format: .jpeg, bitDepth: 8, channels: 4, options: EncodeOptions(metadata: .strip)))
    }

    /// Finishing before the last row is a failure, not a short file.
    @Test func finishingEarlyFails() throws {
        let encoder = try JPEGEncoder(width: 8, height: 8, options: EncodeOptions(metadata: .strip), restartInterval: 0, metadata: nil)
        try [UInt8](repeating: 9, count: 8 * 3 * 4).withUnsafeBytes { try encoder.write($0.baseAddress!, stride: 24, count: 4) }
        #expect(throws: LibvipsFailure.self) { try encoder.finish() }
    }
}
