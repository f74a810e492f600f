import BlurfarmSystem
import BlurfarmCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Folders a job's files must stay below (the service's --root): each output's folder, and each
/// input, is opened beneath one of them without leaving it by a link.
///
/// A root contains a path when the root's path is a leading part of it, whole names compared
/// (relative paths are taken from the working directory; `.` and empty names are dropped). From
/// the open root the rest is opened with `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`
/// (Linux 5.6 on): a relative link on the way is followed only while it stays inside the root,
/// `..` only while it does. A path below no root as written, or leaving its root so (an
/// absolute link, which `RESOLVE_BENEATH` never follows, a link into another root), is tried
/// once more as resolved now (`realpath`), which only picks the root and the names: the roots
/// are one set of places, and whatever resolves inside them is inside. The temporary
/// file is then created and renamed in that one open folder, so a folder swapped for a link
/// after the check cannot take the file elsewhere; an input is read from its descriptor so
/// opened, never from its path again. Each root itself is opened as given (it is
/// trusted, links and all).
public struct RootConfinement: Sendable, Equatable {
    /// The folders outputs must stay below, as given (absolute, or relative to the working
    /// directory).
    public let roots: [String]

    /// Confines reads and writes below `roots`; with no roots, every one is refused.
    public init(roots: [String]) { self.roots = roots }

    /// How many times a resolution interrupted by a concurrent rename or mount (`openat2`'s
    /// EAGAIN) is tried again before the write fails: such a race passes at once unless
    /// someone keeps renaming folders in the root, which a write should not wait out.
    static let raceRetries = 16

    /// Why ``resolve(_:flags:)`` opened nothing.
    enum Refusal: Error {
        /// No root contains the path.
        case notBelowAnyRoot
        /// Resolving it left each root that contains it (a link, `..`, a magic link).
        case leavesRoots(SystemCallError)
        /// A name on the way does not exist or is not a folder.
        case missing(SystemCallError)
        /// A folder on the way cannot be searched.
        case denied(SystemCallError)
        /// The root itself cannot be opened.
        case rootUnopenable(String, SystemCallError)
        /// Anything else (ENOSYS: a kernel older than 5.6).
        case failed(String, SystemCallError)
    }

    /// Opens `path` with `flags` beneath the first root that contains it and lets it resolve
    /// there (longest root first). The root is found by the path as written or, when that is
    /// below no root or leaves its root (a root given through a link, an absolute link inside
    /// a root, which `RESOLVE_BENEATH` never follows, a `..`, a link into another root), by the
    /// path as resolved now: the resolution only picks the root and the rest's names, which hold
    /// no link then; `openat2` decides, so a folder swapped for a link after it was resolved is
    /// refused all the same.
    func resolve(_ path: String, flags: Int32) -> Result<Int32, Refusal> {
        let written = Self.names(of: path)
        let first = open(written, flags: flags)
        // Left or never entered as written: try the path as resolved now (a root given through
        // a link, an absolute link inside a root, a `..`, a link from one root into another).
        switch first {
        case .failure(.notBelowAnyRoot), .failure(.leavesRoots):
            guard let resolved = Syscalls.realPath(path).map(Self.names(of:)), resolved != written else { return first }
            let again = open(resolved, flags: flags)
            if case .success = again { return again }
            if case .failure(.notBelowAnyRoot) = first { return again }
            return first
        default:
            return first
        }
    }

    /// Opens the path of names `target` (from the file system's root) with `flags` beneath the
    /// longest root that leads to it, then the others.
    private func open(_ target: [Substring], flags: Int32) -> Result<Int32, Refusal> {
        let candidates = roots.map { ($0, Self.names(of: $0)) }.filter { target.starts(with: $0.1) }
            .sorted { $0.1.count > $1.1.count }
        var refusal = Refusal.notBelowAnyRoot
        for (root, names) in candidates {
            let rootFolder: Int32
            do {
                rootFolder = try Syscalls.openFolder(root, followingLinks: true)
            } catch {
                return .failure(.rootUnopenable(root, error))
            }
            defer { Syscalls.close(rootFolder) }
            let rest = target.dropFirst(names.count)
            let relative = rest.isEmpty ? "." : rest.joined(separator: "/")
            var attempt = 0
            resolving: while true {
                do {
                    return .success(try Syscalls.openFile(relative, beneath: rootFolder, flags: flags))
                } catch where error.errno == EAGAIN && attempt < Self.raceRetries {
                    attempt += 1
                } catch where error.errno == EXDEV || error.errno == ELOOP {
                    refusal = .leavesRoots(error)
                    break resolving
                } catch where error.errno == ENOENT || error.errno == ENOTDIR {
                    return .failure(.missing(error))
                } catch where error.errno == EACCES {
                    return .failure(.denied(error))
                } catch {
                    return .failure(.failed(root, error))
                }
            }
        }
        return .failure(refusal)
    }

    /// The roots as messages show them.
    private var shownRoots: String { roots.map { "'\($0)'" }.joined(separator: ", ") }

