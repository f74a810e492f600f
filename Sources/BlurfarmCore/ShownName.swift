/// `name` as shown to people in a message or a log: control characters (C0, DEL, C1) are
/// written `\u{1b}`, and a backslash `\\`, so that a file name cannot forge a line or move the
/// cursor.
public func shown(_ name: String) -> String {
    var result = ""
    for scalar in name.unicodeScalars {
        switch scalar.value {
        case 0x5C: result += "\\\\"
        case 0..<0x20, 0x7F..<0xA0: result += "\\u{" + String(scalar.value, radix: 16) + "}"
        default: result.unicodeScalars.append(scalar)
        }
    }
    return result
}
