import BlurfarmCore
import BlurfarmManifest
import BlurfarmSystem
import Foundation

/// `apply`'s arguments read: its inputs as globs, `-o`'s template.
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

extension PathTemplate {
    /// `apply -o`'s template: a manifest path's placeholders but `{size}` (`apply` has no `sizes:`).
    /// - Throws: ``OptionError`` naming `-o` when it is no template or uses `{size}`.
    public static func ofOutputOption(_ text: String) throws(OptionError) -> PathTemplate {
        let template: PathTemplate
        do {
            template = try PathTemplate(text)
        } catch {
            throw OptionError("-o '\(text)': \(error.message)")
        }
        if template.uses(.size) { throw OptionError("-o: '{size}' goes with a manifest's sizes:, which apply has not") }
        return template
    }

    /// `template` with `{stem}` as its file name's stem (`flat/thumb.webp` → `flat/{stem}.webp`):
    /// what `apply -o` suggests when one file is named for several inputs.
    public static func withStem(_ template: String) -> String {
        let folder = PathName.folder(of: template)
        let ext = PathName.pathExtension(of: template)
        let name = "{stem}" + (ext.isEmpty ? "" : "." + ext)
        return folder.isEmpty ? name : folder + "/" + name
    }
}
