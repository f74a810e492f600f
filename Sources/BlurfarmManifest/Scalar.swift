/// A one-line value as written: its text after quotes and escapes are removed, and how it
/// was quoted.
///
/// The parser does not decide types: the decoder reads a scalar as the type a key expects.
/// Only a `plain` (unquoted) scalar can be a number or a boolean; a quoted one is always a
/// string, so `"80"` is the text `80` and never the integer.
public struct Scalar: Hashable, Sendable {
    /// How a scalar was written.
    public enum Style: Hashable, Sendable {
        /// Unquoted: `photos/*.jpg`, `12`, `true`.
        case plain
        /// `'single-quoted'`: taken literally, no escapes.
        case singleQuoted
        /// `"double-quoted"`: with the escapes `\"` `\\` `\n` `\t` `\u{…}`.
        case doubleQuoted
    }

    /// The value's text, quotes removed and escapes replaced.
    public let text: String
    /// How the text was quoted.
    public let style: Style
    /// Where the text's first Unicode scalar stands: the column after the opening quote for
    /// quoted scalars.
    let contentColumn: Int
    /// For a double-quoted scalar with escapes: the column of each of `text`'s Unicode
    /// scalars in the source line; `nil` when text scalar `i` stands at `contentColumn + i`.
    let columns: [Int]?

    init(text: String, style: Style, contentColumn: Int, columns: [Int]? = nil) {
        self.text = text
        self.style = style
        self.contentColumn = contentColumn
        self.columns = columns
    }

    /// The column of the Unicode scalar at `offset` in `text` (counted in Unicode scalars),
    /// for diagnostics that point inside a value; `offset == text.unicodeScalars.count`
    /// gives the column just after the text.
    public func column(ofScalarAt offset: Int) -> Int {
        if let columns {
            if offset < columns.count { return columns[offset] }
            return (columns.last ?? contentColumn - 1) + 1
        }
        return contentColumn + offset
    }

    /// The value as an integer: a plain scalar of an optional `-` and decimal digits that
    /// fits in an `Int`.
    public var integerValue: Int? {
        guard style == .plain, NumberSyntax.isInteger(text) else { return nil }
        return Int(text)
    }

    /// The value as a decimal number: a plain integer, or a plain decimal such as `2.5`,
    /// `-0.25`, `1e-3`. Never NaN or infinite.
    public var numberValue: Double? {
        guard style == .plain, NumberSyntax.isInteger(text) || NumberSyntax.isDecimal(text),
            let value = Double(text), value.isFinite
        else { return nil }
        return value
    }

    /// The value as a boolean: the plain scalars `true` and `false`, nothing else.
    public var booleanValue: Bool? {
        guard style == .plain else { return nil }
        switch text {
        case "true": return true
        case "false": return false
        default: return nil
        }
    }
}

extension Scalar {
    /// `text` read as a number of the manifest (``numberValue`` of a plain scalar): what the
    /// command line's numbers that stand for a manifest's take (`apply --region`).
    public static func number(_ text: String) -> Double? {
        Scalar(text: text, style: .plain, contentColumn: 1).numberValue
    }
}

/// The number syntax of the manifest language.
enum NumberSyntax {
    /// `-?[0-9]+`
    static func isInteger(_ text: String) -> Bool {
        var utf8 = Substring(text).utf8[...]
        if utf8.first == UInt8(ascii: "-") { utf8 = utf8.dropFirst() }
        return !utf8.isEmpty && utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }

    /// `-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?` with a fraction or an exponent.
    static func isDecimal(_ text: String) -> Bool {
        let b = Array(text.utf8)
        var i = 0
        func digits() -> Bool {
            let start = i
            while i < b.count, b[i] >= 0x30, b[i] <= 0x39 { i += 1 }
            return i > start
        }
        if i < b.count, b[i] == UInt8(ascii: "-") { i += 1 }
        guard digits() else { return false }
        var hasFraction = false, hasExponent = false
        if i < b.count, b[i] == UInt8(ascii: ".") {
            i += 1
            guard digits() else { return false }
            hasFraction = true
        }
        if i < b.count, b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E") {
            i += 1
            if i < b.count, b[i] == UInt8(ascii: "-") || b[i] == UInt8(ascii: "+") { i += 1 }
            guard digits() else { return false }
            hasExponent = true
        }
        return i == b.count && (hasFraction || hasExponent)
    }
}
