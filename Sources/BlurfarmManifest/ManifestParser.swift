import BlurfarmCore

/// Parses the manifest language (manifests and the configuration file) into a tree of
/// located ``Node``s.
///
/// The language is a small, strict subset of YAML: `key: value` maps nested by indentation
/// with spaces, `- item` lists, inline `[a, b]` lists of scalars, plain, `'single'` and
/// `"double"` quoted scalars, and `#` comments. `docs/manifest.md` describes it.
///
/// File-level rules:
/// - At most ``ManifestLimits/maximumBytes`` bytes, valid UTF-8 (the first bad byte is
///   reported and nothing more is read).
/// - A UTF-8 byte order mark at the very start is accepted and skipped; columns count
///   from the character after it. Anywhere else it is an error.
/// - Lines end in LF or CRLF; a carriage return anywhere else is an error.
/// - Maps and lists nest at most ``ManifestLimits/maximumDepth`` deep.
///
/// Parsing never stops at the first problem: a line with an error is dropped (with the
/// lines nested under it) and parsing goes on, so one run reports every problem.
public enum ManifestParser {
    /// Parses `bytes` read from `file` (the path as it should appear in messages).
    /// Returns the root node (`nil` for a file with no content, or one that could not be
    /// read at all) and every problem found, ordered by location.
    public static func parse(_ bytes: [UInt8], file: String) -> (node: Node?, diagnostics: Diagnostics) {
        let start = SourceLocation(file: file, line: 1, column: 1)
        if bytes.count > ManifestLimits.maximumBytes {
            return (nil, Diagnostics([.error(
                "file is larger than the limit of 1 MiB (\(ManifestLimits.maximumBytes) bytes)", at: start)]))
        }
        let first = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        if let bad = UTF8Validation.firstInvalidByte(in: bytes, from: first) {
            let location = UTF8Validation.location(ofByte: bad, in: bytes, from: first, file: file)
            let hex = String(bytes[bad], radix: 16, uppercase: true)
            return (nil, Diagnostics([.error(
                "invalid UTF-8: byte 0x\(hex.count == 1 ? "0" + hex : hex) does not begin a valid sequence",
                at: location)]))
        }
        var lexer = ManifestLexer(bytes: bytes, file: file)
        lexer.run(from: first)
        var parser = TreeBuilder(tokens: lexer.tokens, keyNames: lexer.keyNames, values: lexer.values, file: file)
        let node = parser.build()
        return (node, Diagnostics(lexer.diagnostics + parser.diagnostics).sortedByLocation())
    }

    /// Parses `text` as if read from `file`.
    public static func parse(_ text: String, file: String) -> (node: Node?, diagnostics: Diagnostics) {
        parse(Array(text.utf8), file: file)
    }
}

/// Builds the tree from the lexer's tokens, by their columns.
///
/// A map is the run of keys in one column; a list the run of `- ` markers in one column.
/// A key's value is what follows on its line, or else the block of deeper lines below it
/// (a list may also stand in the key's own column, as YAML allows).
private struct TreeBuilder {
    let tokens: [Token]
    let keyNames: [String]
    let values: [Node]
    let file: String
    var i = 0
    var diagnostics: [Diagnostic] = []

    init(tokens: [Token], keyNames: [String], values: [Node], file: String) {
        self.tokens = tokens
        self.keyNames = keyNames
        self.values = values
        self.file = file
    }

    func location(_ token: Token) -> SourceLocation {
        SourceLocation(file: file, line: token.line, column: token.column)
    }

    mutating func error(_ message: String, at token: Token) {
        diagnostics.append(.error(message, at: location(token)))
    }

