import BlurfarmCore
import BlurfarmTestSupport

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
