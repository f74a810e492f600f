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
