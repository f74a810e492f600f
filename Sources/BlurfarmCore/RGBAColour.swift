/// A colour with alpha written `#rrggbbaa` (or `#rrggbb`, opaque): sRGB-encoded channels and a
/// straight (not premultiplied) alpha, each 0–255. The value of a filter parameter of kind
/// ``ParameterDescriptor/Kind/colour`` (frost's `tint`).
public struct RGBAColour: Hashable, Sendable, CustomStringConvertible {
    public var red: UInt8
    public var green: UInt8
    public var blue: UInt8
    public var alpha: UInt8

    /// Opaque white, the default background of formats without alpha.
    public static let white = RGBAColour(red: 255, green: 255, blue: 255)

    public init(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    /// Parses `#rrggbb` or `#rrggbbaa` (hexadecimal, either case); `nil` for anything else.
    public init?(_ text: String) {
        let b = Array(text.utf8)
        guard b.count == 7 || b.count == 9, b[0] == UInt8(ascii: "#") else { return nil }
        var v: [UInt8] = []
        for k in stride(from: 1, to: b.count, by: 2) {
            guard let hi = Self.digit(b[k]), let lo = Self.digit(b[k + 1]) else { return nil }
            v.append(hi << 4 | lo)
        }
        self.init(red: v[0], green: v[1], blue: v[2], alpha: v.count == 4 ? v[3] : 255)
    }

    private static func digit(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// `#rrggbb` when opaque, else `#rrggbbaa`, lower case: what ``init(_:)`` reads back.
    public var description: String {
        "#" + (alpha == 255 ? [red, green, blue] : [red, green, blue, alpha]).map { x in
            let s = String(x, radix: 16)
            return s.count == 1 ? "0" + s : s
        }.joined()
    }
}
