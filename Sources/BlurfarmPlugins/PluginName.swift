/// The rules for plugin names: a name is never a path.
enum PluginName {
    /// The longest plugin name, in bytes (a policy: names are typed in manifests).
    static let longest = 64

    /// Whether `name` is lower-case ASCII letters, digits and `-`, starting with a letter, at
    /// most ``longest`` bytes: what manifests can write, and never a path.
    static func isValid(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, bytes.count <= longest, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first)
        else { return false }
        return bytes.allSatisfy {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                || $0 == UInt8(ascii: "-")
        }
    }

    /// Why `name` cannot be a plugin's name, or `nil` when it can.
    static func problem(_ name: String) -> PluginError? {
        if name.contains("/") || name.contains("..") || name.contains("\0") {
            return PluginError(
                "'\(name)'", "a plugin name is never a path: plugins load by name from the plugin folders only")
        }
        if !isValid(name) {
            return PluginError(
                "'\(name)'", "not a plugin name: lower-case letters, digits and '-', starting with a letter")
        }
        return nil
    }

    /// The file a plugin named `name` is loaded from: `lib<name>.so` (SwiftPM's name for a
    /// dynamic library product).
    static func fileName(_ name: String) -> String { "lib\(name).so" }

    /// The plugin name a file in a plugin folder stands for, when its name is `lib<name>.so`.
    static func name(ofFile file: String) -> String? {
        guard file.hasPrefix("lib"), file.hasSuffix(".so"), file.count > 6 else { return nil }
        return String(file.dropFirst(3).dropLast(3))
    }
}
