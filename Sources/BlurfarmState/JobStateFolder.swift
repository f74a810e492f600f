import BlurfarmCore
import BlurfarmSystem
import Foundation

/// Where one job keeps its lock and records in the state folder:
/// `<state>/jobs/<job name>-<16 hex digits>/`, the digits a hash of the manifest's real path
/// (every link, `.` and `..` resolved). A job is its manifest: two manifests that happen to give
/// the same `job:` name are two jobs, one manifest reached through a linked folder is one job,
/// and moving a manifest starts its records afresh.
public struct JobStateFolder: Sendable {
    /// The folder.
    public let path: String

    /// The folder of the job read from `manifestPath` (relative to the working directory) named
    /// `jobName`, in the state folder `state`.
    /// A state folder at `path` (a shard's, in its job's folder).
    package init(path: String) { self.path = path }

    public init(state: String, jobName: String, manifestPath: String) {
        let digits = ContentHash.of(RealPath.resolve(manifestPath)).prefix(16)
        path = (state as NSString).appendingPathComponent("jobs/\(jobName)-\(digits)")
    }

    /// The lock file.
    public var lockPath: String { (path as NSString).appendingPathComponent("lock") }

    /// Opens the folder `path` that blurfarm keeps files of its own in (creating it and its
    /// parents when missing), for `openat`: the folder itself may not be a symbolic link, and
    /// it must belong to the user running blurfarm and not be writable by others, so that
    /// nobody else can plant a link where blurfarm writes. Folders above it are taken as
    /// configured.
    /// - Throws: ``StateError`` naming the folder.
    package static func openFolder(_ path: String) throws(StateError) -> Int32 {
        // Each folder on the way made when missing; the first that cannot be is named, with the
        // system's reason (Foundation's said "The operation could not be completed"). A link
        // or a file where the folder goes is refused below, with its reason.
        var prefix = path.hasPrefix("/") ? "/" : ""
        for name in path.split(separator: "/") {
            prefix += (prefix.isEmpty || prefix.hasSuffix("/") ? "" : "/") + name
            if Syscalls.isFolder(prefix) { continue }
            do throws(SystemCallError) {
                _ = try Syscalls.makeFolder(prefix)
            } catch {
                let above = PathName.folder(of: prefix)
                throw StateError(
                    path: path,
                    message: "cannot create the state folder: "
                        + (error.errno == ENOTDIR ? "'\(above)' is not a folder" : "cannot make '\(prefix)': \(error.reason)"))
            }
        }
        let fd: Int32
        do {
            fd = try Syscalls.openFolder(path)
        } catch where error.errno == ELOOP || error.errno == ENOTDIR {
            throw StateError(path: path, message: "is a symbolic link or not a folder: refusing to keep state there")
        } catch {
            throw StateError(path: path, message: "cannot open: \(error.reason)")
        }
        let problem: String?
        if let info = try? Syscalls.status(of: fd) {
            problem =
                info.st_uid != Syscalls.effectiveUserID
                ? "belongs to uid \(info.st_uid), not to this user: refusing to keep state there"
                : info.st_mode & 0o002 != 0 ? "is writable by others: refusing to keep state there" : nil
        } else {
            problem = "cannot read its status"
        }
        if let problem {
            Syscalls.close(fd)
            throw StateError(path: path, message: problem)
        }
        return fd
    }

    /// `value` as JSON (keys sorted) in the file `name` of the folder `folder` (made when
    /// missing, ``openFolder(_:)``), replaced atomically (``replace(_:in:with:)``); `what` names
    /// the value in an error.
    /// - Throws: ``StateError`` naming the file.
    package static func writeJSON<Value: Encodable>(
        _ value: Value, named name: String, in folder: String, what: String
    ) throws(StateError) {
        let path = (folder as NSString).appendingPathComponent(name)
        let bytes: [UInt8]
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            bytes = Array(try encoder.encode(value))
        } catch {
            throw StateError(path: path, message: "cannot encode \(what): \(error)")
        }
        let descriptor = try openFolder(folder)
        defer { Syscalls.close(descriptor) }
        try replace(path, in: descriptor, with: bytes)
    }

    /// The file `name` of the folder `folder` read as JSON, or nil when there is no such
    /// regular file, it is larger than `maximumBytes` or it does not decode. Never follows a
    /// link, never waits on a FIFO.
    package static func readJSON<Value: Decodable>(_: Value.Type, named name: String, in folder: String, maximumBytes: Int) -> Value? {
        guard let bytes = readBytes(named: name, in: folder, maximumBytes: maximumBytes) else { return nil }
        return try? JSONDecoder().decode(Value.self, from: Data(bytes))
    }

    /// The bytes of the regular file `name` of the folder `folder`, or nil when there is no
    /// such file or it is larger than `maximumBytes`; read as ``readJSON(_:named:in:maximumBytes:)`` reads.
    package static func readBytes(named name: String, in folder: String, maximumBytes: Int) -> [UInt8]? {
        guard let descriptor = try? Syscalls.openFolder(folder) else { return nil }
        defer { Syscalls.close(descriptor) }
        guard let fd = try? Syscalls.openFile(name, in: descriptor, flags: O_RDONLY | O_NONBLOCK) else { return nil }
        defer { Syscalls.close(fd) }
        guard let info = try? Syscalls.status(of: fd), info.st_mode & S_IFMT == S_IFREG, info.st_size <= maximumBytes else {
            return nil
        }
        return try? Syscalls.readAll(fd, upTo: maximumBytes)
    }

    /// Replaces the file `path` in the open folder `folder` with `bytes`: a new temporary file
    /// beside it (`O_CREAT | O_EXCL | O_NOFOLLOW`: never an existing file or a planted link),
    /// flushed, then renamed over it in the same folder (a link at `path` is replaced, never
    /// followed).
    /// - Throws: ``StateError`` naming the file.
    package static func replace(_ path: String, in folder: Int32, with bytes: [UInt8]) throws(StateError) {
        try replace(path, in: folder) { write in try write(bytes) }
    }

    /// ``replace(_:in:with:)`` with the bytes `produce` hands its `write`, in order: a file
    /// too large to hold (a report of 300,000 outputs) written as it is made. Whatever
    /// `produce` throws leaves the file as it was, and is in the ``StateError``'s message.
    package static func replace(
        _ path: String, in folder: Int32, producing produce: (_ write: ([UInt8]) throws(SystemCallError) -> Void) throws -> Void
    ) throws(StateError) {
        let name = PathName.lastName(of: path)
        let temporary = ".\(name).tmp-\(Syscalls.processID)-\(UInt32.random(in: .min ... .max))"
        let fd: Int32
        do {
            fd = try Syscalls.openFile(temporary, in: folder, flags: O_WRONLY | O_CREAT | O_EXCL)
        } catch {
            throw StateError(path: path, message: "cannot create a temporary file beside it: \(error.reason)")
        }
        do {
            defer { Syscalls.close(fd) }
            try produce { bytes throws(SystemCallError) in try Syscalls.writeAll(fd, bytes) }
            try Syscalls.fsync(fd)
            try Syscalls.rename(temporary, to: name, in: folder)
        } catch {
            Syscalls.removeQuietly(temporary, in: folder)
            throw StateError(path: path, message: "cannot write: \((error as? SystemCallError)?.reason ?? "\(error)")")
        }
    }
}