    mutating func build() -> Node? {
        guard !tokens.isEmpty else { return nil }
        // Leading broken lines belong to no node.
        while i < tokens.count, tokens[i].kind == .broken { skipBlock(of: tokens[i]) }
        guard i < tokens.count else { return nil }
        let root = parseNode(depth: 1, keyColumn: nil)
        while i < tokens.count {
            let t = tokens[i]
            if t.kind == .broken {
                skipBlock(of: t)
                continue
            }
            if t.column < root.location.column {
                error("this line is indented less than the first line", at: t)
            } else {
                error("unexpected indentation", at: t)
            }
            skipBlock(of: t)
        }
        return root
    }

    /// Skips the rest of `token`'s line and every following line indented deeper than it.
    mutating func skipBlock(of token: Token) {
        while i < tokens.count, tokens[i].line == token.line || tokens[i].column > token.column { i += 1 }
    }

    /// Parses the node that starts at the current token. `keyColumn` is the column of the
    /// key whose value this is, when the value starts on a later line.
    mutating func parseNode(depth: Int, keyColumn: Int?) -> Node {
        let t = tokens[i]
        if depth > ManifestLimits.maximumDepth {
            error("nesting deeper than \(ManifestLimits.maximumDepth) levels is not supported", at: t)
            // Skip the whole subtree: everything on this line and below it that is deeper
            // than the key (or, for a list item, at least as deep as this token).
            let limit = keyColumn ?? (t.column - 1)
            let line = t.line
            while i < tokens.count, tokens[i].line == line || tokens[i].column > limit { i += 1 }
            return Node(.invalid, at: location(t))
        }
        switch t.kind {
        case .dash: return parseList(depth: depth, column: t.column, keyColumn: keyColumn)
        case .key: return parseMap(depth: depth, column: t.column)
        case .value:
            i += 1
            return values[t.valueIndex]
        case .broken:
            skipBlock(of: t)
            return Node(.invalid, at: location(t), isIncomplete: true)
        }
    }

    /// The next line of the block whose column is `c`, or nil where the block ends (a line left
    /// of it). A dropped line is skipped with the lines it holds and makes the block incomplete;
    /// one left of the block ends it incomplete too, as it may have belonged here: its
    /// indentation cannot be trusted.
    mutating func nextLine(ofBlockAt c: Int, incomplete: inout Bool) -> Token? {
        while i < tokens.count {
            let t = tokens[i]
            if t.kind == .broken { incomplete = true }
            if t.column < c { return nil }
            if t.kind != .broken { return t }
            skipBlock(of: t)
        }
        return nil
    }

    mutating func parseMap(depth: Int, column c: Int) -> Node {
        let start = location(tokens[i])
        var entries: [Node.MapEntry] = []
        var firstIndex: [String: Int] = [:]
        var incomplete = false
        var previousHadInlineValue = false
        var previousEntry: Int?
        while let t = nextLine(ofBlockAt: c, incomplete: &incomplete) {
            if t.column > c {
                if previousHadInlineValue, t.kind == .value {
                    error("multi-line values are not supported; write the value on one line", at: t)
                    if let previous = previousEntry {
                        let e = entries[previous]
                        entries[previous] = Node.MapEntry(
                            key: e.key, keyLocation: e.keyLocation, value: Node(.invalid, at: e.value.location))
                    }
                } else {
                    error("unexpected indentation", at: t)
                }
                incomplete = true
                skipBlock(of: t)
                continue
            }
            guard t.kind == .key else {
                if t.isDash {
                    error("expected 'key: value' here, not a '- ' item", at: t)
                } else {
                    error("expected 'key: value' here, not a bare value", at: t)
                }
                incomplete = true
                skipBlock(of: t)
                continue
            }
            i += 1
            let key = keyNames[t.keyIndex]
            let inline: Node? = t.valueIndex >= 0 ? values[t.valueIndex] : nil
            let value: Node
            if let inline {
                value = inline
                if case .invalid = inline.content {
                    // Lines below an unreadable value (a block scalar's text, an anchored
                    // map) would only add errors about the same mistake.
                    while i < tokens.count, tokens[i].column > c { i += 1 }
                }
            } else if i < tokens.count, tokens[i].startsLine,
                tokens[i].column > c || (tokens[i].column == c && tokens[i].isDash)
            {
                value = parseNode(depth: depth + 1, keyColumn: c)
            } else {
                error("key '\(key)' has no value", at: t)
                if t.commentLooksLikeValue {
                    diagnostics.append(.note(
                        "'#' after a space starts a comment; quote a value that starts with '#'",
                        at: location(t)))
                }
                value = Node(.invalid, at: location(t))
            }
            previousHadInlineValue = inline != nil
            previousEntry = nil
            // Small maps (every map of a job) search their few keys; large ones index them.
            let first: Int?
            if entries.count < 16 {
                first = entries.firstIndex { $0.key == key }
            } else {
                if firstIndex.isEmpty {
                    for (k, e) in entries.enumerated() where firstIndex[e.key] == nil { firstIndex[e.key] = k }
                }
                first = firstIndex[key]
            }
            if let first {
                error("duplicate key '\(key)'", at: t)
                diagnostics.append(.note("'\(key)' first given here", at: entries[first].keyLocation))
                continue
            }
            if !firstIndex.isEmpty { firstIndex[key] = entries.count }
            previousEntry = entries.count
            entries.append(Node.MapEntry(key: key, keyLocation: location(t), value: value))
        }
        return Node(.map(entries), at: start, isIncomplete: incomplete)
    }

