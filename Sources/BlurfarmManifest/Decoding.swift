import BlurfarmCore

/// The shared machinery of the typed decoders: reading a node as the type a key expects,
/// and collecting a located diagnostic for every value that is not.
///
/// A reader returns `nil` after reporting a problem, and `nil` without a word for an
/// `invalid` node (its error is already reported by the parser).
struct Decoding {
    var diagnostics: [Diagnostic] = []

    mutating func error(_ message: String, at location: SourceLocation) {
        diagnostics.append(.error(message, at: location))
    }

    mutating func note(_ message: String, at location: SourceLocation) {
        diagnostics.append(.note(message, at: location))
    }

    /// ` in 'context'`, or nothing at the top level.
    static func suffix(_ context: String?) -> String { context.map { " in '\($0)'" } ?? "" }

    /// The entries of a map node; reports any other node as `'key' must be <expected>`.
    mutating func mapEntries(_ node: Node, key: String, expected: String) -> [Node.MapEntry]? {
        switch node.content {
        case .map(let entries): return entries
        case .invalid: return nil
        default:
            error("'\(key)' must be \(expected)", at: node.location)
            return nil
        }
    }

    /// Reports every key not in `known`, with a note naming the nearest known key.
    mutating func reportUnknownKeys(_ entries: [Node.MapEntry], known: [String], context: String?) {
        for entry in entries where !known.contains(entry.key) {
            error("unknown key '\(entry.key)'\(Self.suffix(context))", at: entry.keyLocation)
            if let suggestion = closestName(to: entry.key, among: known) {
                note("did you mean '\(suggestion)'?", at: entry.keyLocation)
            }
        }
    }

    /// Reports `missing key 'key'` at the map unless the map lost lines to an earlier error.
    mutating func require(_ key: String, in entries: [Node.MapEntry], map: Node, context: String?) -> Node.MapEntry? {
        if let entry = entries.first(where: { $0.key == key }) { return entry }
        if !map.isIncomplete {
            error("missing key '\(key)'\(Self.suffix(context))", at: map.location)
        }
        return nil
    }

    // MARK: Scalars

    /// Any scalar's text; numbers and booleans are text too where text is expected.
    mutating func string(_ entry: Node.MapEntry, expected: String = "a string") -> String? {
        switch entry.value.content {
        case .scalar(let s): return s.text
        case .invalid: return nil
        default:
            error("'\(entry.key)' must be \(expected)", at: entry.value.location)
            return nil
        }
    }

    /// A name: letters, digits, '-', '_' and '.'.
    mutating func name(_ entry: Node.MapEntry) -> String? {
        let expected = "a name made of letters, digits, '-', '_' and '.'"
        guard let text = string(entry, expected: expected) else { return nil }
        guard !text.isEmpty, text.utf8.allSatisfy(isKeyByte) else {
            error("'\(entry.key)' must be \(expected)", at: entry.value.location)
            return nil
        }
        return text
    }

    /// A plain integer in `range`.
    mutating func integer(_ entry: Node.MapEntry, in range: ClosedRange<Int>) -> Int? {
        let expected: String
        switch (range.lowerBound, range.upperBound) {
        case (Int.min, Int.max): expected = "an integer"
        case (let low, Int.max): expected = "an integer >= \(low)"
        case (let low, let high): expected = "an integer from \(low) to \(high)"
        }
        guard case .scalar(let s) = entry.value.content else {
            if case .invalid = entry.value.content { return nil }
            error("'\(entry.key)' must be \(expected)", at: entry.value.location)
            return nil
        }
        guard let value = s.integerValue, range.contains(value) else {
            error("'\(entry.key)' must be \(expected)", at: entry.value.location)
            return nil
        }
        return value
    }

    /// A plain number greater than `exclusiveMinimum`.
    mutating func number(_ entry: Node.MapEntry, greaterThan exclusiveMinimum: Double) -> Double? {
        let expected = "a number > \(ParameterValue.number(exclusiveMinimum))"
        guard case .scalar(let s) = entry.value.content else {
            if case .invalid = entry.value.content { return nil }
            error("'\(entry.key)' must be \(expected)", at: entry.value.location)
            return nil
        }
        guard let value = s.numberValue, value > exclusiveMinimum else {
            error("'\(entry.key)' must be \(expected)", at: entry.value.location)
            return nil
        }
        return value
    }

    /// `true` or `false`, and nothing else.
    mutating func boolean(_ entry: Node.MapEntry) -> Bool? {
        guard case .scalar(let s) = entry.value.content else {
            if case .invalid = entry.value.content { return nil }
            error("'\(entry.key)' must be true or false", at: entry.value.location)
            return nil
        }
        guard let value = s.booleanValue else {
            error("'\(entry.key)' must be true or false", at: entry.value.location)
            if ["yes", "no", "on", "off", "y", "n", "True", "False", "TRUE", "FALSE"].contains(s.text) {
                note("only 'true' and 'false' are booleans", at: entry.value.location)
            }
            return nil
        }
        return value
    }

    /// One of an enumeration's raw values, with a note naming the nearest one.
    mutating func choice<E: RawRepresentable & CaseIterable>(_ entry: Node.MapEntry, of _: E.Type) -> E?
    where E.RawValue == String {
        let names = E.allCases.map(\.rawValue)
        let expected = "one of " + names.map { "'\($0)'" }.joined(separator: ", ")
        guard let text = string(entry, expected: expected) else { return nil }
        if let value = E(rawValue: text) { return value }
        error("'\(entry.key)' must be \(expected)", at: entry.value.location)
        if let suggestion = closestName(to: text, among: names) {
            note("did you mean '\(suggestion)'?", at: entry.value.location)
        }
        return nil
    }

    /// A list (inline or of `- ` items) of scalars: each item's text and node.
    mutating func scalarList(_ entry: Node.MapEntry, expected: String) -> [(text: String, node: Node)]? {
        guard case .list(let items) = entry.value.content else {
            if case .invalid = entry.value.content { return nil }
            error("'\(entry.key)' must be \(expected)", at: entry.value.location)
            return nil
        }
        var result: [(text: String, node: Node)] = []
        var ok = true
        for item in items {
            switch item.content {
            case .scalar(let s): result.append((s.text, item))
            case .invalid: ok = false
            default:
                error("'\(entry.key)' must be \(expected)", at: item.location)
                ok = false
            }
        }
        return ok ? result : nil
    }
}
