import BlurfarmManifest
import BlurfarmSystem
import Foundation

extension GlobPattern {
    /// An input argument (`apply INPUT... -o`) as an input glob: a file that exists is itself
    /// (its wildcard characters escaped: a shell expanded `*.jpg` to it), anything else a glob
    /// blurfarm expands (quoted on the command line); relative to the working directory either
    /// way, its empty and `.` segments dropped (`in//a.jpg`, `./in/./a.jpg` are `in/a.jpg`), as
    /// the kernel reads them.
    /// - Throws: ``OptionError`` naming the argument when it is no file and not a glob.
    public static func ofArgument(_ argument: String) throws(OptionError) -> String {
        let segments = argument.split(separator: "/", omittingEmptySubsequences: true).filter { $0 != "." }
        let path = (argument.hasPrefix("/") ? "/" : "") + segments.joined(separator: "/")
        let glob = FileManager.default.fileExists(atPath: path) && !segments.isEmpty ? GlobPattern.escaping(path) : path
        do {
            _ = try GlobPattern(glob)
        } catch {
            throw OptionError("'\(ShownName.of(argument))' is no file, and not a glob: \(error.message)")
        }
        return glob
    }
}
