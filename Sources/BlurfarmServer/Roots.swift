import BlurfarmSystem
import BlurfarmCore
import BlurfarmCoordinator
import BlurfarmImageIO
import BlurfarmKernels
import BlurfarmManifest
import Foundation

/// The folders a served job may read and write below (`--root`), resolved (links, `.`, `..`).
public struct Roots: Sendable {
    /// The folders, resolved.
    public let folders: [String]
    /// The folders as given (absolute).
    public let given: [String]

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
        given = folders.map { $0.hasPrefix("/") ? $0 : (Syscalls.realPath(".") ?? "") + "/" + $0 }
    }

    /// What the farm's writers keep to when a job's outputs are written: each output's folder
    /// opened beneath a root, by the roots as given and as resolved.
    public var confinement: RootConfinement { RootConfinement(roots: Array(Set(given + folders)).sorted()) }

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

    /// The regular file at `path`, opened for reading beneath the roots as the kernel resolves
    /// it at this moment (``RootConfinement/openFile(_:)``: never through a link leaving them,
    /// never blocking on a FIFO): its descriptor, to be closed by the caller.
    public func openFile(_ path: String) throws(RootedFileError) -> Int32 {
        do {
            return try confinement.openFile(path)
        } catch where error.code == .inputOutsideRoots {
            throw .outside(PathOutsideRoots(path: path, reason: error.message))
        } catch {
            throw .unreadable(path: path, reason: error.message)
        }
    }

    /// The bytes of the manifest at `path` read beneath the roots (``openFile(_:)``), at most
    /// one more than the manifest language's limit, so that the parser names a file too large.
    public func readManifest(_ path: String) throws(RootedFileError) -> [UInt8] {
        let file = FileHandle(fileDescriptor: try openFile(path), closeOnDealloc: true)
        do {
            return [UInt8](try file.read(upToCount: ManifestLimits.maximumBytes + 1) ?? Data())
        } catch {
            throw .unreadable(path: path, reason: "\(error)")
        }
    }

    /// The first folder `job`, read from `manifestPath`, would walk outside every root: the
    /// manifest's folder, or an input glob's fixed folder (an absolute glob, or one climbing
    /// with `..`), refused even when it matches nothing. Checked before the job is planned, so
    /// that a glob outside the roots is never walked and its files never named.
    public func firstOutside(_ job: JobSpec, manifestPath: String) -> String? {
        let folder = PathName.folder(of: manifestPath)
        let base = folder.isEmpty ? "." : folder
        let globFolders = job.inputs.compactMap { try? GlobPattern($0) }.map {
            JobPlanner.join(base, $0.fixedPrefix.isEmpty ? "." : $0.fixedPrefix)
        }
        var check = FolderCheck(roots: self)
        return ([base] + globFolders).first { !check.contains($0) }
    }

    /// The first file of `plan` (the folders of ``firstOutside(_:manifestPath:)``, an input,
    /// its region files, an output, the output map) outside every root, each file asked in
    /// turn (``FolderCheck``).
    public func firstOutside(_ plan: JobPlan) -> String? {
        if let folder = firstOutside(plan.job, manifestPath: plan.manifestPath) { return folder }
        var check = FolderCheck(roots: self)
        for input in plan.inputs {
            if !check.contains(input.path) { return input.path }
            for output in input.outputs where !check.contains(output.path) { return output.path }
        }
        // The region files too, those of inputs left out included: a line about one outside
        // the roots must not reach the client.
        let map = plan.job.map.map { [JobPlanner.join(plan.folder, $0)] } ?? []
        return (plan.regionFiles + map).first { !check.contains($0) }
    }

    /// ``contains(_:)`` of many files (relative ones against the working directory), each
    /// file's folder resolved once: a file that is not a link (or is not there) is below a
    /// root exactly when its folder is, as the kernel resolves the folder, so that only a link
    /// is resolved itself. Resolving every path whole (a `readlink` for each of its folders)
    /// was 38% of the processor time of a served job of 100,000 photos with nothing to do,
    /// checked at its submission and again at its turn.
    struct FolderCheck {
        let roots: Roots
        /// Whether each folder asked (absolute, as spelled) is below a root.
        private var folders: [Substring: Bool] = [:]
        /// The working directory, asked once.
        private lazy var here = Syscalls.realPath(".") ?? "/"

        init(roots: Roots) { self.roots = roots }

        mutating func contains(_ path: String) -> Bool {
            let absolute = path.hasPrefix("/") ? path : (here == "/" ? "/" : here + "/") + path
            guard let slash = absolute.lastIndex(of: "/") else { return roots.contains(absolute) }
            let name = absolute[absolute.index(after: slash)...]
            // A link (anywhere its target is), a name that is not a file's, the root folder:
            // resolved whole.
            if name.isEmpty || name == "." || name == ".." || slash == absolute.startIndex
                || Syscalls.linkStatus(absolute).map({ $0.st_mode & S_IFMT == S_IFLNK }) ?? false
            {
                return roots.contains(absolute)
            }
            let folder = absolute[..<slash]
            let below: Bool
            if let known = folders[folder] {
                below = known
            } else {
                below = roots.contains(String(folder))
                folders[folder] = below
            }
            // A folder outside every root may hold one: the file is asked itself.
            return below || roots.contains(absolute)
        }
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

/// Why a file the service reads beneath its roots cannot be read.
public enum RootedFileError: Error, Sendable, CustomStringConvertible {
    /// It is outside the roots, or resolving it leads out of them (403).
    case outside(PathOutsideRoots)
    /// It is there but cannot be read as a file: a FIFO, a device, a folder, the system's
    /// reason (a manifest's diagnostic: 422).
    case unreadable(path: String, reason: String)

    public var description: String {
        switch self {
        case .outside(let outside): outside.description
        case .unreadable(let path, let reason): "cannot read '\(ShownName.of(path))': \(reason)"
        }
    }
}
