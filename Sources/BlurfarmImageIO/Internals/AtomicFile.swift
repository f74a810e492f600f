import BlurfarmSystem
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
        do throws(SystemCallError) {
            try Syscalls.checkCanCreateFiles(in: folder)
        } catch {
            // A read-only file system refuses every write there, not this one alone.
            throw .writing(path, error, message: "folder '\(folder)' is not writable: \(error.reason)", otherwise: .outputFolderNotWritable)
        }
    }
}

/// Writes whole files so that readers see the old file or the new one, never a mix, and a
/// crash never leaves a half-written file under the real name.
enum AtomicFile {
    /// Longest part of the real file name kept in a temporary name (names are limited to 255
    /// bytes on most file systems; ".", ".blurfarm-", the host (at most 40 bytes), the pid and
    /// twelve random characters are added).
    static let temporaryNameStemLimit = 170

    /// What a temporary name has between the file's name and the writer's host.
    static let temporaryMarker = ".blurfarm-"

    /// The extended attribute a temporary file gets when it is created: the name's
    /// `<host>-<pid>-<random>` tail. The sweep removes only files that carry it, that this user
    /// owns and that no link leads to: a file that merely looks like a temporary file is never
    /// removed.
    static let markerAttribute = "user.blurfarm.temporary"

    /// This host's name as temporary names carry it: letters, digits, `.` and `_` (others become
    /// `_`), at most 40 bytes.
    static let host: String = {
        let kept = Syscalls.hostName().unicodeScalars.prefix(40).map { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == ".")
                ? Character(scalar) : "_"
        }
        return kept.isEmpty ? "_" : String(kept)
    }()

    /// Removes the temporary files in `folder` that this host's writers left behind: names
    /// `.<name>.blurfarm-<host>-<pid>-<twelve characters>` with this host, no process `pid`
    /// (a run killed with SIGKILL, a crash, a power cut), untouched for `minimumAge` seconds,
    /// and proven blurfarm's: a regular file (not a link), owned by this user, whose extended
    /// attribute ``markerAttribute`` holds the name's tail as written when it was created. A
    /// file of a live process, of another host, or that cannot be proven (a file system without
    /// extended attributes) is kept. Returns the paths removed; a folder that cannot be listed
    /// gives none.
    static func removeAbandoned(inFolder folder: String, minimumAge: Double) -> [String] {
        guard let directory = try? Syscalls.openFolder(folder, followingLinks: true) else { return [] }
        defer { Syscalls.close(directory) }
        var removed: [String] = []
        let prefix = temporaryMarker + host + "-"
        for name in Syscalls.names(inFolder: folder) where name.hasPrefix(".") {
            guard let marker = name.range(of: prefix, options: .backwards) else { continue }
            let tail = name[marker.upperBound...].split(separator: "-", omittingEmptySubsequences: false)
            guard tail.count == 2, tail[1].utf8.count == 12, let pid = Int32(tail[0]), pid > 0, pid != Syscalls.processID,
                !Syscalls.isRunning(pid)
            else { continue }
            guard let file = try? Syscalls.openToInspect(name, in: directory) else { continue }
            defer { Syscalls.close(file) }
            guard let info = try? Syscalls.status(of: file), info.st_mode & S_IFMT == S_IFREG,
                info.st_uid == Syscalls.effectiveUserID, age(info) >= minimumAge,
                Syscalls.attribute(file, markerAttribute) == "\(host)-\(tail[0])-\(tail[1])"
            else { continue }
            Syscalls.removeQuietly(name, in: directory)
            removed.append("\(folder)/\(name)")
        }
        return removed
    }

    /// Seconds since the file was last modified.
    private static func age(_ info: stat) -> Double {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec - info.st_mtim.tv_sec) + Double(now.tv_nsec - info.st_mtim.tv_nsec) * 1e-9
    }

    /// A new temporary name for `output` written by `pid`:
    /// `.<name>.blurfarm-<host>-<pid>-<twelve random characters>`, and its tail after the marker
    /// (the value of ``markerAttribute``).
    static func temporaryName(for output: OutputPath, pid: Int32) -> (name: String, tail: String) {
        var stem = output.fileName
        while stem.utf8.count > temporaryNameStemLimit { stem.removeLast() }
        let tail = "\(host)-\(pid)-\(randomSuffix())"
        return (".\(stem)\(temporaryMarker)\(tail)", tail)
    }

    /// The `ImageIOError` for a failure to create a file in the output's folder: the folder
    /// gone (`.outputFolderMissing`), not writable (`.outputFolderNotWritable`), or anything
    /// else (``ImageIOError/writing(_:_:message:otherwise:)``: no room, no inodes, a read-only
    /// file system, an I/O error).
    private static func creationFailure(_ output: OutputPath, _ error: SystemCallError) -> ImageIOError {
        let message = "\(error.call) failed: \(error.reason)"
        switch error.errno {
        case ENOENT, ENOTDIR: return ImageIOError(code: .outputFolderMissing, path: output.path, message: message)
        case EACCES, EPERM: return ImageIOError(code: .outputFolderNotWritable, path: output.path, message: message)
        default: return .writing(output.path, error)
        }
    }

    /// Creates a new temporary file for `output` in the open folder `folder`:
    /// ``temporaryName(for:pid:)``, never an existing file or link (`O_EXCL | O_NOFOLLOW`: a
    /// planted name makes it pick another), marked with ``markerAttribute`` (on a file system
    /// without extended attributes it is written all the same, and the sweep leaves it alone).
    /// `pid` is the writer's (the tests name a dead one). Returns the descriptor and the file's
    /// name.
    static func createTemporary(
        for output: OutputPath, in folder: Int32, pid: Int32 = Syscalls.processID
    ) throws(ImageIOError) -> (descriptor: Int32, name: String) {
        for _ in 0..<100 {
            let (name, tail) = temporaryName(for: output, pid: pid)
            let descriptor: Int32
            do {
                descriptor = try Syscalls.createExclusive(name, in: folder)
            } catch where error.errno == EEXIST || error.errno == ELOOP {
                continue
            } catch {
                throw creationFailure(output, error)
            }
            try? Syscalls.setAttribute(descriptor, markerAttribute, tail)
            return (descriptor, name)
        }
        throw ImageIOError(code: .writeFailed, path: output.path, message: "no free temporary file name")
    }

    /// A file being written for an output: its descriptor, and its name in the output's
    /// folder, nil while it has none (an unnamed file, which vanishes with the process).
    struct TemporaryFile {
        let descriptor: Int32
        var name: String?
    }

    /// Creates the file `output` is written to, in its open folder `folder`: an unnamed one
    /// (`O_TMPFILE`) where the file system makes them, so that a process killed while it writes
    /// (SIGKILL, a power cut) leaves nothing behind; else a named temporary file
    /// (``createTemporary(for:in:pid:)``), which the sweep removes later. `unnamed` false skips
    /// the first (the tests' way to a file system without them).
    static func createFile(
        for output: OutputPath, in folder: Int32, unnamed: Bool = true
    ) throws(ImageIOError) -> TemporaryFile {
        if unnamed {
            do {
                return TemporaryFile(descriptor: try Syscalls.createUnnamed(in: folder), name: nil)
            } catch where error.errno == EOPNOTSUPP || error.errno == EISDIR || error.errno == EINVAL {
                // This file system has no unnamed files (or this kernel): a named one.
            } catch {
                throw creationFailure(output, error)
            }
        }
        let (descriptor, name) = try createTemporary(for: output, in: folder)
        return TemporaryFile(descriptor: descriptor, name: name)
    }

    /// Gives the unnamed file open on `descriptor` a new temporary name in `folder`, marked as
    /// ``createTemporary(for:in:pid:)`` marks one, and returns it. `linkat` cannot replace a
    /// file, so the name is a fresh random one (another is drawn when it exists), which a
    /// rename then moves over the output: only between the two does the file have a name a
    /// killed process would leave (the sweep's to remove).
    static func link(_ descriptor: Int32, for output: OutputPath, in folder: Int32) throws(SystemCallError) -> String {
        for _ in 0..<100 {
            let (name, tail) = temporaryName(for: output, pid: Syscalls.processID)
            try? Syscalls.setAttribute(descriptor, markerAttribute, tail)
            do {
                try Syscalls.link(descriptor, as: name, in: folder)
                return name
            } catch where error.errno == EEXIST {
                continue
            }
        }
        throw SystemCallError(call: "linkat", errno: EEXIST)
    }

    /// Writes `bytes` to a new temporary file beside `output`, atomically
    /// (``write(to:temporaryFiles:confinement:contents:)``).
    static func write(
        _ bytes: [UInt8], to output: OutputPath, temporaryFiles: TemporaryFiles?, confinement: RootConfinement? = nil
    ) throws(ImageIOError) {
        let folder = try openFolder(of: output, confinement: confinement)
        defer { Syscalls.close(folder) }
        try write(bytes, to: output, inFolder: folder, temporaryFiles: temporaryFiles)
    }

    /// Writes `bytes` to a new temporary file for `output` in its open folder `folder`,
    /// atomically (``write(to:inFolder:temporaryFiles:unnamed:contents:)``).
    static func write(
        _ bytes: [UInt8], to output: OutputPath, inFolder folder: Int32, temporaryFiles: TemporaryFiles?
    ) throws(ImageIOError) {
        try write(to: output, inFolder: folder, temporaryFiles: temporaryFiles) { (descriptor) throws(ImageIOError) in
            do throws(SystemCallError) {
                try Syscalls.writeAll(descriptor, bytes)
            } catch {
                throw .writing(output.path, error)
            }
        }
    }

    /// Opens the folder of `output`: beneath one of the roots of `confinement` when it is given
    /// (``RootConfinement/openFolder(of:)``), else as its path says.
    ///
    /// - Throws: `ImageIOError` with code `.outputFolderMissing`, `.outputFolderNotWritable`,
    ///   `.outputOutsideRoots` or `.writeFailed`.
    static func openFolder(of output: OutputPath, confinement: RootConfinement?) throws(ImageIOError) -> Int32 {
        if let confinement { return try confinement.openFolder(of: output) }
        do {
            return try Syscalls.openFolder(output.folder, followingLinks: true)
        } catch where error.errno == ENOENT || error.errno == ENOTDIR {
            throw ImageIOError(code: .outputFolderMissing, path: output.path, message: "\(error.call) failed: \(error.reason)")
        } catch {
            throw ImageIOError(
                code: .outputFolderNotWritable, path: output.path, message: "\(error.call) failed: \(error.reason)")
        }
    }

    /// Opens the folder of `output` (``openFolder(of:confinement:)``) and writes the file in it
    /// (``write(to:inFolder:temporaryFiles:contents:)``).
    static func write(
        to output: OutputPath, temporaryFiles: TemporaryFiles?, confinement: RootConfinement?,
        contents: (Int32) throws(ImageIOError) -> Void
    ) throws(ImageIOError) {
        let folder = try openFolder(of: output, confinement: confinement)
        defer { Syscalls.close(folder) }
        try write(to: output, inFolder: folder, temporaryFiles: temporaryFiles, contents: contents)
    }

    /// Creates the file for `output` in its open folder `folder` (``createFile(for:in:unnamed:)``),
    /// has `contents` write the file's bytes to its descriptor, fsyncs it, gives it a
    /// temporary name when it has none (``link(_:for:in:)``), renames it over `output` and
    /// fsyncs the folder, all in that one descriptor of the folder (which stays open). When
    /// anything fails (`contents` too), removes the temporary file and leaves `output` as it
    /// was. While the file has a name, its path is in `temporaryFiles`.
    static func write(
        to output: OutputPath, inFolder folder: Int32, temporaryFiles: TemporaryFiles?, unnamed: Bool = true,
        contents: (Int32) throws(ImageIOError) -> Void
    ) throws(ImageIOError) {
        let file = try createFile(for: output, in: folder, unnamed: unnamed)
        var descriptor = file.descriptor
        var temporary = file.name
        var registered: String?
        func register(_ name: String) {
            registered = "\(output.folder)/\(name)"
            temporaryFiles?.insert(registered!)
        }
        defer { if let registered { temporaryFiles?.remove(registered) } }
        if let temporary { register(temporary) }

        do {
            try contents(descriptor)
        } catch {
            Syscalls.close(descriptor)
            if let temporary { Syscalls.removeQuietly(temporary, in: folder) }
            throw error
        }
        do {
            try Syscalls.fsync(descriptor)
            if temporary == nil {
                let name = try link(descriptor, for: output, in: folder)
                temporary = name
                register(name)
            }
            let closing = descriptor
            descriptor = -1
            try Syscalls.closeReporting(closing)
            try Syscalls.rename(temporary!, to: output.fileName, in: folder)
        } catch {
            if descriptor >= 0 { Syscalls.close(descriptor) }
            if let temporary { Syscalls.removeQuietly(temporary, in: folder) }
            throw .writing(output.path, error)
        }

        // Make the rename itself durable. File systems that cannot sync a folder say EINVAL.
        do {
            try Syscalls.fsync(folder)
        } catch where error.errno == EINVAL {
            return
        } catch {
            throw ImageIOError(
                code: .writeFailed, path: output.path,
                message: "written, but syncing its folder failed (\(error.call): \(error.reason))")
        }
    }

    /// Twelve random letters and digits: six from each of two 64-bit draws (a draw is a
    /// `getrandom` call; a character each was twelve calls an output).
    private static func randomSuffix() -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".utf8)
        var generator = SystemRandomNumberGenerator()
        var characters: [UInt8] = []
        for _ in 0..<2 {
            var draw: UInt64 = generator.next()
            for _ in 0..<6 {
                characters.append(alphabet[Int(draw % UInt64(alphabet.count))])
                draw /= UInt64(alphabet.count)
            }
        }
        return String(decoding: characters, as: UTF8.self)
    }
}
