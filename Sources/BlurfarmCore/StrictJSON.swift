/// Checks that text is JSON as RFC 8259 says it, and that no object gives a key twice, before a
/// decoder reads it: Foundation's decoder takes text that is not JSON (a comma before a closing
/// bracket), and a malformed number where it reads no number; Python's `json`, jq and a
/// browser refuse both. And RFC 8259 leaves a document with a key given twice to the reader:
/// Foundation's decoder keeps the first value, Python, JavaScript and jq the last, so one
/// region file would blur 10 columns here and 300 in a Python script checking it. A file that
/// other readers would refuse, or read otherwise, is refused (docs/privacy.md).
///
/// Keys are compared as the text they decode to (`"\u0062oxes"` is `"boxes"`).
public enum StrictJSON {
    /// The deepest nesting read: a region file is three levels deep.
    static let deepest = 256

    /// What is wrong with `bytes` as JSON: the JSON path where it breaks (`$.boxes[1].x`) and
    /// why, or nil when it is JSON with no key given twice.
    public static func problem(in bytes: [UInt8]) -> (path: String, message: String)? {
        var scanner = Scanner(bytes: bytes)
        do throws(Broken) {
            try scanner.value(path: "$", depth: 0)
            scanner.skipSpace()
            guard scanner.at == bytes.count else { throw Broken(path: "$", message: "has text after its end") }
            return nil
        } catch {
            return (error.path, error.message)
        }
    }

    /// Where the text stops being JSON, or the key given twice, and why.
    private struct Broken: Error {
        let path: String
        let message: String
    }

    private struct Scanner {
        let bytes: [UInt8]
        var at = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        mutating func skipSpace() {
            while at < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[at]) { at += 1 }
        }

