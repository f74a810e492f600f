/// Names (of files, from plugins, from anywhere) as they are shown to people: on one line,
/// unable to forge another line or to turn the terminal's text around. Control characters,
/// Unicode line and paragraph separators and bidirectional overrides are escaped (`\n`, `\t`,
/// `\r`, `\u{202E}`) and bytes that are not UTF-8 are shown as `\xE9`, whether given as bytes or
/// carried in a string (``PathEncoding``: U+F7E9 stands for the byte 0xE9). Escaping text that is
/// escaped already changes nothing (a message may pass through twice).
public enum ShownName {
    /// `text` with its control characters escaped.
    public static func of(_ text: String) -> String {
        // Printable ASCII, most names, is shown as it is, without asking each scalar's Unicode
        // category (showing names was 13% of a 30,000-output `check --status`).
        if text.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) { return text }
        var shown = ""
        for scalar in text.unicodeScalars {
            if let byte = PathEncoding.byte(escapedBy: scalar) {
                shown += "\\x" + hex(byte, digits: 2)
            } else {
                shown += escaped(scalar)
            }
        }
        return shown
    }

    /// The name whose bytes are `bytes`: valid UTF-8 as ``of(_:)`` shows it, other bytes as `\xNN`
    /// (and a real U+F7E9 as `\u{F7E9}`: here it is not an escaped byte).
    public static func of(bytes: [UInt8]) -> String {
        var shown = ""
        UTF8Parts.forEach(in: bytes) { part in
            switch part {
            case .scalar(let scalar): shown += escaped(scalar)
            case .byte(let byte): shown += "\\x" + hex(byte, digits: 2)
            }
        }
        return shown
    }

    private static func escaped(_ scalar: Unicode.Scalar) -> String {
        switch scalar {
        case "\n": return "\\n"
        case "\t": return "\\t"
        case "\r": return "\\r"
        case "\u{2028}", "\u{2029}", "\u{202A}"..."\u{202E}", "\u{2066}"..."\u{2069}", PathEncoding.escapes:
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
