/// Names (of files, from plugins, from anywhere) as they are shown to people: on one line,
/// unable to forge another line or to turn the terminal's text around. Control characters,
/// Unicode line and paragraph separators and bidirectional overrides are escaped (`\n`, `\t`,
/// `\r`, `\u{202E}`) and bytes that are not UTF-8 are shown as `\xE9`. Escaping text that is
/// escaped already changes nothing (a message may pass through twice).
public enum ShownName {
    /// `text` with its control characters escaped.
    public static func of(_ text: String) -> String {
        var shown = ""
        for scalar in text.unicodeScalars { shown += escaped(scalar) }
        return shown
    }

    /// The name whose bytes are `bytes`: valid UTF-8 as ``of(_:)`` shows it, other bytes as `\xNN`.
    public static func of(bytes: [UInt8]) -> String {
        var shown = ""
        var rest = bytes[...]
        while !rest.isEmpty {
            // The longest valid prefix is decoded; the byte that stops it is shown in hex.
            var iterator = rest.makeIterator()
            var decoder = UTF8()
            var consumed = 0
            loop: while true {
                switch decoder.decode(&iterator) {
                case .scalarValue(let scalar):
                    shown += escaped(scalar)
                    consumed += UTF8.width(scalar)
                case .emptyInput:
                    return shown
                case .error:
                    break loop
                }
            }
            rest = rest.dropFirst(consumed)
            shown += "\\x" + hex(rest.first!, digits: 2)
            rest = rest.dropFirst()
        }
        return shown
    }

    private static func escaped(_ scalar: Unicode.Scalar) -> String {
        switch scalar {
        case "\n": return "\\n"
        case "\t": return "\\t"
        case "\r": return "\\r"
        case "\u{2028}", "\u{2029}", "\u{202A}"..."\u{202E}", "\u{2066}"..."\u{2069}":
            return "\\u{" + hex(scalar.value, digits: 4) + "}"
        default:
            if scalar.properties.generalCategory == .control {
                return "\\u{" + hex(scalar.value, digits: 4) + "}"
            }
            return String(scalar)
        }
    }

    private static func hex(_ value: some BinaryInteger, digits: Int) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
