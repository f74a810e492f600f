import BlurfarmCore

/// A small deterministic random generator for test images (SplitMix64).
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

enum TestImages {
    /// Random premultiplied pixels; about a quarter fully transparent, a quarter opaque.
    /// `opaque`: a 3-channel buffer (alpha 1 everywhere, not stored).
    static func random(width: Int, height: Int, seed: UInt64, opaque: Bool = false) -> PixelBuffer {
        var rng = SplitMix(seed: seed)
        let image = PixelBuffer(rect: Rect(width: width, height: height), channels: opaque ? 3 : 4)
        for y in 0..<height {
            for x in 0..<width {
                var alpha: Float = 1
                if !opaque {
                    alpha = switch rng.next() % 4 {
                    case 0: 0
                    case 1: 1
                    default: Float(rng.next() % 256) / 255
                    }
                }
                let colour = SIMD3<Float>(
                    Float(rng.next() % 256) / 255, Float(rng.next() % 256) / 255, Float(rng.next() % 256) / 255)
                image[x, y] = SIMD4(colour * alpha, alpha)
            }
        }
        return image
    }
}
