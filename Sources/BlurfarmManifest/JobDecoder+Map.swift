import BlurfarmCore

extension JobDecoder {
    /// The output map's path (`map: site/images.json`): one JSON file for the whole job,
    /// relative to the manifest's folder as the outputs' paths are (docs/json.md). Refused,
    /// at the value, when it is not a string, is empty, ends in '/', does not end in `.json`,
    /// or holds a placeholder (one map per job, not per input). (A NUL is refused by the lexer.)
    static func mapPath(_ entry: Node.MapEntry, _ d: inout Decoding) -> String? {
        guard let text = d.string(entry, expected: "a path such as site/images.json") else { return nil }
        let node = entry.value
        if text.isEmpty {
            d.error("'map' must not be empty", at: node.location)
            return nil
        }
        if let brace = Array(text.unicodeScalars).firstIndex(where: { $0 == "{" || $0 == "}" }) {
            d.error(
                "'map' is one file for the whole job: placeholders such as '{stem}' have no meaning here",
                at: node.location(ofScalarAt: brace))
            return nil
        }
        if text.hasSuffix("/") || !text.lowercased().hasSuffix(".json") || text.split(separator: "/").last == ".json" {
            d.error("'map' must name a .json file, such as site/images.json", at: node.location)
            return nil
        }
        return text
    }
}
