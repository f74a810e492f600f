/// Finds an object key given twice in JSON text. RFC 8259 leaves such a document's meaning to
/// the reader: Foundation's decoder keeps the first value, Python, JavaScript and jq the last,
/// so one region file would blur 10 columns here and 300 in a Python script checking it. A
/// file that says two things is refused instead (docs/privacy.md).
///
/// Keys are compared as the text they decode to (`"\u0062oxes"` is `"boxes"`). Text that is
/// not JSON is left to the decoder, which names where it breaks.
public enum JSONDuplicateKeys {
    /// The deepest nesting looked into: a region file is three levels deep; deeper text is left
    /// to the decoder, which refuses it by its own limit.
    static let deepest = 256

    /// The JSON path of the first key given twice in one object of `bytes` (`$.boxes[1].x`),
    /// or nil when there is none (or the text is not JSON).
    public static func first(in bytes: [UInt8]) -> String? {
        var scanner = Scanner(bytes: bytes)
        return try? scanner.value(path: "$", depth: 0)
    }

    /// The text is not JSON: stop looking.
    private struct NotJSON: Error {}

    private struct Scanner {
        let bytes: [UInt8]
        var at = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        mutating func skipSpace() {
            while at < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[at]) { at += 1 }
        }

        /// Reads one value at `path`; the path of a duplicate key in it, if any.
        mutating func value(path: String, depth: Int) throws(NotJSON) -> String? {
            guard depth < JSONDuplicateKeys.deepest else { throw NotJSON() }
            skipSpace()
            guard at < bytes.count else { throw NotJSON() }
            switch bytes[at] {
            case UInt8(ascii: "{"):
                at += 1
                var seen: Set<String> = []
                skipSpace()
                if at < bytes.count, bytes[at] == UInt8(ascii: "}") {
                    at += 1
                    return nil
                }
                while true {
                    skipSpace()
                    guard at < bytes.count, bytes[at] == UInt8(ascii: "\"") else { throw NotJSON() }
                    let key = try string()
                    let inner = JSONPath.appending(key: key, to: path)
                    if !seen.insert(key).inserted { return inner }
                    skipSpace()
                    guard at < bytes.count, bytes[at] == UInt8(ascii: ":") else { throw NotJSON() }
                    at += 1
                    if let found = try value(path: inner, depth: depth + 1) { return found }
                    skipSpace()
                    guard at < bytes.count else { throw NotJSON() }
                    if bytes[at] == UInt8(ascii: ",") {
                        at += 1
                    } else if bytes[at] == UInt8(ascii: "}") {
                        at += 1
                        return nil
                    } else {
                        throw NotJSON()
                    }
                }
            case UInt8(ascii: "["):
                at += 1
                skipSpace()
                if at < bytes.count, bytes[at] == UInt8(ascii: "]") {
                    at += 1
                    return nil
                }
                var index = 0
                while true {
                    if let found = try value(path: path + "[\(index)]", depth: depth + 1) { return found }
                    index += 1
                    skipSpace()
                    guard at < bytes.count else { throw NotJSON() }
                    if bytes[at] == UInt8(ascii: ",") {
                        at += 1
                    } else if bytes[at] == UInt8(ascii: "]") {
                        at += 1
                        return nil
                    } else {
                        throw NotJSON()
                    }
                }
            case UInt8(ascii: "\""):
                _ = try string()
                return nil
            default:
                // A number or a literal: the bytes up to the next delimiter (the decoder checks them).
                let start = at
                while at < bytes.count, !" \t\r\n,]}".utf8.contains(bytes[at]) { at += 1 }
                if at == start { throw NotJSON() }
                return nil
            }
        }

        /// Reads a string at `at` (its opening quote) and returns what it decodes to.
        mutating func string() throws(NotJSON) -> String {
            at += 1
            var scalars = String.UnicodeScalarView()
            var pendingHigh: UInt32?
            var raw: [UInt8] = []
            func flushRaw() throws(NotJSON) {
                guard !raw.isEmpty else { return }
                guard let text = String(validating: raw, as: UTF8.self) else { throw NotJSON() }
                scalars.append(contentsOf: text.unicodeScalars)
                raw.removeAll()
            }
            while at < bytes.count {
                let byte = bytes[at]
                at += 1
                switch byte {
                case UInt8(ascii: "\""):
                    try flushRaw()
                    if pendingHigh != nil { throw NotJSON() }
                    return String(scalars)
                case UInt8(ascii: "\\"):
                    try flushRaw()
                    guard at < bytes.count else { throw NotJSON() }
                    let escape = bytes[at]
                    at += 1
                    if escape == UInt8(ascii: "u") {
                        guard at + 4 <= bytes.count, let unit = UInt32(String(decoding: bytes[at..<at + 4], as: UTF8.self), radix: 16)
                        else { throw NotJSON() }
                        at += 4
                        if let high = pendingHigh {
                            guard (0xDC00...0xDFFF).contains(unit) else { throw NotJSON() }
                            pendingHigh = nil
                            scalars.append(Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (unit - 0xDC00))!)
                        } else if (0xD800...0xDBFF).contains(unit) {
                            pendingHigh = unit
                        } else if let scalar = Unicode.Scalar(unit) {
                            scalars.append(scalar)
                        } else {
                            throw NotJSON()
                        }
                        continue
                    }
                    if pendingHigh != nil { throw NotJSON() }
                    let simple: [UInt8: Unicode.Scalar] = [
                        UInt8(ascii: "\""): "\"", UInt8(ascii: "\\"): "\\", UInt8(ascii: "/"): "/", UInt8(ascii: "b"): "\u{8}",
                        UInt8(ascii: "f"): "\u{C}", UInt8(ascii: "n"): "\n", UInt8(ascii: "r"): "\r", UInt8(ascii: "t"): "\t",
                    ]
                    guard let scalar = simple[escape] else { throw NotJSON() }
                    scalars.append(scalar)
                default:
                    if pendingHigh != nil { throw NotJSON() }
                    raw.append(byte)
                }
            }
            throw NotJSON()
        }
    }
}
