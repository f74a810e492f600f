import BlurfarmCore
import Foundation

/// The exact sRGB transfer functions (IEC 61966-2-1), in the working precision.
public enum SRGB {
    /// Encoded sRGB value (0...1) to linear light.
    @inlinable
    public static func toLinear(_ c: Float) -> Float {
        c <= 0.04045 ? c / 12.92 : powf((c + 0.055) / 1.055, 2.4)
    }

    /// Linear light (0...1) to an encoded sRGB value.
    @inlinable
    public static func toEncoded(_ l: Float) -> Float {
        l <= 0.0031308 ? l * 12.92 : 1.055 * powf(l, 1 / 2.4) - 0.055
    }
}

/// A pointwise stage that moves premultiplied pixels between sRGB-encoded values and linear
/// light: unpremultiply, apply the transfer function to red, green and blue, premultiply.
/// The `linear` colour mode puts one at each end of a chain.
public struct ColourConversion: UniformReachFilter {
    public enum Direction: String, Sendable {
        case toLinear = "to-linear"
        case toEncoded = "to-srgb"
    }

    public let direction: Direction

    public init(_ direction: Direction) { self.direction = direction }

    public var spec: FilterSpec { FilterSpec(name: direction.rawValue, arguments: [:]) }
    public var reach: Reach { .zero }

    public func apply(input: PixelBuffer, output: PixelBuffer, image _: Rect) {
        let out = output.rect
        let n = output.channels
        precondition(input.channels == n && input.rect.contains(out))
        let toLinear = direction == .toLinear
        input.withUnsafePixels { src in
            output.withUnsafePixels { dst in
                for y in out.y..<out.maxY {
                    var p = src + (y - input.rect.y) * input.rowStride + (out.x - input.rect.x) * n
                    var q = dst + (y - out.y) * output.rowStride
                    for _ in 0..<out.width {
                        let a: Float = n == 4 ? p[3] : 1
                        if a > 0 {
                            for c in 0..<3 {
                                let v = a == 1 ? p[c] : p[c] / a
                                q[c] = (toLinear ? SRGB.toLinear(v) : SRGB.toEncoded(v)) * a
                            }
                        } else {
                            q[0] = 0; q[1] = 0; q[2] = 0
                        }
                        if n == 4 { q[3] = a }
                        p += n
                        q += n
                    }
                }
            }
        }
    }
}
