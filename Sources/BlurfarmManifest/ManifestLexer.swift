import BlurfarmCore

/// Splits a manifest's bytes into tokens, line by line, and reports every lexical problem.
///
/// The lexer works on UTF-8 bytes that have been checked to be valid; columns count
/// Unicode scalars (every byte that is not a UTF-8 continuation byte starts one).
struct ManifestLexer {
    let bytes: [UInt8]
    private let file: String
    private(set) var diagnostics: [Diagnostic] = []
    private(set) var tokens: [Token] = []
    /// The names of `key` tokens.
    private(set) var keyNames: [String] = []
    /// The values of `value` tokens and of keys with a value on their line.
    private(set) var values: [Node] = []

    /// The line being read (from 1), the byte index and column of the next character, and
    /// the end of the line's content (before `\n` or `\r\n`).
    var line = 0
    var pos = 0
    var col = 1
    var end = 0
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
            // CRLF: the CR is the line's end only before a LF (at the file's end, it is an error).
            if contentEnd > lineStart, contentEnd < count, bytes[contentEnd - 1] == 0x0D { contentEnd -= 1 }
            lexLine(from: lineStart, to: contentEnd)
            if lineEnd >= count { break }
            lineStart = lineEnd + 1
        }
    }

    func location(_ column: Int) -> SourceLocation {
        SourceLocation(file: file, line: line, column: column)
    }

    mutating func error(_ message: String, at column: Int) {
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
    /// (C0, DEL and C1; a carriage return is allowed only before a line feed) and a byte order
    /// mark after the start of the file.
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
            // The C1 controls, U+0080…U+009F (C2 80…C2 9F): NEXT LINE (U+0085) and the others
            // are control characters as much as the C0 ones, invisible in an editor.
            if b == 0xC2, i + 1 < end, (0x80...0x9F).contains(bytes[i + 1]) {
                return (column, "control character \(unicodeName(UInt32(bytes[i + 1]))) is not allowed")
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
    mutating func reportIndicator() -> Bool {
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
    mutating func advance() {
        pos += 1
        while pos < end, bytes[pos] & 0xC0 == 0x80 { pos += 1 }
        col += 1
    }

    mutating func skipWhiteSpace() {
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
