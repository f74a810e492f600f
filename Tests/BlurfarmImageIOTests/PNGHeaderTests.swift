import BlurfarmCore
import BlurfarmFileFormats
import BlurfarmTestSupport
import Foundation
import Testing

@testable import BlurfarmImageIO

/// A plain PNG's header read without libvips (``PNGHeader``) is libvips's header of the same
/// file, for every colour type, depth, transparency, interlace and metadata chunk; everything
/// else is left to libvips, whose answer (or error) stands.
@Suite struct PNGHeaderTests {
    /// A chunk: its length, type, data and CRC.
    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        return bigEndian(data.count) + body + bigEndian(Int(PNGHeader.crc32(body[...])))
    }

    static func bigEndian(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }

    /// A PNG of `width` × `height` whose rows are all zero (filter 0), in stored deflate
    /// blocks of at most 65,535 bytes, in one `IDAT` chunk (an interlaced one is 1 × 1: its one
    /// pass is that row), with `extra` chunks between the header and the data.
    static func png(
        width: Int = 3, height: Int = 2, depth: UInt8 = 8, colour: UInt8 = 2, interlace: UInt8 = 0, extra: [[UInt8]] = []
    ) -> [UInt8] {
        let samples = [0: 1, 2: 3, 3: 1, 4: 2, 6: 4][Int(colour)]!
        let rowBytes = 1 + (width * samples * Int(depth) + 7) / 8
        let raw = [UInt8](repeating: 0, count: rowBytes * height)
        // zlib: header, stored blocks (the last marked final), Adler-32.
        var (a, b): (UInt32, UInt32) = (1, 0)
        for byte in raw {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        var zlib: [UInt8] = [0x78, 0x01]
        for start in stride(from: 0, to: max(raw.count, 1), by: 65535) {
            let length = min(65535, raw.count - start)
            let final: UInt8 = start + length >= raw.count ? 1 : 0
            zlib += [final, UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8((~length >> 8) & 0xFF)]
            zlib += raw[start..<(start + length)]
        }
        zlib += bigEndian(Int((b << 16) | a))
        let header = bigEndian(width) + bigEndian(height) + [depth, colour, 0, 0, interlace]
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", header) + extra.flatMap { $0 }
            + chunk("IDAT", zlib) + chunk("IEND", [])
    }

    static let palette = chunk("PLTE", [255, 0, 0, 0, 255, 0, 0, 0, 255, 9, 9, 9])
    static let text = chunk("tEXt", Array("Software\u{0}blurfarm".utf8))

    /// Each case: its name, its bytes, and whether the header is read without libvips.
    static let cases: [(String, [UInt8], Bool)] = {
        var cases: [(String, [UInt8], Bool)] = []
        for depth: UInt8 in [1, 2, 4, 8, 16] { cases.append(("grey \(depth)", png(depth: depth, colour: 0), true)) }
        for depth: UInt8 in [8, 16] {
            cases.append(("RGB \(depth)", png(depth: depth, colour: 2), true))
            cases.append(("grey and alpha \(depth)", png(depth: depth, colour: 4), true))
            cases.append(("RGBA \(depth)", png(depth: depth, colour: 6), true))
            cases.append(("grey \(depth), tRNS", png(depth: depth, colour: 0, extra: [chunk("tRNS", [0, 7])]), true))
            cases.append(("RGB \(depth), tRNS", png(depth: depth, colour: 2, extra: [chunk("tRNS", [0, 1, 0, 2, 0, 3])]), true))
        }
        for depth: UInt8 in [1, 2, 4, 8] {
            cases.append(("palette \(depth)", png(depth: depth, colour: 3, extra: [palette]), true))
            cases.append(("palette \(depth), tRNS", png(depth: depth, colour: 3, extra: [palette, chunk("tRNS", [0, 128])]), true))
        }
        cases += [
            ("interlaced", png(width: 1, height: 1, interlace: 1), true),
            ("interlaced palette, tRNS", png(width: 1, height: 1, colour: 3, interlace: 1, extra: [palette, chunk("tRNS", [7])]), true),
            ("wide", png(width: 100_000, height: 3, colour: 0), true),
            ("image data past the bytes read", png(width: 30_000, height: 5, colour: 2), true),
            (
                "metadata chunks",
                png(extra: [
                    chunk("gAMA", bigEndian(45455)), chunk("cHRM", [UInt8](repeating: 1, count: 32)), chunk("sRGB", [0]),
                    chunk("pHYs", bigEndian(2835) + bigEndian(2835) + [1]), chunk("sBIT", [8, 8, 8]),
                    chunk("bKGD", [0, 9, 0, 9, 0, 9]), chunk("tIME", [7, 234, 11, 29, 7, 0, 0]), text,
                    chunk("iTXt", Array("Title\u{0}\u{0}\u{0}\u{0}\u{0}a photo".utf8)),
                ]),
                true
            ),
            // Left to libvips: a profile, EXIF, a chunk it may read otherwise, a broken one.
            ("a profile", png(extra: [chunk("iCCP", Array("sRGB\u{0}\u{0}".utf8) + [0x78, 0x01, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01])]), false),
            ("EXIF, turned", png(extra: [chunk("eXIf", exif(orientation: 6))]), false),
            ("a private chunk", png(extra: [chunk("prVt", [1, 2, 3])]), false),
            ("a palette's tRNS too long", png(colour: 3, extra: [palette, chunk("tRNS", [1, 2, 3, 4, 5])]), false),
            ("grey with an RGB tRNS", png(colour: 0, extra: [chunk("tRNS", [0, 1, 0, 2, 0, 3])]), false),
            ("tRNS with alpha", png(colour: 6, extra: [chunk("tRNS", [0, 1, 0, 2, 0, 3])]), false),
            ("tRNS before PLTE", png(colour: 3, extra: [chunk("tRNS", [7]), palette]), false),
            ("a palette without PLTE", png(colour: 3), false),
            ("PLTE in grey", png(colour: 0, extra: [palette]), false),
            ("two tEXt", png(extra: [text, text]), false),
            ("too wide for libpng", png(width: 1_000_001, height: 1, colour: 0), false),
            ("RGB of depth 4", png(depth: 4, colour: 2), false),
        ]
        var badCRC = png(colour: 0, extra: [chunk("tRNS", [0, 7])])
        badCRC[33 + 10] ^= 0xFF  // the tRNS chunk's CRC (after the signature and IHDR)
        cases.append(("tRNS of a wrong CRC", badCRC, false))
        var badHeader = png()
        badHeader[29] ^= 0xFF  // IHDR's CRC
        cases.append(("IHDR of a wrong CRC", badHeader, false))
        return cases
    }()

    /// A little-endian TIFF EXIF block with one tag, orientation.
    static func exif(orientation: UInt8) -> [UInt8] {
        [0x49, 0x49, 0x2A, 0x00, 0x08, 0x00, 0x00, 0x00, 0x01, 0x00, 0x12, 0x01, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00,
         orientation, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]
    }

    @Test(arguments: cases.indices) func aPlainPNGsHeaderIsLibvipssAndAnyOtherIsLeftToIt(_ index: Int) throws {
        let (name, bytes, plain) = Self.cases[index]
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let path = scratch.file("case.png")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        HeaderBesideLibvips.expect(path, name, plain: plain) { PNGHeader.read($0) != nil }
    }

    /// The corpus's PNGs, and one of each depth and alpha the encoder writes.
    @Test func theCorpussAndTheEncodersPNGsHeadersAreLibvipss() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        var paths = ["special/deep-16bit.png", "special/alpha-garbage-under-transparent.png", "special/not-an-image.png"].map(Corpus.path)
        let image = PixelBuffer(rect: Rect(width: 5, height: 4))
        for (depth, alpha) in [(8, false), (8, true), (16, false), (16, true)] {
            let path = scratch.file("\(depth)-\(alpha).png")
            let encoded = try ImageWriter.encode(
                image, extension: "png", named: path, sourceBitDepth: depth, sourceHadAlpha: alpha, metadata: nil,
                options: EncodeOptions(metadata: .strip, bitDepth: depth))
            try Data(encoded.bytes).write(to: URL(fileURLWithPath: path))
            paths.append(path)
        }
        // The corpus's (a profile and EXIF each, and a file that is not a PNG) are libvips's;
        // the encoder's are plain.
        for (index, path) in paths.enumerated() {
            HeaderBesideLibvips.expect(path, path, plain: index >= 3) { PNGHeader.read($0) != nil }
        }
    }

    /// The loader a PNG's or a JPEG's signature names (``InputFile/signatureLoader``) is the one
    /// libvips's search over every loader's test names, for every file of the corpus, for files
    /// that only start as a PNG or a JPEG does, and for this suite's PNGs; any other file has
    /// none, and libvips's search names it. The search answers with a nickname, the name of the
    /// loader that then opens the file.
    @Test func theSignaturesLoaderIsLibvipssSearchs() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        var paths: [String] = []
        let root = Corpus.path("")
        for case let relative as String in FileManager.default.enumerator(atPath: root)! where !relative.hasPrefix(".") {
            var folder: ObjCBool = false
            if FileManager.default.fileExists(atPath: root + relative, isDirectory: &folder), !folder.boolValue {
                paths.append(root + relative)
            }
        }
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        let made: [(String, [UInt8])] =
            [
                ("png-then-garbage", signature + [UInt8](repeating: 7, count: 100)),
                ("png-signature-cut", Array(signature.prefix(7))), ("jpeg-then-garbage", [0xFF, 0xD8] + [UInt8](repeating: 1, count: 100)),
                ("jpeg-two-bytes", [0xFF, 0xD8]), ("empty", []), ("text", Array("P3\n1 1\n255\n0 0 0\n".utf8)),
            ] + Self.cases.enumerated().map { ("case-\($0.offset)", $0.element.1) }
        for (name, bytes) in made {
            let path = scratch.file(name)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            paths.append(path)
        }
        var named = 0, opened = 0
        for path in paths {
            let file = try InputFile(path)
            defer { file.close() }
            let searched = Libvips.loaderName(forFile: path)
            if let loader = file.signatureLoader {
                named += 1
                #expect(loader == searched, "\(path)")
            }
            // The search names the loader by its nickname, and that loader is the one called.
            if let searched, let image = try? Libvips.open(path, loader: searched, sequential: true) {
                opened += 1
                #expect(image.loader == searched, "\(path)")
            }
        }
        #expect(opened >= 20, "\(opened) of \(paths.count) opened")
        // The corpus's JPEGs and PNGs, and the files made to start as one.
        #expect(named >= 20 + Self.cases.count, "\(named) of \(paths.count)")
    }
}
