import BlurfarmCore
import Foundation
import PropertyBased
import Testing

/// ThumbHash against the reference (evanw/thumbhash's `js/thumbhash.js` at a652ce6e, run in
/// Node on the same synthetic images): the same hash bytes, and the same decoded pixels.
@Suite struct ThumbHashTests {
    /// The synthetic image the reference was run on: each sample a small formula of x and y.
    static func image(width: Int, height: Int, alpha: Bool) -> [UInt8] {
        var rgba: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width {
                rgba += [
                    UInt8((x * 7 + y * 3) % 256), UInt8((x * x + y * 5) % 256), UInt8(x * y % 256),
                    alpha ? UInt8((x * 11 + y * 13) % 256) : 255,
                ]
            }
        }
        return rgba
    }

    /// 32-bit FNV-1a, the digest the reference's decoded pixels were summed with.
    static func fnv1a(_ bytes: [UInt8]) -> UInt32 {
        bytes.reduce(0x811C_9DC5 as UInt32) { ($0 ^ UInt32($1)) &* 0x0100_0193 }
    }

    /// `rgbaToThumbHash` (base64 of its bytes) and `thumbHashToRGBA` (size, FNV-1a of its
    /// pixels), as the reference gives them: landscape, portrait, the largest, one pixel, alpha.
    static let reference: [(width: Int, height: Int, alpha: Bool, hash: String, decodedWidth: Int, decodedHeight: Int, digest: UInt32)] = [
        (37, 23, false, "3BgKJIgAR4dEeZiGeYZJXw6whA==", 32, 18, 0x3c11d326),
        (23, 37, false, "3QgKHA5QFXVomIZ4eIjYWA9Kiw==", 18, 32, 0xa3e46bd9),
        (100, 100, false, "H/gBDwJDRGBFSBozJQMlNlaE5fy5ZY8E", 32, 32, 0x91710727),
        (1, 1, false, "AAgCBwAAAAAAAAAAAAAAAAAAAAAAAAAA", 32, 32, 0x766525c5),
        (60, 45, true, "XwiGDIIHdEBSQ3V298/I8rN3dZOXV1d6AA==", 32, 26, 0x449730b5),
        (8, 90, true, "HBmGGQYHU2ApSVnPeJY2BHOHVYchZgc=", 6, 32, 0xf8964d89),
    ]

    @Test(arguments: reference.indices)
    func encodesAsTheReference(_ index: Int) {
        let vector = Self.reference[index]
        let hash = ThumbHash.encode(
            width: vector.width, height: vector.height,
            rgba: Self.image(width: vector.width, height: vector.height, alpha: vector.alpha))
        #expect(Data(hash).base64EncodedString() == vector.hash)
    }

    @Test(arguments: reference.indices)
    func decodesAsTheReference(_ index: Int) throws {
        let vector = Self.reference[index]
        let hash = Array(try #require(Data(base64Encoded: vector.hash)))
        let decoded = try #require(ThumbHash.decode(hash))
        #expect(decoded.width == vector.decodedWidth && decoded.height == vector.decodedHeight)
        #expect(decoded.rgba.count == decoded.width * decoded.height * 4)
        #expect(Self.fnv1a(decoded.rgba) == vector.digest)
    }

    /// Every prefix of a hash shorter than it is refused, never read past.
    @Test func aTruncatedHashIsRefused() throws {
        for vector in Self.reference {
            let hash = Array(try #require(Data(base64Encoded: vector.hash)))
            for length in 0..<hash.count - 1 { #expect(ThumbHash.decode(Array(hash.prefix(length))) == nil, "\(length)") }
        }
        #expect(ThumbHash.decode([0, 0, 0, 0, 0]) == nil)  // no luminance term on the short side
    }

    /// A random opaque image decodes to a placeholder whose mean colour is within 8 levels of
    /// the image's (the DC terms are the averages, 6 bits each), and the orientation is kept.
    /// From 8 pixels a side, as the map's thumbnails of any but the thinnest inputs are: on a
    /// side of a pixel or two the cosines the hash keeps (5 or 7 a side) alias to copies of the
    /// mean, whose peaks the decoder clamps, so the mean moves (a 1×1 image of (40, 40, 124)
    /// comes back as (73, 72, 96), the reference's encoder and decoder alike).
    @Test func theMeanColourSurvivesARoundTrip() async {
        let images = zip(Gen.int(in: 8...100), Gen.int(in: 8...100), Gen<UInt64>.value(in: 0...UInt64.max))
        await propertyCheck(count: 200, input: images) { width, height, seed in
            var state = seed | 1
            // Smooth noise around a random colour: what a downscaled photo looks like.
            func next() -> Int {
                state ^= state << 13; state ^= state >> 7; state ^= state << 17
                return Int(state % 64)
            }
            let base = (0..<3).map { _ in next() * 3 }
            var rgba: [UInt8] = []
            for _ in 0..<width * height { rgba += base.map { UInt8($0 + next()) } + [255] }
            let hash = ThumbHash.encode(width: width, height: height, rgba: rgba)
            guard let decoded = ThumbHash.decode(hash) else {
                Issue.record("\(width)x\(height): the hash does not decode")
                return
            }
            for channel in 0..<3 {
                let input = Self.mean(rgba, channel: channel), output = Self.mean(decoded.rgba, channel: channel)
                #expect(abs(input - output) <= 8, "\(width)x\(height) channel \(channel): \(input) vs \(output)")
            }
            #expect(decoded.rgba.enumerated().allSatisfy { $0.offset % 4 != 3 || $0.element == 255 })
            if width > 2 * height { #expect(decoded.width > decoded.height) }
            if height > 2 * width { #expect(decoded.height > decoded.width) }
        }
    }

    /// The mean of one channel of 8-bit RGBA samples.
    static func mean(_ rgba: [UInt8], channel: Int) -> Double {
        let values = stride(from: channel, to: rgba.count, by: 4).map { Double(rgba[$0]) }
        return values.reduce(0, +) / Double(values.count)
    }
}
