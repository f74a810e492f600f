import BlurfarmCore

/// One piece of a line, as the parser sees it.
///
/// A line is a run of `- ` list markers followed by at most one of: a key (with its value
/// when the value is on the same line), or a value. The parser builds the tree from the
/// tokens' columns alone. A token is plain data (cheap to copy); key names and values
/// live in the lexer's side arrays.
struct Token {
    enum Kind: UInt8 {
        /// A `- ` list marker.
        case dash
        /// `key:`; `valueIndex` is the value written after it on the same line, or -1 when
        /// the value is the block on the following lines.
        case key
        /// A value (`valueIndex`): a scalar, an inline list, or `invalid` after a reported error.
        case value
        /// A line dropped after an error was reported on it; the parser drops the lines
        /// nested under it too, and marks the enclosing map or list incomplete.
        case broken
    }

    var kind: Kind
    /// Whether this is the first token of its line (the line's indentation is its column).
    var startsLine: Bool
    /// For a key without a value: a `#…` comment stood right where the value would be
    /// (`background: #fff`), which earns a note.
    var commentLooksLikeValue = false
    var line: Int
    var column: Int
    /// The key's name in ``ManifestLexer/keyNames``, for `key` tokens.
    var keyIndex = -1
    /// The value in ``ManifestLexer/values``, or -1.
    var valueIndex = -1

    var isDash: Bool { kind == .dash }
}

/// Splits a manifest's bytes into tokens, line by line, and reports every lexical problem.
///
/// The lexer works on UTF-8 bytes that have been checked to be valid; columns count
/// Unicode scalars (every byte that is not a UTF-8 continuation byte starts one).
struct ManifestLexer {
    private let bytes: [UInt8]
    private let file: String
    private(set) var diagnostics: [Diagnostic] = []
    private(set) var tokens: [Token] = []
    /// The names of `key` tokens.
    private(set) var keyNames: [String] = []
    /// The values of `value` tokens and of keys with a value on their line.
    private(set) var values: [Node] = []

    /// The line being read (from 1), the byte index and column of the next character, and
    /// the end of the line's content (before `\n` or `\r\n`).
    private var line = 0
    private var pos = 0
    private var col = 1
    private var end = 0
    private var startsLine = true

    init(bytes: [UInt8], file: String) {
        self.bytes = bytes
        self.file = file
    }

    // MARK: Lines

    /// Reads every line from byte `start` (after a byte order mark, if any).
    mutating func run(from start: Int) {
        var lineStart = start
        let count = bytes.count
        while true {
            line += 1
            var lineEnd = lineStart
            while lineEnd < count, bytes[lineEnd] != 0x0A { lineEnd += 1 }
            var contentEnd = lineEnd
            if contentEnd > lineStart, bytes[contentEnd - 1] == 0x0D { contentEnd -= 1 }
            lexLine(from: lineStart, to: contentEnd)
            if lineEnd >= count { break }
            lineStart = lineEnd + 1
        }
    }

    private func location(_ column: Int) -> SourceLocation {
        SourceLocation(file: file, line: line, column: column)
    }

    private mutating func error(_ message: String, at column: Int) {
        diagnostics.append(.error(message, at: location(column)))
    }

    private mutating func note(_ message: String, at column: Int) {
        diagnostics.append(.note(message, at: location(column)))
    }

    private mutating func emit(_ kind: Token.Kind, at column: Int) {
        tokens.append(Token(kind: kind, startsLine: startsLine, line: line, column: column))
        startsLine = false
    }

    private mutating func emitValue(_ node: Node, at column: Int) {
        var token = Token(kind: .value, startsLine: startsLine, line: line, column: column)
        token.valueIndex = values.count
        values.append(node)
        tokens.append(token)
        startsLine = false
    }

    private mutating func emitKey(_ name: String, value: Node?, commentLooksLikeValue: Bool, at column: Int) {
        var token = Token(kind: .key, startsLine: startsLine, line: line, column: column)
        token.commentLooksLikeValue = commentLooksLikeValue
        token.keyIndex = keyNames.count
        keyNames.append(name)
        if let value {
            token.valueIndex = values.count
            values.append(value)
        }
        tokens.append(token)
        startsLine = false
    }

