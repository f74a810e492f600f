import BlurfarmCore
import BlurfarmFileFormats
import BlurfarmTestSupport
import Foundation
import Testing

@testable import BlurfarmImageIO

/// A plain WebP's header read without libvips (``WebPHeader``) is libvips's header of the same
/// file, lossy and lossless, with alpha and without; an extended or damaged one is left to
/// libvips, whose answer (or error) stands.
@Suite struct WebPHeaderTests {
    /// A WebP of `width` × `height` from the encoder, with some pixels translucent when
    /// `alpha`.
    static func encoded(width: Int, height: Int, lossless: Bool, alpha: Bool) throws -> [UInt8] {
        let image = PixelBuffer(rect: Rect(width: width, height: height))
        for y in 0..<height {
            for x in 0..<width {
                let a: Float = alpha && (x + y) % 2 == 0 ? 0.5 : 1
                image[x, y] = SIMD4(Float(x % 7) / 7 * a, Float(y % 5) / 5 * a, 0.3 * a, a)
            }
        }
        return try ImageWriter.encode(
            image, extension: "webp", named: "case.webp", sourceBitDepth: 8, sourceHadAlpha: alpha, metadata: nil,
            options: EncodeOptions(lossless: lossless, metadata: .strip, bitDepth: 8)
        ).bytes
    }

    /// Each case: its name, its bytes, and whether the header is read without libvips.
    static func cases() throws -> [(String, [UInt8], Bool)] {
        var cases: [(String, [UInt8], Bool)] = []
        for (width, height) in [(1, 1), (5, 4), (301, 7)] {
            cases.append(("lossy \(width)x\(height)", try encoded(width: width, height: height, lossless: false, alpha: false), true))
            cases.append(("lossless \(width)x\(height)", try encoded(width: width, height: height, lossless: true, alpha: false), true))
            cases.append(("lossless, alpha, \(width)x\(height)", try encoded(width: width, height: height, lossless: true, alpha: true), true))
            // Alpha beside lossy data: VP8X, ALPH, VP8.
            cases.append(("lossy, alpha, \(width)x\(height)", try encoded(width: width, height: height, lossless: false, alpha: true), true))
        }
        // libvips writes VP8X before the image (its flags say alpha or nothing): the image's
        // chunk alone is a file of the simple format.
        let lossy = try encoded(width: 5, height: 4, lossless: false, alpha: false)
        let lossless = try encoded(width: 5, height: 4, lossless: true, alpha: true)
        #expect(String(decoding: lossy[12..<16], as: UTF8.self) == "VP8X" && String(decoding: lossy[30..<34], as: UTF8.self) == "VP8 ")
        #expect(String(decoding: lossless[30..<34], as: UTF8.self) == "VP8L")
        func simple(_ extended: [UInt8]) -> [UInt8] {
            let chunk = Array(extended[30...])
            let size = 4 + chunk.count
            return Array("RIFF".utf8) + (0..<4).map { UInt8(truncatingIfNeeded: size >> (8 * $0)) } + Array("WEBP".utf8) + chunk
        }
        cases.append(("simple lossy", simple(lossy), true))
        cases.append(("simple lossless, alpha", simple(lossless), true))
        // The image's first bytes are at 38 (after RIFF, VP8X, the image's chunk header).
        func changed(_ bytes: [UInt8], at: Int, _ change: (inout UInt8) -> Void) -> [UInt8] {
            var bytes = bytes
            change(&bytes[at])
            return bytes
        }
        cases += [
            ("a byte after the RIFF", lossy + [0], false),
            ("not a key frame", changed(lossy, at: 38) { $0 |= 1 }, false),
            ("a frame not shown", changed(lossy, at: 38) { $0 &= ~0x10 }, false),
            ("no start code", changed(lossy, at: 42) { $0 = 0x02 }, false),
            ("a canvas wider than the image", changed(lossy, at: 24) { $0 += 1 }, false),
            ("VP8X saying alpha of a lossy image without ALPH", changed(lossy, at: 20) { $0 = 0x10 }, false),
            ("VP8X saying EXIF", changed(lossy, at: 20) { $0 = 0x08 }, false),
            ("lossless of version 1", changed(lossless, at: 42) { $0 |= 0x20 }, false),
            ("lossless without its signature", changed(lossless, at: 38) { $0 = 0x2E }, false),
            ("cut short", Array(lossy.dropLast(6)), false),
        ]
        cases.append(("the corpus's, with XMP", try [UInt8](Data(contentsOf: URL(fileURLWithPath: Corpus.path("special/kite.webp")))), false))
        return cases
    }

    @Test func aPlainWebPsHeaderIsLibvipssAndAnyOtherIsLeftToIt() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        for (name, bytes, plain) in try Self.cases() {
            let path = scratch.file("case.webp")
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            HeaderBesideLibvips.expect(path, name, plain: plain) { WebPHeader.read($0) != nil }
        }
    }
}
