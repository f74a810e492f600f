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
public struct ColourConversion: Filter {
    public enum Direction: String, Sendable {
        case toLinear = "to-linear"
        case toEncoded = "to-srgb"
    }

    public let direction: Direction

    public init(_ direction: Direction) { self.direction = direction }

    public var spec: FilterSpec { FilterSpec(name: direction.rawValue, arguments: [:]) }
    public var reach: Reach { .zero }

    public func apply(input: PixelBuffer, output: PixelBuffer) {
        let out = output.rect
        let toLinear = direction == .toLinear
        for y in out.y..<out.maxY {
            for x in out.x..<out.maxX {
                let p = input[x, y]
                let a = p[3]
                guard a > 0 else {
                    output[x, y] = .zero
                    continue
                }
                var q = p / a
                for c in 0..<3 { q[c] = (toLinear ? SRGB.toLinear(q[c]) : SRGB.toEncoded(q[c])) * a }
                q[3] = a
                output[x, y] = q
            }
        }
    }
}
