/// A value's place in a decoded JSON document as messages name it: `$`, `$.boxes[2].width`.
public enum JSONPath {
    /// The path of `keys` (a decoding error's coding path).
    public static func of(_ keys: [any CodingKey]) -> String {
        keys.reduce("$") { path, key in key.intValue.map { "\(path)[\($0)]" } ?? "\(path).\(key.stringValue)" }
    }

    /// `path` with the object key `key` after it: `.key` for a plain name, `["k y"]` (a JSON
    /// string) for any other.
    public static func appending(key: String, to path: String) -> String {
        let plain = !key.isEmpty && key.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || $0 == "_" || $0 == "-" || ("0"..."9").contains($0)) }
        if plain { return "\(path).\(key)" }
        var quoted = "\""
        for scalar in key.unicodeScalars {
            switch scalar {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F: quoted += "\\u" + String(scalar.value, radix: 16).leftPadded(to: 4)
            default: quoted.unicodeScalars.append(scalar)
            }
        }
        return "\(path)[\(quoted)\"]"
    }
}

extension String {
    /// This text with `0`s before it up to `count` characters.
    fileprivate func leftPadded(to count: Int) -> String { String(repeating: "0", count: max(0, count - self.count)) + self }
}
