import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An output path split into its folder, file name and extension.
struct OutputPath {
    let path: String
    /// The folder holding the file ("." for a bare name).
    let folder: String
    /// The file name without its folder.
    let fileName: String
    /// The text after the file name's last dot ("" when there is none).
    let `extension`: String

    init(_ path: String) {
        self.path = path
        if let slash = path.lastIndex(of: "/") {
            let folderPart = path[..<slash]
            folder = folderPart.isEmpty ? "/" : String(folderPart)
            fileName = String(path[path.index(after: slash)...])
        } else {
            folder = "."
            fileName = path
        }
        if let dot = fileName.lastIndex(of: "."), dot != fileName.startIndex {
            `extension` = String(fileName[fileName.index(after: dot)...])
        } else {
            `extension` = ""
        }
    }

    /// Throws unless the folder exists, is a folder, and files can be created in it.
    func checkFolder() throws(ImageIOError) {
        let kind: Syscalls.FileKind?
        do {
            kind = try Syscalls.kind(of: folder)
        } catch {
            throw ImageIOError(
                code: .outputFolderNotWritable, path: path, message: "cannot reach folder '\(folder)': \(error.reason)")
        }
        guard let kind else {
            throw ImageIOError(code: .outputFolderMissing, path: path, message: "folder '\(folder)' does not exist")
        }
        guard kind == .directory else {
            throw ImageIOError(code: .outputFolderMissing, path: path, message: "'\(folder)' is not a folder")
        }
        guard Syscalls.canCreateFiles(in: folder) else {
            throw ImageIOError(
                code: .outputFolderNotWritable, path: path, message: "folder '\(folder)' is not writable")
        }
    }
}

/// Writes whole files so that readers see the old file or the new one, never a mix, and a
/// crash never leaves a half-written file under the real name.
enum AtomicFile {
    /// Temporary files being written now, so that an interrupted process can remove them
    /// before it exits (``ImageWriter/removeTemporaryFiles()``).
    static let inProgress = Mutex<Set<String>>([])

    /// Removes every temporary file being written now; returns how many there were.
    static func removeInProgress() -> Int {
        inProgress.withLock { paths in
            for path in paths { Syscalls.removeQuietly(path) }
            defer { paths.removeAll() }
            return paths.count
        }
    }

    /// Longest part of the real file name kept in a temporary name (names are limited to 255
    /// bytes on most file systems; ".", ".blurfarm-", the pid, "-" and six random characters
    /// are added).
    static let temporaryNameStemLimit = 200

    /// What a temporary name has between the file's name and the writer's pid.
    static let temporaryMarker = ".blurfarm-"

    /// Removes the temporary files in `folder` whose writer is gone: `.<name>.blurfarm-<pid>-
    /// <six characters>` where no process `pid` exists (a run killed with SIGKILL, a crash,
    /// a power cut) and that nobody has written for `minimumAge` seconds. A file of a live
    /// process, even another program's with that pid, is kept; the age guards a folder shared
    /// with another host or container, whose pids this process cannot see (a write takes
    /// seconds). Returns the paths removed; a folder that cannot be listed gives none.
    static func removeAbandoned(inFolder folder: String, minimumAge: Double) -> [String] {
        var removed: [String] = []
        for name in Syscalls.names(inFolder: folder) where name.hasPrefix(".") {
            let parts = name.split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count >= 3, parts[parts.count - 1].utf8.count == 6,
                parts[parts.count - 3].hasSuffix(temporaryMarker.dropLast()),
                let pid = Int32(parts[parts.count - 2]), pid > 0, pid != getpid(),
                kill(pid, 0) != 0, errno == ESRCH
            else { continue }
            let path = "\(folder)/\(name)"
            guard let age = Syscalls.age(of: path), age >= minimumAge else { continue }
            Syscalls.removeQuietly(path)
            removed.append(path)
        }
        return removed
    }

    /// Writes `bytes` to a new temporary file beside `output`, fsyncs it, renames it over
    /// `output` and fsyncs the folder. On failure, removes the temporary file.
    static func write(_ bytes: [UInt8], to output: OutputPath) throws(ImageIOError) {
        func fail(_ code: ImageIOError.Code, _ error: SystemCallError) -> ImageIOError {
            ImageIOError(code: code, path: output.path, message: "\(error.call) failed: \(error.reason)")
        }
        var stem = output.fileName
        while stem.utf8.count > temporaryNameStemLimit { stem.removeLast() }

        var descriptor: Int32 = -1
        var temporary = ""
        for _ in 0..<100 {
            temporary = "\(output.folder)/.\(stem)\(temporaryMarker)\(getpid())-\(randomSuffix())"
            do {
                descriptor = try Syscalls.createExclusive(temporary)
                break
            } catch where error.errno == EEXIST {
                continue
            } catch where error.errno == ENOENT || error.errno == ENOTDIR {
                throw fail(.outputFolderMissing, error)
            } catch where error.errno == EACCES || error.errno == EPERM || error.errno == EROFS {
                throw fail(.outputFolderNotWritable, error)
            } catch {
                throw fail(.writeFailed, error)
            }
        }
        guard descriptor >= 0 else {
            throw ImageIOError(code: .writeFailed, path: output.path, message: "no free temporary file name")
        }
        let created = temporary
        inProgress.withLock { _ = $0.insert(created) }
        defer { inProgress.withLock { _ = $0.remove(created) } }

        do {
            try Syscalls.writeAll(descriptor, bytes)
            try Syscalls.fsync(descriptor)
            let closing = descriptor
            descriptor = -1
            try Syscalls.close(closing)
            try Syscalls.rename(temporary, output.path)
        } catch {
            if descriptor >= 0 { try? Syscalls.close(descriptor) }
            Syscalls.removeQuietly(temporary)
            throw fail(.writeFailed, error)
        }

        // Make the rename itself durable. File systems that cannot sync a folder say EINVAL.
        do {
            let folder = try Syscalls.openDirectory(output.folder)
            defer { try? Syscalls.close(folder) }
            try Syscalls.fsync(folder)
        } catch where error.errno == EINVAL {
            return
        } catch {
            throw ImageIOError(
                code: .writeFailed, path: output.path,
                message: "written, but syncing its folder failed (\(error.call): \(error.reason))")
        }
    }

    /// Six random letters and digits.
    private static func randomSuffix() -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        var generator = SystemRandomNumberGenerator()
        return String((0..<6).map { _ in alphabet.randomElement(using: &generator)! })
    }
}
