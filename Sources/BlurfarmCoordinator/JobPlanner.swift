import BlurfarmCore
import BlurfarmManifest
import Foundation

/// Expands a job's globs over the file system and names every output: the plan that
/// `blurfarm check` prints and `blurfarm run` carries out.
public enum JobPlanner {
    /// Plans `job`, read from `manifestPath`. Problems that only the file system shows (two
    /// outputs on one path, an output that would overwrite an input) are diagnostics at the
    /// variant's `path:` in the manifest.
    public static func plan(_ job: JobSpec, manifestPath: String, defaultTile: Int) -> Result<JobPlan, Diagnostics> {
        let folder = (manifestPath as NSString).deletingLastPathComponent
        let base = folder.isEmpty ? "." : folder
        var diagnostics: [Diagnostic] = []

        let includes = job.inputs.compactMap { try? GlobPattern($0) }
        let excludes = job.exclude.compactMap { try? GlobPattern($0) }
        // Each file once, with {relpath} from the first glob that matches it.
        var found: [String: String] = [:]
        for glob in includes {
            for relative in files(under: glob.fixedPrefix, in: base) where found[relative] == nil {
                guard glob.matches(relative), !excludes.contains(where: { $0.matches(relative) }) else { continue }
                found[relative] = glob.relativeFolder(of: relative) ?? ""
            }
        }

        var inputs: [PlannedInput] = []
        var writers: [String: (input: String, variant: VariantSpec)] = [:]
        let inputPaths = Set(found.keys.map { normalise(join(base, $0)) })
        for relative in found.keys.sorted() {
            let name = (relative as NSString).lastPathComponent
            let ext = (name as NSString).pathExtension
            let stem = ext.isEmpty ? name : String(name.dropLast(ext.count + 1))
            let inputPath = join(base, relative)
            var outputs: [PlannedOutput] = []
            for variant in job.outputs {
                let expanded = variant.pathTemplate.expand(
                    stem: stem, ext: ext, name: name, relpath: found[relative]!, job: job.name, variant: variant.name)
                let path = normalise(join(base, expanded))
                if let other = writers[path] {
                    diagnostics.append(.error(
                        "variants '\(other.variant.name)' (for \(other.input)) and '\(variant.name)' (for \(relative)) both write '\(path)'",
                        at: variant.pathLocation))
                } else if inputPaths.contains(path) {
                    diagnostics.append(.error(
                        "variant '\(variant.name)' would overwrite its input '\(relative)'", at: variant.pathLocation))
                } else {
                    writers[path] = (relative, variant)
                    outputs.append(PlannedOutput(variant: variant, path: path))
                }
            }
            inputs.append(PlannedInput(path: inputPath, relativePath: relative, outputs: outputs))
        }
        if !diagnostics.isEmpty { return .failure(Diagnostics(diagnostics)) }
        return .success(JobPlan(
            job: job, manifestPath: manifestPath, folder: base, inputs: inputs, tileSize: job.tile ?? defaultTile))
    }

    /// Regular files below `prefix` (relative to `base`), as `/`-separated paths relative to
    /// `base`. Hidden folders are searched too; symbolic links to files count, links to folders
    /// below the glob's fixed folder are not followed (no cycles); the fixed folder itself may be one.
    static func files(under prefix: String, in base: String) -> [String] {
        let start = prefix.isEmpty ? base : join(base, prefix)
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: start, isDirectory: &isFolder) else { return [] }
        guard isFolder.boolValue else { return [prefix] }
        // The search starts from the real folder, so that a glob's fixed folder may be a link.
        let real = URL(fileURLWithPath: start).resolvingSymlinksInPath().path
        guard let walker = FileManager.default.enumerator(atPath: real) else { return [] }
        var result: [String] = []
        while let next = walker.nextObject() as? String {
            let full = join(real, next)
            var folder: ObjCBool = false
            if FileManager.default.fileExists(atPath: full, isDirectory: &folder), !folder.boolValue {
                result.append(prefix.isEmpty ? next : prefix + "/" + next)
            }
        }
        return result
    }

    static func join(_ folder: String, _ relative: String) -> String {
        if relative.hasPrefix("/") { return relative }
        return folder == "." ? relative : folder + "/" + relative
    }

    /// `a/./b` → `a/b`, `a/x/../b` → `a/b`: one spelling per path, so collisions are found.
    static func normalise(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            if part == "." { continue }
            if part == "..", let last = parts.last, last != ".." { parts.removeLast(); continue }
            parts.append(part)
        }
        let joined = parts.joined(separator: "/")
        return path.hasPrefix("/") ? "/" + joined : (joined.isEmpty ? "." : joined)
    }
}