    private mutating func lexLine(from start: Int, to lineEnd: Int) {
        pos = start
        col = 1
        end = lineEnd
        startsLine = true

        // Leading white space; a line of white space and a comment is blank.
        var firstTabColumn: Int?
        while pos < end, bytes[pos] == space || bytes[pos] == tab {
            if bytes[pos] == tab, firstTabColumn == nil { firstTabColumn = col }
            pos += 1
            col += 1
        }
        let contentColumn = col
        let isBlank = pos == end || bytes[pos] == hash

        if let (badColumn, message) = forbiddenCharacter(from: start) {
            error(message, at: badColumn)
            if !isBlank { emit(.broken, at: contentColumn) }
            return
        }
        if isBlank { return }
        if let firstTabColumn {
            error("tab in indentation; indent with spaces", at: firstTabColumn)
            emit(.broken, at: contentColumn)
            return
        }
        if contentColumn == 1, let message = documentLevelProblem() {
            error(message, at: 1)
            emit(.broken, at: 1)
            return
        }

        // `- ` markers, then one key or value.
        while true {
            if bytes[pos] == dash, pos + 1 == end || isWhiteSpace(bytes[pos + 1]) {
                emit(.dash, at: col)
                advance()
                while pos < end, bytes[pos] == space {
                    advance()
                }
                if pos < end, bytes[pos] == tab {
                    error("tab in indentation; indent with spaces", at: col)
                    skipWhiteSpace()
                    emit(.broken, at: col)
                    return
                }
                if pos == end || bytes[pos] == hash { return }
                continue
            }
            lexLineContent()
            return
        }
    }

    /// The first character not allowed anywhere in a file: control characters other than tab
    /// (a carriage return is allowed only before a line feed) and a byte order mark after the
    /// start of the file.
    private func forbiddenCharacter(from start: Int) -> (column: Int, message: String)? {
        var column = 1
        var i = start
        while i < end {
            let b = bytes[i]
            if b < 0x20 && b != tab || b == 0x7F {
                if b == 0x0D {
                    return (column, "carriage return (U+000D) without a line feed; lines end in LF or CRLF")
                }
                return (column, "control character \(unicodeName(UInt32(b))) is not allowed")
            }
            if b == 0xEF, i + 2 < end, bytes[i + 1] == 0xBB, bytes[i + 2] == 0xBF {
                return (column, "byte order mark (U+FEFF) is allowed only at the start of the file")
            }
            if b & 0xC0 != 0x80 { column += 1 }
            i += 1
        }
        return nil
    }

    /// YAML's document markers and directives, which start in column 1.
    private func documentLevelProblem() -> String? {
        func startsWith(_ marker: String) -> Bool {
            let m = Array(marker.utf8)
            guard pos + m.count <= end, Array(bytes[pos..<pos + m.count]) == m else { return false }
            return pos + m.count == end || isWhiteSpace(bytes[pos + m.count])
        }
        if startsWith("---") { return "multiple documents ('---') are not supported" }
        if startsWith("...") { return "document end markers ('...') are not supported" }
        if bytes[pos] == UInt8(ascii: "%") { return "directives ('%') are not supported" }
        return nil
    }

    // MARK: Keys and values

