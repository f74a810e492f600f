import BlurfarmCore

// The lexer's values: plain scalars, quoted strings with their escapes, inline lists.
extension ManifestLexer {
    /// Reads a plain scalar up to the line's end or a comment (and, in an inline list, up to
    /// ',' or ']'); trailing white space is not part of it. Reports a ': ' inside it.
    mutating func lexPlain(stoppingAtFlowIndicators inFlow: Bool) -> Node? {
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
    mutating func lexQuoted() -> Node {
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
                // A file name ends at a NUL: a path holding one would be written somewhere else
                // than the plan checked.
                guard value != 0 else {
                    error("'\\u{0}' (NUL) cannot be in a value: a path or a name ends at it", at: escapeColumn)
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
    mutating func lexInlineList() -> Node {
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
}
