extension String {
    /// The text with every control character (C0 such as newline and ESC, DEL, C1) and the
    /// backslash written as an escape: `\n`, `\r`, `\t`, `\\`, else `\u{1b}`. Text from
    /// outside (a plugin's message) shown as data: it can neither start a line of its own in a
    /// log or report nor drive a terminal.
    public var escapingControlCharacters: String {
        var escaped = ""
        for scalar in unicodeScalars {
            switch scalar {
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            case "\\": escaped += "\\\\"
            case _ where scalar.properties.generalCategory == .control:
                escaped += "\\u{\(String(scalar.value, radix: 16))}"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}
