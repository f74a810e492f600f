// Every system call of the coordinator's output folders and pruning, retried on EINTR,
// failing with the errno.
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

    /// What `lstat` says of `path` (a link is not followed): its device, inode and whether
    /// it is a folder; nil when nothing is there.
    static func identity(of path: String) throws(SystemCallError) -> (device: UInt64, inode: UInt64, isFolder: Bool)? {
        var info = stat()
        do {
            try retrying("lstat") { lstat(path, &info) }
        } catch where error.errno == ENOENT || error.errno == ENOTDIR {
            return nil
        }
        return (UInt64(info.st_dev), UInt64(info.st_ino), info.st_mode & S_IFMT == S_IFDIR)
    }

    /// Creates the folder `path` (mode 0777 less the umask): true when this call created it,
    /// false when something was there already.
    static func makeFolder(_ path: String) throws(SystemCallError) -> Bool {
        do {
            try retrying("mkdir") { mkdir(path, 0o777) }
            return true
        } catch where error.errno == EEXIST {
            return false
        }
    }

    /// Removes the folder `path` if it is empty: true when removed, false when it holds
    /// anything (or is not there).
    static func removeEmptyFolder(_ path: String) throws(SystemCallError) -> Bool {
        do {
            try retrying("rmdir") { rmdir(path) }
            return true
        } catch where [ENOTEMPTY, EEXIST, ENOENT].contains(error.errno) {
            return false
        }
    }

    /// Removes the file `path`.
    static func removeFile(_ path: String) throws(SystemCallError) {
        try retrying("unlink") { unlink(path) }
    }
}