    /// Reads what follows the line's `- ` markers: `key:`, `key: value`, or a value.
    private mutating func lexLineContent() {
        let startColumn = col
        let first = bytes[pos]
        if first == doubleQuote || first == singleQuote {
            let node = lexQuoted()
            skipWhiteSpace()
            if pos < end, bytes[pos] == colon, pos + 1 == end || isWhiteSpace(bytes[pos + 1]) {
                error("a key cannot be quoted; write it bare", at: startColumn)
                emit(.broken, at: startColumn)
                return
            }
            if case .invalid = node.content {
                emit(.broken, at: startColumn)
                return
            }
            if expectLineEnd(after: "the closing quote") { emitValue(node, at: startColumn) } else { emit(.broken, at: startColumn) }
            return
        }
        if first == openBracket {
            let node = lexInlineList()
            if case .invalid = node.content {
                emit(.broken, at: startColumn)
                return
            }
            if expectLineEnd(after: "']'") { emitValue(node, at: startColumn) } else { emit(.broken, at: startColumn) }
            return
        }
        if reportIndicator() {
            emit(.broken, at: startColumn)
            return
        }

        // A plain scalar, or a key: the first ':' followed by white space or the line's end.
        let start = pos
        var separator: Int?
        var i = pos
        while i < end {
            let b = bytes[i]
            if b == hash, isWhiteSpace(bytes[i - 1]) { break }
            if b == colon, i + 1 == end || isWhiteSpace(bytes[i + 1]) {
                separator = i
                break
            }
            i += 1
        }
        guard let separator else {
            if let node = lexPlain(stoppingAtFlowIndicators: false) {
                emitValue(node, at: startColumn)
            } else {
                emit(.broken, at: startColumn)
            }
            return
        }
        var keyEnd = separator
        while keyEnd > start, isWhiteSpace(bytes[keyEnd - 1]) { keyEnd -= 1 }
        let keyBytes = bytes[start..<keyEnd]
        let key = String(decoding: keyBytes, as: UTF8.self)
        guard !keyBytes.isEmpty, keyBytes.allSatisfy(isKeyByte) else {
            error(
                "invalid key '\(key)'; a key is made of letters, digits, '-', '_' and '.'",
                at: startColumn)
            emit(.broken, at: startColumn)
            return
        }
        while pos <= separator { advance() }
        skipWhiteSpace()
        if pos == end || bytes[pos] == hash {
            let looksLikeValue = pos + 1 < end && !isWhiteSpace(bytes[pos + 1])
            emitKey(key, value: nil, commentLooksLikeValue: looksLikeValue, at: startColumn)
            return
        }
        let value = lexValueAfterKey()
        emitKey(key, value: value, commentLooksLikeValue: false, at: startColumn)
    }

    /// Reads the value written after `key: `; an `invalid` node after a reported error.
    private mutating func lexValueAfterKey() -> Node {
        let startColumn = col
        let invalid = Node(.invalid, at: location(startColumn))
        let first = bytes[pos]
        if first == doubleQuote || first == singleQuote {
            let node = lexQuoted()
            if case .invalid = node.content { return node }
            return expectLineEnd(after: "the closing quote") ? node : invalid
        }
        if first == openBracket {
            let node = lexInlineList()
            if case .invalid = node.content { return node }
            return expectLineEnd(after: "']'") ? node : invalid
        }
        if first == dash, pos + 1 == end || isWhiteSpace(bytes[pos + 1]) {
            error(
                "a list cannot start on the same line as its key; write its '- ' items on the lines below",
                at: startColumn)
            pos = end
            return invalid
        }
        if reportIndicator() { return invalid }
        return lexPlain(stoppingAtFlowIndicators: false) ?? invalid
    }

    /// Reports a character that cannot start a value (YAML features we do not support,
    /// stray flow punctuation); returns whether it did, leaving `pos` at the line's end.
    private mutating func reportIndicator() -> Bool {
        let b = bytes[pos]
        let next: UInt8? = pos + 1 < end ? bytes[pos + 1] : nil
        let column = col
        switch b {
        case UInt8(ascii: "&"):
            error("anchors ('&') are not supported", at: column)
        case UInt8(ascii: "*"):
            error("aliases ('*') are not supported", at: column)
            note("to write a value that starts with '*', quote it: '*.jpg'", at: column)
        case UInt8(ascii: "!"):
            error("tags ('!') are not supported", at: column)
        case UInt8(ascii: "{"):
            error("flow maps ('{...}') are not supported; write the map as indented 'key: value' lines", at: column)
        case UInt8(ascii: "|"), UInt8(ascii: ">"):
            error("block scalars ('|' and '>') are not supported; write the value on one line", at: column)
        case UInt8(ascii: "?") where next == nil || isWhiteSpace(next!):
            error("complex keys ('? ') are not supported", at: column)
        case UInt8(ascii: "]"), UInt8(ascii: "}"), UInt8(ascii: ","):
            error("unexpected '\(Character(Unicode.Scalar(b)))'", at: column)
        default:
            return false
        }
        pos = end
        return true
    }

