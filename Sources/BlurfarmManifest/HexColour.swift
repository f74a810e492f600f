/// An opaque sRGB colour written `#rrggbb` (hexadecimal, either case; printed lower case).
public struct HexColour: Hashable, Sendable, CustomStringConvertible {
    /// The channels, sRGB-encoded, 0–255.
    public var red: UInt8
    /// See ``red``.
    public var green: UInt8
    /// See ``red``.
    public var blue: UInt8

    /// The colour with these channels.
    public init(red: UInt8, green: UInt8, blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }

    /// Parses `#rrggbb`; `nil` for anything else.
    public init?(_ text: String) {
        let b = Array(text.utf8)
        guard b.count == 7, b[0] == UInt8(ascii: "#") else { return nil }
        var v: [UInt8] = []
        for k in stride(from: 1, to: 7, by: 2) {
            guard let hi = hexValue(b[k]), let lo = hexValue(b[k + 1]) else { return nil }
            v.append(hi << 4 | lo)
        }
        self.init(red: v[0], green: v[1], blue: v[2])
    }

    /// White, the background JPEG outputs are flattened onto by default.
    public static let white = HexColour(red: 255, green: 255, blue: 255)

    /// `#rrggbb`, lower case.
    public var description: String {
        func hex(_ x: UInt8) -> String {
            let s = String(x, radix: 16)
            return s.count == 1 ? "0" + s : s
        }
        return "#" + hex(red) + hex(green) + hex(blue)
    }
}