        /// Reads one value at `path`.
        mutating func value(path: String, depth: Int) throws(Broken) {
            guard depth < StrictJSON.deepest else { throw Broken(path: path, message: "is nested more than \(StrictJSON.deepest) deep") }
            skipSpace()
            guard at < bytes.count else { throw Broken(path: path, message: "is missing: the text ends") }
            switch bytes[at] {
            case UInt8(ascii: "{"):
                at += 1
                var seen: Set<String> = []
                skipSpace()
                if at < bytes.count, bytes[at] == UInt8(ascii: "}") {
                    at += 1
                    return
                }
                while true {
                    skipSpace()
                    guard at < bytes.count, bytes[at] == UInt8(ascii: "\"") else {
                        throw Broken(path: path, message: "is not JSON: a key (a string) is wanted at byte \(at)")
                    }
                    let key = try string(path: path)
                    let inner = JSONPath.appending(key: key, to: path)
                    if !seen.insert(key).inserted {
                        throw Broken(path: inner, message: "is given twice (readers disagree on which value counts)")
                    }
                    skipSpace()
                    guard at < bytes.count, bytes[at] == UInt8(ascii: ":") else {
                        throw Broken(path: inner, message: "is not JSON: ':' is wanted at byte \(at)")
                    }
                    at += 1
                    try value(path: inner, depth: depth + 1)
                    skipSpace()
                    if at < bytes.count, bytes[at] == UInt8(ascii: ",") {
                        at += 1
                    } else if at < bytes.count, bytes[at] == UInt8(ascii: "}") {
                        at += 1
                        return
                    } else {
                        throw Broken(path: path, message: at < bytes.count ? "is not JSON: ',' or '}' is wanted at byte \(at)" : "is not JSON: the text ends inside it")
                    }
                }
            case UInt8(ascii: "["):
                at += 1
                skipSpace()
                if at < bytes.count, bytes[at] == UInt8(ascii: "]") {
                    at += 1
                    return
                }
                var index = 0
                while true {
                    try value(path: path + "[\(index)]", depth: depth + 1)
                    index += 1
                    skipSpace()
                    if at < bytes.count, bytes[at] == UInt8(ascii: ",") {
                        at += 1
                    } else if at < bytes.count, bytes[at] == UInt8(ascii: "]") {
                        at += 1
                        return
                    } else {
                        throw Broken(path: path, message: at < bytes.count ? "is not JSON: ',' or ']' is wanted at byte \(at)" : "is not JSON: the text ends inside it")
                    }
                }
            case UInt8(ascii: "\""):
                _ = try string(path: path)
            default:
                // A literal, or a number as RFC 8259 writes one: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
                for literal in ["true", "false", "null"] where bytes[at...].starts(with: literal.utf8) {
                    at += literal.utf8.count
                    return
                }
                let start = at
                func digits() -> Int {
                    let first = at
                    while at < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[at]) { at += 1 }
                    return at - first
                }
                func skip(_ characters: String) -> Bool {
                    guard at < bytes.count, characters.utf8.contains(bytes[at]) else { return false }
                    at += 1
                    return true
                }
                _ = skip("-")
                let integer = at
                let integerDigits = digits()
                // No leading zero but 0 itself.
                var valid = integerDigits == 1 || integerDigits > 1 && bytes[integer] != UInt8(ascii: "0")
                if valid, skip(".") { valid = digits() > 0 }
                if valid, skip("eE") {
                    _ = skip("+-")
                    valid = digits() > 0
                }
                guard valid, at == bytes.count || " \t\r\n,]}".utf8.contains(bytes[at]) else {
                    throw Broken(path: path, message: "is not JSON: not a number, a string, true, false or null, at byte \(start)")
                }
            }
        }

        /// Reads a string at `at` (its opening quote) and returns what it decodes to; `path`, the
        /// value's (or the object's, for a key), names where it breaks.
        mutating func string(path: String) throws(Broken) -> String {
            let broken = Broken(path: path, message: "is not JSON: a string breaks at byte \(at)")
            at += 1
            var scalars = String.UnicodeScalarView()
            var pendingHigh: UInt32?
            var raw: [UInt8] = []
            func flushRaw() throws(Broken) {
                guard !raw.isEmpty else { return }
                guard let text = String(validating: raw, as: UTF8.self) else { throw broken }
                scalars.append(contentsOf: text.unicodeScalars)
                raw.removeAll()
            }
            while at < bytes.count {
                let byte = bytes[at]
                at += 1
                switch byte {
                case UInt8(ascii: "\""):
                    try flushRaw()
                    if pendingHigh != nil { throw broken }
                    return String(scalars)
                case UInt8(ascii: "\\"):
                    try flushRaw()
                    guard at < bytes.count else { throw broken }
                    let escape = bytes[at]
                    at += 1
                    if escape == UInt8(ascii: "u") {
                        guard at + 4 <= bytes.count, let unit = UInt32(String(decoding: bytes[at..<at + 4], as: UTF8.self), radix: 16)
                        else { throw broken }
                        at += 4
                        if let high = pendingHigh {
                            guard (0xDC00...0xDFFF).contains(unit) else { throw broken }
                            pendingHigh = nil
                            scalars.append(Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (unit - 0xDC00))!)
                        } else if (0xD800...0xDBFF).contains(unit) {
                            pendingHigh = unit
                        } else if let scalar = Unicode.Scalar(unit) {
                            scalars.append(scalar)
                        } else {
                            throw broken
                        }
                        continue
                    }
                    if pendingHigh != nil { throw broken }
                    let simple: [UInt8: Unicode.Scalar] = [
                        UInt8(ascii: "\""): "\"", UInt8(ascii: "\\"): "\\", UInt8(ascii: "/"): "/", UInt8(ascii: "b"): "\u{8}",
                        UInt8(ascii: "f"): "\u{C}", UInt8(ascii: "n"): "\n", UInt8(ascii: "r"): "\r", UInt8(ascii: "t"): "\t",
                    ]
                    guard let scalar = simple[escape] else { throw broken }
                    scalars.append(scalar)
                default:
                    // Control characters are escaped in JSON strings.
                    if pendingHigh != nil || byte < 0x20 { throw broken }
                    raw.append(byte)
                }
            }
            throw broken
        }
    }
}