    /// Opens the folder `output.folder` beneath the roots (``resolve(_:flags:)``).
    ///
    /// - Throws: `ImageIOError` with code `.outputOutsideRoots` when no root contains the
    ///   folder or it resolves outside each that does (a link to elsewhere, `..` above the root,
    ///   a magic link), `.outputFolderMissing` when a folder on the way does not exist or is not
    ///   a folder, `.outputFolderNotWritable` when one cannot be searched or a root cannot be
    ///   opened, `.writeFailed` for any other failure (ENOSYS: a kernel older than 5.6).
    func openFolder(of output: OutputPath) throws(ImageIOError) -> Int32 {
        func fail(_ code: ImageIOError.Code, _ message: String) -> ImageIOError {
            ImageIOError(code: code, path: output.path, message: message)
        }
        switch resolve(output.folder, flags: O_RDONLY | O_DIRECTORY) {
        case .success(let folder): return folder
        case .failure(.notBelowAnyRoot):
            throw fail(.outputOutsideRoots, "folder '\(output.folder)' is not below any root (\(shownRoots))")
        case .failure(.leavesRoots(let error)):
            throw fail(
                .outputOutsideRoots,
                "folder '\(output.folder)' leads outside the roots (\(shownRoots)) by a link or '..' (\(error.reason)): nothing written")
        case .failure(.missing(let error)):
            throw fail(.outputFolderMissing, "folder '\(output.folder)' does not exist (\(error.reason))")
        case .failure(.denied(let error)):
            throw fail(.outputFolderNotWritable, "folder '\(output.folder)': \(error.call) failed: \(error.reason)")
        case .failure(.rootUnopenable(let root, let error)):
            throw fail(.outputFolderNotWritable, "cannot open the root '\(root)': \(error.call) failed: \(error.reason)")
        case .failure(.failed(let root, let error)):
            throw fail(.writeFailed, "cannot open folder '\(output.folder)' beneath '\(root)': \(error.call) failed: \(error.reason)")
        }
    }

    /// Opens the regular file `path` for reading beneath the roots (``resolve(_:flags:)``),
    /// never blocking (a FIFO), and checks it is a regular file: a file whose folder, or the
    /// file itself, was swapped for a link out of the roots after the job was planned is
    /// refused, nothing of it read. The readers' inputs open this way, and so does whoever
    /// reads a confined job's file itself (the service: a manifest given by path, the
    /// thumbnail of the last output). The caller closes it.
    ///
    /// - Throws: `ImageIOError` with code `.inputOutsideRoots`, `.fileMissing` or
    ///   `.fileUnreadable` (not a regular file: a FIFO, a device, a folder).
    public func openFile(_ path: String) throws(ImageIOError) -> Int32 {
        let file = try openBeneath(path)
        try InputFile.checkOpened(file, path: path)
        return file
    }

    /// ``openFile(_:)`` before the check that the file is a regular one.
    private func openBeneath(_ path: String) throws(ImageIOError) -> Int32 {
        func fail(_ code: ImageIOError.Code, _ message: String) -> ImageIOError {
            ImageIOError(code: code, path: path, message: message)
        }
        switch resolve(path, flags: O_RDONLY | O_NONBLOCK | O_NOCTTY) {
        case .success(let file): return file
        case .failure(.notBelowAnyRoot): throw fail(.inputOutsideRoots, "not below any root (\(shownRoots))")
        case .failure(.leavesRoots(let error)):
            throw fail(.inputOutsideRoots, "leads outside the roots (\(shownRoots)) by a link or '..' (\(error.reason)): not read")
        case .failure(.missing): throw fail(.fileMissing, "no such file")
        case .failure(.denied(let error)), .failure(.rootUnopenable(_, let error)), .failure(.failed(_, let error)):
            throw fail(.fileUnreadable, "cannot open: \(error.call) failed: \(error.reason)")
        }
    }

    /// Makes the folder `path` in its parent, opened beneath the roots as an output's folder
    /// is (``openFolder(of:)``): a folder for outputs is never made outside them, whatever
    /// link its parent became. Returns false when something is already there.
    ///
    /// - Throws: `ImageIOError` as ``openFolder(of:)`` for the parent (naming `path`), or
    ///   `.outputFolderNotWritable` when the folder cannot be made.
    public func makeFolder(_ path: String) throws(ImageIOError) -> Bool {
        let folder = OutputPath(path)
        let parent = try openFolder(of: folder)
        defer { Syscalls.close(parent) }
        do {
            return try Syscalls.makeFolder(folder.fileName, in: parent)
        } catch {
            throw .writing(
                path, error, message: "cannot create the folder: \(error.call) failed: \(error.reason)", otherwise: .outputFolderNotWritable)
        }
    }

    /// The names of `path` from the file system's root (a relative path from the working
    /// directory's), without `.` and empty names.
    static func names(of path: String) -> [Substring] {
        let absolute = path.hasPrefix("/") ? path : Syscalls.workingDirectory() + "/" + path
        return absolute.split(separator: "/").filter { $0 != "." }
    }
}
