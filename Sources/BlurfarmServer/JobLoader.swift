import BlurfarmCore
import BlurfarmCoordinator
import BlurfarmImageIO
import BlurfarmKernels
import BlurfarmManifest

/// Reads, checks and plans one manifest, the way every command does (`check`, `run` and the
/// service): decoded against the registry's filters, outputs in a format this libvips can
/// write, planned over the file system. Every problem is a diagnostic, compiler style.
public struct JobLoader: Sendable {
    /// The configuration in force (the default tile).
    public var configuration: FarmConfiguration
    /// Built-in filters and the configuration's plugins.
    public var registry: FilterRegistry
    /// The other files every job reads (the configuration, the plugins' libraries): outputs
    /// may never overwrite these.
    public var reads: [String]

    /// A loader for `configuration` and `registry`.
    public init(configuration: FarmConfiguration, registry: FilterRegistry, reads: [String]) {
        self.configuration = configuration
        self.registry = registry
        self.reads = reads
    }

    /// The plan of the manifest file at `path`.
    public func plan(fileAtPath path: String) -> Result<JobPlan, Diagnostics> {
        JobDecoder.decode(fileAtPath: path, filters: registry.descriptors).flatMap { plan($0, manifestPath: path) }
    }

    /// The plan of a manifest's `text`, read as the file `manifestPath` (its folder is what its
    /// paths are relative to; diagnostics name it).
    public func plan(text: String, manifestPath: String) -> Result<JobPlan, Diagnostics> {
        JobDecoder.decode(text, file: manifestPath, filters: registry.descriptors).flatMap {
            plan($0, manifestPath: manifestPath)
        }
    }

    /// The plan of the decoded `job`, read from `manifestPath`.
    public func plan(_ job: JobSpec, manifestPath: String) -> Result<JobPlan, Diagnostics> {
        let unwritable = job.unwritableOutputs(ImageWriter.unavailability)
        if unwritable.hasErrors { return .failure(unwritable) }
        return JobPlanner.plan(job, manifestPath: manifestPath, defaultTile: configuration.tile, reads: reads)
    }
}

/// The folders a served job may read and write below (`--root`), resolved (links, `.`, `..`).
public struct Roots: Sendable {
    /// The folders, resolved.
    public let folders: [String]

    /// `folders` resolved; the first that does not exist is returned as the error.
    public init(_ folders: [String]) throws(PathOutsideRoots) {
        var resolved: [String] = []
        for folder in folders {
            guard let real = Syscalls.realPath(folder) else {
                throw PathOutsideRoots(path: folder, reason: "the root folder does not exist")
            }
            resolved.append(real)
        }
        self.folders = resolved
    }

    /// Whether `path`, as the kernel resolves it, is at or below a root: an existing file
    /// through every link; one that does not exist yet through its nearest existing folder,
    /// the rest of its name holding no `..`.
    public func contains(_ path: String) -> Bool {
        guard path.hasPrefix("/") else { return false }
        var existing = path
        var rest: [Substring] = []
        while Syscalls.realPath(existing) == nil {
            let cut = existing.lastIndex(of: "/") ?? existing.startIndex
            rest.insert(existing[existing.index(after: cut)...], at: 0)
            existing = cut == existing.startIndex ? "/" : String(existing[..<cut])
        }
        guard !rest.contains(".."), let real = Syscalls.realPath(existing) else { return false }
        return folders.contains { real == $0 || real.hasPrefix($0 == "/" ? "/" : $0 + "/") }
    }

    /// The first file of `plan` (the manifest's folder, an input, an output) outside every root.
    public func firstOutside(_ plan: JobPlan) -> String? {
        let paths = [plan.folder] + plan.inputs.flatMap { [$0.path] + $0.outputs.map(\.path) }
        return paths.first { !contains(absolute($0)) }
    }

    /// `path` made absolute against the working directory.
    private func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        let here = Syscalls.realPath(".") ?? "/"
        return here == "/" ? "/" + path : here + "/" + path
    }
}

/// A path a served job may not use: outside the roots (the API's 403).
public struct PathOutsideRoots: Error, Sendable, Equatable, CustomStringConvertible {
    /// The path as the job names it.
    public let path: String
    /// Why.
    public let reason: String

    public init(path: String, reason: String = "outside the server's roots (--root)") {
        self.path = path
        self.reason = reason
    }

    public var description: String { "'\(ShownName.of(path))': \(reason)" }
}
