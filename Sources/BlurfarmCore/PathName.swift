/// A path's folder and last name, read from its bytes: what NSString's
/// `deletingLastPathComponent` and `lastPathComponent` give, without them. In this toolchain's
/// Foundation they stop the process on a path of one character (`blurfarm check j` crashed) and
/// misread a name holding U+F780…U+F7FF (the characters that stand for bytes that are not
/// UTF-8 in file names): the folder of `\u{F7E9}/a` came back empty.
public enum PathName {
    /// The path without its last name: trailing `/`s left out, then what comes before the last
    /// `/` (`/` for a name at the root and for the root itself, empty for a name without a
    /// folder).
    public static func folder(of path: String) -> String { String(folderInPlace(of: path)) }

    /// ``folder(of:)`` as a part of `path`, not copied (the folders of a million outputs).
    public static func folderInPlace(of path: String) -> Substring {
        let trimmed = trimmed(path)
        if trimmed.isEmpty { return path.isEmpty ? "" : "/" }
        guard let slash = trimmed.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "" }
        let before = trimmed[..<slash]
        guard let last = before.utf8.lastIndex(where: { $0 != UInt8(ascii: "/") }) else { return "/" }
        return before[...last]
    }

    /// The path's last name: trailing `/`s left out, then what comes after the last `/` (`/`
    /// for the root itself, empty for an empty path).
    public static func lastName(of path: String) -> String {
        let trimmed = trimmed(path)
        if trimmed.isEmpty { return path.isEmpty ? "" : "/" }
        guard let slash = trimmed.utf8.lastIndex(of: UInt8(ascii: "/")) else { return String(trimmed) }
        return String(trimmed[trimmed.utf8.index(after: slash)...])
    }

    /// The extension of the path's last name: what follows its last `.`, empty when it has
    /// none, or when the name starts with its only `.` (`.jpg`, a hidden file): NSString's
    /// `pathExtension`, without its bridging (a twentieth of a no-change run with a map, a
    /// call an output).
    public static func pathExtension(of path: String) -> String {
        let name = trimmed(path)
        let start = name.utf8.lastIndex(of: UInt8(ascii: "/")).map { name.utf8.index(after: $0) } ?? name.startIndex
        guard let dot = name.utf8[start...].lastIndex(of: UInt8(ascii: ".")), dot != start else { return "" }
        return String(name[name.utf8.index(after: dot)...])
    }

    /// `path` without its trailing `/`s (empty for the root).
    private static func trimmed(_ path: String) -> Substring {
        guard let last = path.utf8.lastIndex(where: { $0 != UInt8(ascii: "/") }) else { return path[path.endIndex...] }
        return path[...last]
    }
}
