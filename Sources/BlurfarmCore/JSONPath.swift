/// A value's place in a decoded JSON document as messages name it: `$`, `$.boxes[2].width`.
public enum JSONPath {
    /// The path of `keys` (a decoding error's coding path).
    public static func of(_ keys: [any CodingKey]) -> String {
        keys.reduce("$") { path, key in key.intValue.map { "\(path)[\($0)]" } ?? "\(path).\(key.stringValue)" }
    }
}
