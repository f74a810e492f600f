// Every system call of blurfarm, retried on EINTR by one helper (`retrying`), failing with one
// error type (`SystemCallError`), after swift-nio's `NIOPosix/System.swift`: here those on files
// and folders, the process's own; processes, threads and limits in `Syscalls+Processes.swift`,
// `PixelStorage`'s mappings in `Syscalls+Memory.swift`, ImageIO's atomic files in `Syscalls+Files.swift`,
// `run --watch`'s in `Syscalls+Inotify.swift`. A module with calls of its own (shared memory,
// the plugin loader's `dlopen`) adds them in an extension of `Syscalls` through `retrying`. Every
// path and name is given to the kernel as the bytes it stands for (`PathEncoding.withCString`):
// a name that is not UTF-8 reaches the same file it was read from.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A failed system call: which call, and its errno. The one error of the system-call layer: a
/// module's own errors carry it as their cause (`SharedMemoryError`, `Threads.StartFailure`).
package struct SystemCallError: Error, Equatable, Sendable, CustomStringConvertible {
    package let call: String
    package let errno: Int32

    package init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    /// The C library's text for the errno, e.g. "No such file or directory".
    package var reason: String { String(cString: strerror(errno)) }

    /// "pipe: Too many open files".
    package var description: String { "\(call): \(reason)" }
}

