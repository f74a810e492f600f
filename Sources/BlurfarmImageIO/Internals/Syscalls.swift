// Every system call this module makes, retried on EINTR, failing with the errno.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A failed system call: which call, and its errno.
struct SystemCallError: Error {
    let call: String
    let errno: Int32

    /// The C library's text for the errno, e.g. "No such file or directory".
    var reason: String { String(cString: strerror(errno)) }
}

enum Syscalls {
    /// Calls `body` until it does not fail with EINTR; a negative result throws with errno.
    @discardableResult
    private static func retrying<T: BinaryInteger>(_ call: String, _ body: () -> T) throws(SystemCallError) -> T {
        while true {
            let result = body()
            if result >= 0 { return result }
            let code = Glibc.errno
            if code != EINTR { throw SystemCallError(call: call, errno: code) }
        }
    }

    /// The kind of thing at `path`, following links: nil when nothing is there.
    enum FileKind { case regular, directory, other }

    static func kind(of path: String) throws(SystemCallError) -> FileKind? {
        var info = stat()
        do {
            try retrying("stat") { stat(path, &info) }
        } catch where error.errno == ENOENT || error.errno == ENOTDIR {
            return nil
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .regular
        case S_IFDIR: return .directory
        default: return .other
        }
    }

    /// Seconds since `path` (not following a link) was last modified; nil when it cannot be
    /// read.
    static func age(of path: String) -> Double? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec - info.st_mtim.tv_sec) + Double(now.tv_nsec - info.st_mtim.tv_nsec) * 1e-9
    }

    static func openForReading(_ path: String) throws(SystemCallError) -> Int32 {
        try retrying("open") { open(path, O_RDONLY | O_CLOEXEC) }
    }

    /// Creates `path`, which must not exist, for writing; mode 0666 less the umask.
    static func createExclusive(_ path: String) throws(SystemCallError) -> Int32 {
        try retrying("open") { open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666) }
    }

    static func openDirectory(_ path: String) throws(SystemCallError) -> Int32 {
        try retrying("open") { open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
    }

    /// Writes all of `bytes` to `fd`.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(SystemCallError) {
        let failure: SystemCallError? = bytes.withUnsafeBytes { raw in
            var done = 0
            while done < raw.count {
                let n = write(fd, raw.baseAddress! + done, raw.count - done)
                if n > 0 {
                    done += n
                } else if n == 0 {
                    return SystemCallError(call: "write", errno: EIO)
                } else if Glibc.errno != EINTR {
                    return SystemCallError(call: "write", errno: Glibc.errno)
                }
            }
            return nil
        }
        if let failure { throw failure }
    }

    static func fsync(_ fd: Int32) throws(SystemCallError) {
        try retrying("fsync") { Glibc.fsync(fd) }
    }

    /// Closes `fd`. EINTR is not retried: on Linux the descriptor is gone either way.
    static func close(_ fd: Int32) throws(SystemCallError) {
        if Glibc.close(fd) != 0 && Glibc.errno != EINTR {
            throw SystemCallError(call: "close", errno: Glibc.errno)
        }
    }

    static func rename(_ from: String, _ to: String) throws(SystemCallError) {
        try retrying("rename") { Glibc.rename(from, to) }
    }

    /// The names in `folder` (without "." and ".."); none when it cannot be read.
    static func names(inFolder folder: String) -> [String] {
        guard let directory = opendir(folder) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Removes `path`, ignoring failure (used to clean up after another failure).
    static func removeQuietly(_ path: String) {
        _ = unlink(path)
    }

    /// Whether the calling process may create files in the folder `path`.
    static func canCreateFiles(in path: String) -> Bool {
        access(path, W_OK | X_OK) == 0
    }
}