    /// Reads a plain scalar up to the line's end or a comment (and, in an inline list, up to
    /// ',' or ']'); trailing white space is not part of it. Reports a ': ' inside it.
    private mutating func lexPlain(stoppingAtFlowIndicators inFlow: Bool) -> Node? {
        let startColumn = col
        let start = pos
        var lastContent = pos
        var colonColumn: Int?
        while pos < end {
            let b = bytes[pos]
            if b == hash, pos > start, isWhiteSpace(bytes[pos - 1]) { break }
            if inFlow, b == comma || b == closeBracket { break }
            if b == colon, colonColumn == nil, pos + 1 == end || isWhiteSpace(bytes[pos + 1]) {
                colonColumn = col
            }
            advance()
            if !isWhiteSpace(b) { lastContent = pos }
        }
        if let colonColumn {
            if inFlow {
                error("maps inside inline lists are not supported", at: colonColumn)
            } else {
                error("':' followed by a space is not allowed in a bare value; quote the value", at: colonColumn)
            }
            return nil
        }
        let text = String(decoding: bytes[start..<lastContent], as: UTF8.self)
        return Node(
            .scalar(Scalar(text: text, style: .plain, contentColumn: startColumn)),
            at: location(startColumn))
    }

    /// Reads a quoted scalar starting at its quote; `invalid` after a reported error (the
    /// scan still goes on to the closing quote, so every bad escape is reported).
    private mutating func lexQuoted() -> Node {
        let quote = bytes[pos]
        let quoteColumn = col
        let here = location(quoteColumn)
        advance()
        var text: [UInt8] = []
        if quote == singleQuote {
            let start = pos
            while pos < end, bytes[pos] != singleQuote { advance() }
            guard pos < end else {
                error("unterminated string; a string ends on the line it starts", at: quoteColumn)
                return Node(.invalid, at: here)
            }
            text.append(contentsOf: bytes[start..<pos])
            advance()
            return Node(
                .scalar(Scalar(text: String(decoding: text, as: UTF8.self), style: .singleQuoted,
                               contentColumn: quoteColumn + 1)),
                at: here)
        }

        var ok = true
        var scalarCount = 0
        var columns: [Int]?
        while true {
            guard pos < end else {
                error("unterminated string; a string ends on the line it starts", at: quoteColumn)
                return Node(.invalid, at: here)
            }
            let b = bytes[pos]
            if b == doubleQuote {
                advance()
                break
            }
            if b != backslash {
                let scalarStart = pos
                columns?.append(col)
                advance()
                text.append(contentsOf: bytes[scalarStart..<pos])
                scalarCount += 1
                continue
            }
            // An escape.
            if columns == nil { columns = (0..<scalarCount).map { quoteColumn + 1 + $0 } }
            let escapeColumn = col
            advance()
            guard pos < end else { continue }  // reported as unterminated above
            let e = bytes[pos]
            var produced: Unicode.Scalar?
            switch e {
            case doubleQuote: produced = "\""
            case backslash: produced = "\\"
            case UInt8(ascii: "n"): produced = "\n"
            case UInt8(ascii: "t"): produced = "\t"
            case UInt8(ascii: "u"):
                advance()
                var digits = 0
                var value: UInt32 = 0
                var well = pos < end && bytes[pos] == UInt8(ascii: "{")
                if well {
                    advance()
                    while pos < end, let h = hexValue(bytes[pos]), digits < 8 {
                        value = value << 4 | UInt32(h)
                        digits += 1
                        advance()
                    }
                    well = digits > 0 && pos < end && bytes[pos] == UInt8(ascii: "}")
                }
                guard well else {
                    error("invalid escape; '\\u' is followed by 1 to 8 hexadecimal digits in braces: '\\u{e9}'", at: escapeColumn)
                    ok = false
                    continue
                }
                guard let scalar = Unicode.Scalar(value) else {
                    error("'\\u{\(String(value, radix: 16, uppercase: true))}' is not a Unicode scalar value", at: escapeColumn)
                    ok = false
                    advance()
                    continue
                }
                produced = scalar
            default:
                let start = pos
                advance()
                let shown = String(decoding: bytes[start..<pos], as: UTF8.self)
                error("unknown escape '\\\(shown)'; the escapes are \\\" \\\\ \\n \\t and \\u{...}", at: escapeColumn)
                ok = false
                continue
            }
            advance()
            if let produced {
                UTF8.encode(produced) { text.append($0) }
                columns?.append(escapeColumn)
                scalarCount += 1
            }
        }
        guard ok else { return Node(.invalid, at: here) }
        return Node(
            .scalar(Scalar(text: String(decoding: text, as: UTF8.self), style: .doubleQuoted,
                           contentColumn: quoteColumn + 1, columns: columns)),
            at: here)
    }