package enum Syscalls {
    /// Calls `body` until it does not fail with EINTR; a negative result throws with errno.
    @discardableResult
    package static func retrying<T: BinaryInteger>(_ call: String, _ body: () -> T) throws(SystemCallError) -> T {
        while true {
            let result = body()
            if result >= 0 { return result }
            let code = Glibc.errno
            if code != EINTR { throw SystemCallError(call: call, errno: code) }
        }
    }

    /// ``retrying(_:_:)`` for a call that returns its error number instead of setting errno
    /// (`posix_spawn`, `pthread_create`): 0 is success.
    package static func retryingReturnedError(_ call: String, _ body: () -> Int32) throws(SystemCallError) {
        // Through the one EINTR loop: the returned number stands in for errno.
        try retrying(call) { () -> Int32 in
            let code = body()
            if code == 0 { return 0 }
            Glibc.errno = code
            return -1
        }
    }

    /// What `lstat` says of `path` (a link is not followed): its device, inode and whether
    /// it is a folder; nil when nothing is there.
    package static func identity(of path: String) throws(SystemCallError) -> (device: UInt64, inode: UInt64, isFolder: Bool)? {
        var info = stat()
        do {
            try retrying("lstat") { PathEncoding.withCString(path) { lstat($0, &info) } }
        } catch where error.errno == ENOENT || error.errno == ENOTDIR {
            return nil
        }
        return (UInt64(info.st_dev), UInt64(info.st_ino), info.st_mode & S_IFMT == S_IFDIR)
    }

    /// Creates the folder `path` (mode 0777 less the umask): true when this call created it,
    /// false when something was there already.
    package static func makeFolder(_ path: String) throws(SystemCallError) -> Bool {
        do {
            try retrying("mkdir") { PathEncoding.withCString(path) { mkdir($0, 0o777) } }
            return true
        } catch where error.errno == EEXIST {
            return false
        }
    }

    /// Removes the folder `path` if it is empty: true when removed, false when it holds
    /// anything (or is not there).
    package static func removeEmptyFolder(_ path: String) throws(SystemCallError) -> Bool {
        do {
            try retrying("rmdir") { PathEncoding.withCString(path) { rmdir($0) } }
            return true
        } catch where [ENOTEMPTY, EEXIST, ENOENT].contains(error.errno) {
            return false
        }
    }

    /// Removes the file `path`.
    package static func removeFile(_ path: String) throws(SystemCallError) {
        try retrying("unlink") { PathEncoding.withCString(path) { unlink($0) } }
    }

    /// What `lstat` says of `path` (a link is not followed: its own status); nil when nothing
    /// is there.
    package static func linkStatus(_ path: String) -> stat? {
        var info = stat()
        return (try? retrying("lstat") { PathEncoding.withCString(path) { lstat($0, &info) } }) == nil ? nil : info
    }

    /// The status of what `path` names, following links; nil when nothing is there.
    package static func status(_ path: String) -> stat? {
        var info = stat()
        return (try? retrying("stat") { PathEncoding.withCString(path) { stat($0, &info) } }) == nil ? nil : info
    }

    /// Whether `path` names a folder, following links.
    package static func isFolder(_ path: String) -> Bool {
        status(path).map { $0.st_mode & S_IFMT == S_IFDIR } ?? false
    }

    /// The working directory (`getcwd`), as ``PathEncoding`` carries it; "/" when it cannot be
    /// named (removed meanwhile).
    package static func workingDirectory() -> String {
        (try? currentFolder()) ?? "/"
    }

    /// The working directory (`getcwd`), as ``PathEncoding`` carries it.
    /// - Throws: ENOENT when it was removed, EACCES when a folder above it cannot be read.
    package static func currentFolder() throws(SystemCallError) -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { throw SystemCallError(call: "getcwd", errno: Glibc.errno) }
        return PathEncoding.decode(buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }).text
    }

    /// The target of the symbolic link `name` (bytes) in the open folder `folder` (the working
    /// directory by default), as bytes; an empty `name` reads the link an `O_PATH` descriptor
    /// `folder` holds. The one `readlink` of blurfarm.
    ///
    /// - Throws: `readlinkat`'s error (EINVAL: not a link; ENOENT: missing); ENAMETOOLONG for a
    ///   target longer than `PATH_MAX`.
    package static func linkTarget(_ name: [UInt8], in folder: Int32 = AT_FDCWD) throws(SystemCallError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
        let cName = (name + [0]).map { CChar(bitPattern: $0) }
        let length = try retrying("readlinkat") {
            buffer.withUnsafeMutableBytes { readlinkat(folder, cName, $0.baseAddress!, $0.count) }
        }
        guard length < buffer.count else { throw SystemCallError(call: "readlinkat", errno: ENAMETOOLONG) }
        return Array(buffer[..<length])
    }

    /// A folder's entries (without "." and ".."), each name as its bytes, with whether it is a
    /// folder (not following links) and what else it is: a regular file, or a link to one, is
    /// a file; anything else that is not a folder (a FIFO, a socket, a device, a link to one)
    /// is ``Entry/otherKind``.
    package struct Entry {
        package let name: [UInt8]
        package let isFolder: Bool
        /// For a file (or a link to one): what `stat` of its path says (the `fstatat` that told
        /// what it is); nil for anything else.
        package var file: stat? = nil
        /// For an entry that is neither a folder nor a file: what it is, as people say it ("a
        /// FIFO", "a link to a character device", "a link to nothing"); nil for a link to a
        /// folder (not followed).
        package var otherKind: String? = nil
    }

    /// The entries of the folder whose path is the bytes `path` whose names `wanted` takes
    /// (all by default): only those are looked at (`fstatat`), so a folder of many files the
    /// caller does not want costs its listing alone.
    /// - Throws: the `opendir` or `readdir` failure (EACCES for a folder that cannot be read).
    package static func entries(
        ofFolder path: [UInt8], where wanted: ([UInt8]) -> Bool = { _ in true }
    ) throws(SystemCallError) -> [Entry] {
        guard let directory = opendir((path + [0]).map { CChar(bitPattern: $0) }) else { throw SystemCallError(call: "opendir", errno: Glibc.errno) }
        defer { closedir(directory) }
        var entries: [Entry] = []
        while true {
            Glibc.errno = 0
            guard let entry = readdir(directory) else {
                if Glibc.errno != 0 { throw SystemCallError(call: "readdir", errno: Glibc.errno) }
                return entries
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix(while: { $0 != 0 })) }
            if name == [0x2E] || name == [0x2E, 0x2E] || !wanted(name) { continue }
            // The kind from the folder's descriptor and the name's bytes, whatever they are.
            let folder = dirfd(directory)
            var info = stat()
            let cName = (name + [0]).map { CChar(bitPattern: $0) }
            guard fstatat(folder, cName, &info, AT_SYMLINK_NOFOLLOW) == 0 else { continue }  // gone meanwhile
            let kind = info.st_mode & S_IFMT
            if kind == S_IFDIR {
                entries.append(Entry(name: name, isFolder: true))
            } else if kind == S_IFREG {
                entries.append(Entry(name: name, isFolder: false, file: info))
            } else if kind == S_IFLNK {
                if fstatat(folder, cName, &info, 0) != 0 {
                    // A link that leads nowhere: named, as what else is no file, never silent;
                    // as the kernel says why (a loop of links, a folder that may not be read).
                    let reason = errno
                    let target = (try? linkTarget(name, in: folder)) ?? []
                    let shownTarget = ShownName.of(bytes: target)
                    let kind =
                        switch reason {
                        case ELOOP: "a loop of symbolic links" + (target.isEmpty ? "" : " (through '\(shownTarget)')")
                        case EACCES: "a link whose target may not be reached" + (target.isEmpty ? "" : " ('\(shownTarget)': permission denied)")
                        default: "a link to nothing" + (target.isEmpty ? "" : " (its target '\(shownTarget)' does not exist)")
                        }
                    entries.append(Entry(name: name, isFolder: false, otherKind: kind))
                } else if info.st_mode & S_IFMT == S_IFREG {
                    entries.append(Entry(name: name, isFolder: false, file: info))
                } else if info.st_mode & S_IFMT == S_IFDIR {
                    entries.append(Entry(name: name, isFolder: false))  // not followed
                } else {
                    entries.append(Entry(
                        name: name, isFolder: false, otherKind: "a link to " + fileKindName(info.st_mode)))
                }
            } else {
                entries.append(Entry(name: name, isFolder: false, otherKind: fileKindName(info.st_mode)))
            }
        }
    }

    /// Opens the folder `path` (relative to the working directory) for `openat`-style calls
    /// beneath it; unless `followingLinks`, never through a symbolic link at its last name
    /// (ELOOP or ENOTDIR then).
    package static func openFolder(_ path: String, followingLinks: Bool = false) throws(SystemCallError) -> Int32 {
        let flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (followingLinks ? 0 : O_NOFOLLOW)
        return try retrying("open") { PathEncoding.withCString(path) { open($0, flags) } }
    }

    /// Opens the file `path` for reading (following links), without waiting: a FIFO without a
    /// writer opens at once (its descriptor's `fstat` says what it is) instead of blocking.
    package static func openForReading(_ path: String) throws(SystemCallError) -> Int32 {
        try retrying("open") { PathEncoding.withCString(path) { open($0, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC) } }
    }

    /// Opens the file `path` for appending, creating it (mode 0644 less the umask; not its
    /// folder): each `write` lands at the end, so processes sharing it never interleave within one.
    package static func openForAppending(_ path: String) throws(SystemCallError) -> Int32 {
        try retrying("open") { PathEncoding.withCString(path) { open($0, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644) } }
    }

    /// Opens the file `name` in the folder `folder`, never through a symbolic link
    /// (`O_NOFOLLOW | O_CLOEXEC` added to `flags`); new files get mode 0644 less the umask.
    package static func openFile(_ name: String, in folder: Int32, flags: Int32) throws(SystemCallError) -> Int32 {
        try retrying("open") { PathEncoding.withCString(name) { openat(folder, $0, flags | O_NOFOLLOW | O_CLOEXEC, 0o644) } }
    }

    /// The status of the open descriptor `fd`.
    package static func status(of fd: Int32) throws(SystemCallError) -> stat {
        var info = stat()
        try retrying("fstat") { fstat(fd, &info) }
        return info
    }

    /// All the bytes of the open file `fd` from its start, or its first `limit` bytes.
    package static func readAll(_ fd: Int32, upTo limit: Int = .max) throws(SystemCallError) -> [UInt8] {
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: min(65536, limit))
        while result.count < limit {
            let offset = off_t(result.count)
            let wanted = min(chunk.count, limit - result.count)
            let n = try retrying("pread") { chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, wanted, offset) } }
            if n == 0 { break }
            result += chunk[0..<n]
        }
        return result
    }

    /// Reads from `fd` into `buffer` once, from where the file stands: the number of bytes
    /// read, 0 at its end.
    package static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SystemCallError) -> Int {
        try retrying("read") { Glibc.read(fd, buffer.baseAddress, buffer.count) }
    }

    /// Writes `bytes` with one `write` call: the number written, which may be fewer (a full
    /// disk). With `O_APPEND`, that one call's bytes land together at the end.
    package static func writeOnce(_ fd: Int32, _ bytes: [UInt8]) throws(SystemCallError) -> Int {
        try retrying("write") { bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) } }
    }

    /// Writes `bytes` over the start of the open file `fd`, then cuts the file to their length:
    /// never empty on the way.
    package static func overwrite(_ fd: Int32, with bytes: [UInt8]) throws(SystemCallError) {
        var written = 0
        while written < bytes.count {
            let offset = written
            written += try retrying("pwrite") {
                bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress! + offset, $0.count - offset, off_t(offset)) }
            }
        }
        try truncate(fd, to: bytes.count)
    }

    package static func truncate(_ fd: Int32, to size: Int) throws(SystemCallError) {
        try retrying("ftruncate") { ftruncate(fd, off_t(size)) }
    }

    package static func fsync(_ fd: Int32) throws(SystemCallError) {
        try retrying("fsync") { Glibc.fsync(fd) }
    }

    /// Flushes the data of `fd` to disk (and the metadata needed to read it back).
    package static func fdatasync(_ fd: Int32) throws(SystemCallError) {
        try retrying("fdatasync") { Glibc.fdatasync(fd) }
    }

    /// Takes the `flock` of `fd` exclusively, waiting for its holder to let go when `wait`:
    /// false when another holds it and `wait` is false.
    package static func lockExclusively(_ fd: Int32, wait: Bool) throws(SystemCallError) -> Bool {
        do {
            try retrying("flock") { flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB)) }
            return true
        } catch where error.errno == EWOULDBLOCK {
            return false
        }
    }

    /// Renames `from` to `to`, both in the folder `folder`.
    package static func rename(_ from: String, to: String, in folder: Int32) throws(SystemCallError) {
        try retrying("rename") {
            PathEncoding.withCString(from) { from in PathEncoding.withCString(to) { renameat(folder, from, folder, $0) } }
        }
    }

    /// Removes the file `name` in the folder `folder`, ignoring failure (cleaning up after
    /// another failure).
    package static func removeQuietly(_ name: String, in folder: Int32) {
        _ = PathEncoding.withCString(name) { unlinkat(folder, $0, 0) }
    }

    // MARK: The process

    /// This process's id.
    package static var processID: Int32 { getpid() }

    /// The user this process acts as (`geteuid`).
    package static var effectiveUserID: UInt32 { geteuid() }

    /// Closes `fd`, ignoring failure: the descriptor is gone whatever `close` says (Linux), so
    /// nothing is retried and nothing is left to do about it.
    package static func close(_ fd: Int32) { _ = Glibc.close(fd) }

    package static func sleep(milliseconds: Int) { usleep(useconds_t(milliseconds * 1000)) }
}