    /// `keyColumn`: the column of the key this list is the value of, when the list stands
    /// in that same column; a key in this column then ends the list instead of being an error.
    mutating func parseList(depth: Int, column c: Int, keyColumn: Int?) -> Node {
        let start = location(tokens[i])
        var items: [Node] = []
        var incomplete = false
        while let t = nextLine(ofBlockAt: c, incomplete: &incomplete) {
            if t.column > c {
                error("unexpected indentation", at: t)
                incomplete = true
                skipBlock(of: t)
                continue
            }
            switch t.kind {
            case .dash:
                i += 1
                if i < tokens.count, !tokens[i].startsLine || tokens[i].column > c {
                    items.append(parseNode(depth: depth + 1, keyColumn: tokens[i].startsLine ? c : nil))
                } else {
                    error("empty list item", at: t)
                    items.append(Node(.invalid, at: location(t)))
                }
            case .key where keyColumn == c:
                return Node(.list(items), at: start, isIncomplete: incomplete)
            default:
                error("expected a '- ' item here", at: t)
                incomplete = true
                skipBlock(of: t)
            }
        }
        return Node(.list(items), at: start, isIncomplete: incomplete)
    }
}

/// UTF-8 checks with positions, for the message about the first bad byte.
enum UTF8Validation {
    /// The index of the first byte that does not begin a valid UTF-8 sequence (overlong
    /// forms, surrogates and values past U+10FFFF are invalid), or `nil`.
    static func firstInvalidByte(in b: [UInt8], from start: Int) -> Int? {
        var i = start
        let n = b.count
        while i < n {
            let c = b[i]
            if c < 0x80 {
                i += 1
                continue
            }
            var length = 0
            var low: UInt8 = 0x80
            var high: UInt8 = 0xBF
            switch c {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; high = 0x9F
            case 0xF0: length = 4; low = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; high = 0x8F
            default: return i
            }
            guard i + length <= n, b[i + 1] >= low, b[i + 1] <= high else { return i }
            for k in 2..<length where b[i + k] & 0xC0 != 0x80 { return i }
            i += length
        }
        return nil
    }

    /// The line and column (in Unicode scalars) of byte `index`; the bytes before it are
    /// valid UTF-8.
    static func location(ofByte index: Int, in b: [UInt8], from start: Int, file: String) -> SourceLocation {
        var line = 1
        var column = 1
        var i = start
        while i < index {
            if b[i] == 0x0A {
                line += 1
                column = 1
            } else if b[i] & 0xC0 != 0x80 {
                column += 1
            }
            i += 1
        }
        return SourceLocation(file: file, line: line, column: column)
    }
}
