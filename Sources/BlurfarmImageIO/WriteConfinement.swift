import BlurfarmCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Folders writes must stay below (the service's --root): the output's folder is opened beneath one of them without leaving it by a link.
///
/// A root contains an output's folder when the root's path is a leading part of the folder's,
/// whole names compared (relative paths are taken from the working directory; `.` and empty
/// names are dropped), or else of the folder's path resolved (`realpath`: a root named through
/// a link, a `..`), which only picks the root. From the open root the rest is opened with
/// `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)` (Linux 5.6 on): a link on the way is
/// followed only while it stays inside the root, and `..` only while it does. The temporary
/// file is then created and renamed in that one open folder, so a folder swapped for a link
/// after the check cannot take the file elsewhere. Each root itself is opened as given (it is
/// trusted, links and all).
public struct WriteConfinement: Sendable, Equatable {
    /// The folders outputs must stay below, as given (absolute, or relative to the working
    /// directory).
    public let roots: [String]

    /// Confines writes below `roots`; with no roots, every write is refused.
    public init(roots: [String]) { self.roots = roots }

    /// How many times a resolution interrupted by a concurrent rename or mount (`openat2`'s
    /// EAGAIN) is tried again before the write fails: such a race passes at once unless
    /// someone keeps renaming folders in the root, which a write should not wait out.
    static let raceRetries = 16

    /// Opens the folder `output.folder` beneath the first root that contains it and lets it
    /// resolve there (longest root first).
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
        // The root is found by the folder's path as written or, when no root's path leads it
        // (a root given through a link, a `..` on the way), as resolved now: the resolution
        // only picks the root and the rest's names; `openat2` then decides, so a folder swapped
        // for a link after it was resolved is refused all the same.
        var folder = Self.names(of: output.folder)
        func containing() -> [(String, [Substring])] {
            roots.map { ($0, Self.names(of: $0)) }.filter { folder.starts(with: $0.1) }.sorted { $0.1.count > $1.1.count }
        }
        var candidates = containing()
        if candidates.isEmpty, let resolved = Syscalls.realPath(output.folder) {
            folder = Self.names(of: resolved)
            candidates = containing()
        }
        var refusal: SystemCallError?
        for (root, names) in candidates {
            let rootFolder: Int32
            do {
                rootFolder = try Syscalls.openDirectory(root)
            } catch {
                throw fail(.outputFolderNotWritable, "cannot open the root '\(root)': \(error.call) failed: \(error.reason)")
            }
            defer { try? Syscalls.close(rootFolder) }
            let rest = folder.dropFirst(names.count)
            let relative = rest.isEmpty ? "." : rest.joined(separator: "/")
            var attempt = 0
            resolving: while true {
                do {
                    return try Syscalls.openFolder(relative, beneath: rootFolder)
                } catch where error.errno == EAGAIN && attempt < Self.raceRetries {
                    attempt += 1
                } catch where error.errno == EXDEV || error.errno == ELOOP {
                    refusal = error
                    break resolving
                } catch where error.errno == ENOENT || error.errno == ENOTDIR {
                    throw fail(.outputFolderMissing, "folder '\(output.folder)' does not exist (\(error.reason))")
                } catch where error.errno == EACCES {
                    throw fail(.outputFolderNotWritable, "folder '\(output.folder)': \(error.call) failed: \(error.reason)")
                } catch {
                    throw fail(.writeFailed, "cannot open folder '\(output.folder)' beneath '\(root)': "
                        + "\(error.call) failed: \(error.reason)")
                }
            }
        }
        let shownRoots = roots.map { "'\($0)'" }.joined(separator: ", ")
        guard let refusal else {
            throw fail(.outputOutsideRoots, "folder '\(output.folder)' is not below any root (\(shownRoots))")
        }
        throw fail(
            .outputOutsideRoots,
            "folder '\(output.folder)' leads outside the roots (\(shownRoots)) by a link or '..' (\(refusal.reason)): nothing written")
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
        defer { try? Syscalls.close(parent) }
        do {
            return try Syscalls.makeFolder(folder.fileName, in: parent)
        } catch {
            throw ImageIOError(
                code: .outputFolderNotWritable, path: path, message: "cannot create the folder: \(error.call) failed: \(error.reason)")
        }
    }

    /// The names of `path` from the file system's root (a relative path from the working
    /// directory's), without `.` and empty names.
    static func names(of path: String) -> [Substring] {
        let absolute = path.hasPrefix("/") ? path : Syscalls.workingDirectory() + "/" + path
        return absolute.split(separator: "/").filter { $0 != "." }
    }
}