    /// Reads `[a, b, c]`; `invalid` after a reported error (the rest of the line is then skipped).
    private mutating func lexInlineList() -> Node {
        let openColumn = col
        let here = location(openColumn)
        let invalid = Node(.invalid, at: here)
        advance()
        var items: [Node] = []
        var ok = true
        skipWhiteSpace()
        if pos < end, bytes[pos] == closeBracket {
            advance()
            return Node(.list([]), at: here)
        }
        func unterminated(_ lexer: inout ManifestLexer) -> Node {
            lexer.error("unterminated inline list; an inline list ends with ']' on the line it starts", at: openColumn)
            lexer.pos = lexer.end
            return invalid
        }
        while true {
            skipWhiteSpace()
            if pos == end || bytes[pos] == hash { return unterminated(&self) }
            let b = bytes[pos]
            switch b {
            case doubleQuote, singleQuote:
                let item = lexQuoted()
                if case .invalid = item.content {
                    if pos >= end { return invalid }
                    ok = false
                }
                items.append(item)
            case openBracket:
                error("nested inline lists are not supported", at: col)
                pos = end
                return invalid
            case comma, closeBracket:
                error("empty item in inline list", at: col)
                pos = end
                return invalid
            default:
                if reportIndicator() { return invalid }
                guard let item = lexPlain(stoppingAtFlowIndicators: true) else {
                    pos = end
                    return invalid
                }
                items.append(item)
            }
            skipWhiteSpace()
            if pos == end || bytes[pos] == hash { return unterminated(&self) }
            if bytes[pos] == comma {
                advance()
                continue
            }
            if bytes[pos] == closeBracket {
                advance()
                break
            }
            error("expected ',' or ']' in inline list", at: col)
            pos = end
            return invalid
        }
        return ok ? Node(.list(items), at: here) : invalid
    }

    /// After a complete value: only white space and a comment may follow. Reports anything
    /// else and returns false.
    private mutating func expectLineEnd(after what: String) -> Bool {
        let before = pos
        skipWhiteSpace()
        if pos == end || (bytes[pos] == hash && pos > before) { return true }
        error("unexpected text after \(what)", at: col)
        pos = end
        return false
    }

    // MARK: Characters

    /// Moves past one Unicode scalar.
    private mutating func advance() {
        pos += 1
        while pos < end, bytes[pos] & 0xC0 == 0x80 { pos += 1 }
        col += 1
    }

    private mutating func skipWhiteSpace() {
        while pos < end, isWhiteSpace(bytes[pos]) {
            pos += 1
            col += 1
        }
    }
}

let space = UInt8(ascii: " ")
let tab = UInt8(ascii: "\t")
let hash = UInt8(ascii: "#")
let dash = UInt8(ascii: "-")
let colon = UInt8(ascii: ":")
let comma = UInt8(ascii: ",")
let openBracket = UInt8(ascii: "[")
let closeBracket = UInt8(ascii: "]")
let doubleQuote = UInt8(ascii: "\"")
let singleQuote = UInt8(ascii: "'")
let backslash = UInt8(ascii: "\\")

@inline(__always) func isWhiteSpace(_ b: UInt8) -> Bool { b == space || b == tab }

/// Letters, digits, '-', '_' and '.': the characters of keys and names.
@inline(__always) func isKeyByte(_ b: UInt8) -> Bool {
    (b >= 0x61 && b <= 0x7A) || (b >= 0x41 && b <= 0x5A) || (b >= 0x30 && b <= 0x39)
        || b == dash || b == UInt8(ascii: "_") || b == UInt8(ascii: ".")
}

func hexValue(_ b: UInt8) -> UInt8? {
    switch b {
    case 0x30...0x39: b - 0x30
    case 0x61...0x66: b - 0x61 + 10
    case 0x41...0x46: b - 0x41 + 10
    default: nil
    }
}

/// `U+0007`: how messages name a character.
func unicodeName(_ value: UInt32) -> String {
    let hex = String(value, radix: 16, uppercase: true)
    return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
}
