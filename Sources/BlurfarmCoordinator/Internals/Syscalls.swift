// Every system call this module makes: on files and folders, and the worker pool's (pipes,
// spawning workers, the limits that bound how many can run); retried on EINTR, failing with the
// errno. Every path and name is given to the kernel as the bytes it stands for
// (`PathEncoding.withCString`): a name that is not UTF-8 reaches the same file it was read from.
import BlurfarmCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A failed system call: which call, and its errno.
struct SystemCallError: Error, CustomStringConvertible {
    let call: String
    let errno: Int32

    /// The C library's text for the errno, e.g. "No such file or directory".
    var reason: String { String(cString: strerror(errno)) }

    /// "pipe: Too many open files".
    var description: String { "\(call): \(reason)" }
}

enum Syscalls {
    /// Calls `body` until it does not fail with EINTR; a negative result throws with errno.
    @discardableResult
    static func retrying<T: BinaryInteger>(_ call: String, _ body: () -> T) throws(SystemCallError) -> T {
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
            try retrying("lstat") { PathEncoding.withCString(path) { lstat($0, &info) } }
        } catch where error.errno == ENOENT || error.errno == ENOTDIR {
            return nil
        }
        return (UInt64(info.st_dev), UInt64(info.st_ino), info.st_mode & S_IFMT == S_IFDIR)
    }

    /// Creates the folder `path` (mode 0777 less the umask): true when this call created it,
    /// false when something was there already.
    static func makeFolder(_ path: String) throws(SystemCallError) -> Bool {
        do {
            try retrying("mkdir") { PathEncoding.withCString(path) { mkdir($0, 0o777) } }
            return true
        } catch where error.errno == EEXIST {
            return false
        }
    }

    /// Removes the folder `path` if it is empty: true when removed, false when it holds
    /// anything (or is not there).
    static func removeEmptyFolder(_ path: String) throws(SystemCallError) -> Bool {
        do {
            try retrying("rmdir") { PathEncoding.withCString(path) { rmdir($0) } }
            return true
        } catch where [ENOTEMPTY, EEXIST, ENOENT].contains(error.errno) {
            return false
        }
    }

    /// Removes the file `path`.
    static func removeFile(_ path: String) throws(SystemCallError) {
        try retrying("unlink") { PathEncoding.withCString(path) { unlink($0) } }
    }

    /// The status of what `path` names, following links; nil when nothing is there.
    static func status(_ path: String) -> stat? {
        var info = stat()
        return (try? retrying("stat") { PathEncoding.withCString(path) { stat($0, &info) } }) == nil ? nil : info
    }

    /// Whether `path` names a folder, following links.
    static func isFolder(_ path: String) -> Bool {
        status(path).map { $0.st_mode & S_IFMT == S_IFDIR } ?? false
    }

    /// The working directory (`getcwd`), as ``PathEncoding`` carries it; "/" when it cannot be
    /// named (removed meanwhile).
    static func workingDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return "/" }
        return PathEncoding.decode(buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }).text
    }

    /// The target of the symbolic link whose path is the bytes `path`; nil when `path` is not a
    /// link (or is missing).
    static func linkTarget(_ path: [UInt8]) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX))
        let cPath = (path + [0]).map { CChar(bitPattern: $0) }
        let count = buffer.withUnsafeMutableBufferPointer { raw in
            raw.withMemoryRebound(to: CChar.self) { readlink(cPath, $0.baseAddress!, $0.count) }
        }
        return count < 0 ? nil : Array(buffer[0..<count])
    }

    /// A folder's entries (without "." and ".."), each name as its bytes, with whether it is a
    /// folder (not following links) and whether it is a regular file or a link to one.
    struct Entry {
        let name: [UInt8]
        let isFolder: Bool
        let isFile: Bool
    }

    /// The entries of the folder whose path is the bytes `path`.
    /// - Throws: the `opendir` or `readdir` failure (EACCES for a folder that cannot be read).
    static func entries(ofFolder path: [UInt8]) throws(SystemCallError) -> [Entry] {
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
            if name == [0x2E] || name == [0x2E, 0x2E] { continue }
            // The kind from the folder's descriptor and the name's bytes, whatever they are.
            let folder = dirfd(directory)
            var info = stat()
            let cName = (name + [0]).map { CChar(bitPattern: $0) }
            guard fstatat(folder, cName, &info, AT_SYMLINK_NOFOLLOW) == 0 else { continue }  // gone meanwhile
            let kind = info.st_mode & S_IFMT
            var isFile = kind == S_IFREG
            if kind == S_IFLNK, fstatat(folder, cName, &info, 0) == 0 {
                isFile = info.st_mode & S_IFMT == S_IFREG
            }
            entries.append(Entry(name: name, isFolder: kind == S_IFDIR, isFile: isFile))
        }
    }

    /// Opens the folder `path` (relative to the working directory), never through a symbolic
    /// link at its last name (ELOOP or ENOTDIR then).
    static func openFolder(_ path: String) throws(SystemCallError) -> Int32 {
        try retrying("open") { PathEncoding.withCString(path) { open($0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) } }
    }

    /// Opens the file `path` for reading (following links).
    static func openForReading(_ path: String) throws(SystemCallError) -> Int32 {
        try retrying("open") { PathEncoding.withCString(path) { open($0, O_RDONLY | O_CLOEXEC) } }
    }

    /// Opens the file `name` in the folder `folder`, never through a symbolic link
    /// (`O_NOFOLLOW | O_CLOEXEC` added to `flags`); new files get mode 0644 less the umask.
    static func openFile(_ name: String, in folder: Int32, flags: Int32) throws(SystemCallError) -> Int32 {
        try retrying("open") { PathEncoding.withCString(name) { openat(folder, $0, flags | O_NOFOLLOW | O_CLOEXEC, 0o644) } }
    }

    /// The status of the open descriptor `fd`.
    static func status(of fd: Int32) throws(SystemCallError) -> stat {
        var info = stat()
        try retrying("fstat") { fstat(fd, &info) }
        return info
    }

    /// All the bytes of the open file `fd`, from its start.
    static func readAll(_ fd: Int32) throws(SystemCallError) -> [UInt8] {
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let offset = off_t(result.count)
            let n = try retrying("pread") { chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, offset) } }
            if n == 0 { return result }
            result += chunk[0..<n]
        }
    }

    static func truncate(_ fd: Int32, to size: Int) throws(SystemCallError) {
        try retrying("ftruncate") { ftruncate(fd, off_t(size)) }
    }

    static func fsync(_ fd: Int32) throws(SystemCallError) {
        try retrying("fsync") { Glibc.fsync(fd) }
    }

    /// Renames `from` to `to`, both in the folder `folder`.
    static func rename(_ from: String, to: String, in folder: Int32) throws(SystemCallError) {
        try retrying("rename") {
            PathEncoding.withCString(from) { from in PathEncoding.withCString(to) { renameat(folder, from, folder, $0) } }
        }
    }

    /// Removes the file `name` in the folder `folder`, ignoring failure (cleaning up after
    /// another failure).
    static func removeQuietly(_ name: String, in folder: Int32) {
        _ = PathEncoding.withCString(name) { unlinkat(folder, $0, 0) }
    }

    // MARK: The worker pool

    /// A pipe whose ends are closed on exec (and non-blocking if asked): `pipe2` is not visible
    /// to Swift without `_GNU_SOURCE`. In the coordinator only the pool's thread starts
    /// processes, so no worker can inherit an end between `pipe` and `fcntl`.
    static func pipe(nonBlocking: Bool = false) throws(SystemCallError) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        try retrying("pipe") { Glibc.pipe(&fds) }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            if nonBlocking { setNonBlocking(fd) }
        }
        return (fds[0], fds[1])
    }

    static func setNonBlocking(_ fd: Int32) {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }

    /// Starts `executable` with `arguments` (the first is its name) and `environment` (a
    /// null-terminated list), `stdin` and `stdout` as its standard input and output (stderr
    /// inherited), no signal blocked and SIGINT, SIGTERM and SIGPIPE at their defaults,
    /// whatever this process ignores. `posix_spawn` fails with EAGAIN when the user may not have
    /// another process (`RLIMIT_NPROC`), ENOMEM without memory for it.
    static func spawn(
        _ executable: String, arguments: [String], environment: CStrings, stdin: Int32, stdout: Int32
    ) throws(SystemCallError) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdin, STDIN_FILENO)
        posix_spawn_file_actions_adddup2(&actions, stdout, STDOUT_FILENO)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signalNumber in [SIGINT, SIGTERM, SIGPIPE] { sigaddset(&defaults, signalNumber) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        var status: Int32
        repeat {
            status = environment.pointers.withUnsafeBufferPointer { environment in
                posix_spawn(&pid, executable, &actions, &attributes, argv, UnsafeMutablePointer(mutating: environment.baseAddress))
            }
        } while status == EINTR
        guard status == 0 else { throw SystemCallError(call: "posix_spawn", errno: status) }
        return pid
    }

    /// A null-terminated list of C strings (an `environ`), freed with it.
    final class CStrings {
        let pointers: [UnsafeMutablePointer<CChar>?]

        init(_ strings: [String]) { pointers = strings.map { strdup($0) } + [nil] }

        deinit { pointers.forEach { free($0) } }
    }

    static var processID: Int32 { getpid() }

    /// Closes `fd`, ignoring failure: the descriptor is gone whatever `close` says (Linux), so
    /// nothing is retried and nothing is left to do about it.
    static func close(_ fd: Int32) { _ = Glibc.close(fd) }

    static func kill(_ pid: pid_t) { _ = Glibc.kill(pid, SIGKILL) }

    /// Waits for the child `pid` to end: its wait status.
    static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status
    }

    /// Whether the child `pid` has ended (and is reaped), without waiting.
    static func hasExited(_ pid: pid_t) -> Bool {
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, WNOHANG)
            if result < 0 && errno == EINTR { continue }
            return result == pid || result < 0
        }
    }

    /// "exit status N" or "killed by signal N".
    static func describe(status: Int32) -> String {
        let signalNumber = status & 0x7F
        if signalNumber == 0 { return "exit status \((status >> 8) & 0xFF)" }
        return "killed by signal \(signalNumber)"
    }

    static func sleep(milliseconds: Int) { usleep(useconds_t(milliseconds * 1000)) }

    /// Waits up to `milliseconds` for any of `fds` to be readable (or closed): the indices of
    /// those that are.
    static func pollReadable(_ fds: [Int32], milliseconds: Int32) -> [Int] {
        var entries = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        guard Glibc.poll(&entries, nfds_t(entries.count), milliseconds) > 0 else { return [] }
        return entries.indices.filter { entries[$0].revents != 0 }
    }

    /// Reads and discards what a non-blocking descriptor holds.
    static func drain(_ fd: Int32) {
        var bytes = [UInt8](repeating: 0, count: 64)
        while read(fd, &bytes, bytes.count) > 0 {}
    }

    /// What one read from a non-blocking descriptor gave.
    enum ReadOutcome {
        case bytes([UInt8])
        case wouldBlock
        /// End of file or an error: why.
        case failed(String)
    }

    /// Reads what a non-blocking descriptor holds now (up to 64 KiB).
    static func readAvailable(_ fd: Int32) -> ReadOutcome {
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        let n = read(fd, &chunk, chunk.count)
        if n < 0 && (errno == EINTR || errno == EAGAIN) { return .wouldBlock }
        if n == 0 { return .failed("closed its output") }
        if n < 0 { return .failed("could not be read: \(String(cString: strerror(errno)))") }
        return .bytes(Array(chunk[0..<n]))
    }

    /// Writes one byte to a non-blocking pipe; a full pipe is fine (it is a wake-up).
    static func writeByte(_ fd: Int32) {
        var byte: UInt8 = 1
        _ = write(fd, &byte, 1)
    }

    /// Blocks SIGPIPE in the calling thread only: a write to a pipe whose reader died fails
    /// with EPIPE there instead of killing the process, and the process's own handling of
    /// SIGPIPE is left as it is.
    static func blockBrokenPipeSignalInThisThread() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// The soft limit of `resource` (`RLIMIT_NOFILE`, `RLIMIT_NPROC`), nil when unlimited or
    /// unknown.
    static func softLimit(_ resource: __rlimit_resource) -> Int? {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(resource.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else {
            return nil
        }
        return Int(clamping: limit.rlim_cur)
    }

    /// Whether `RLIMIT_NPROC` binds this process: the kernel does not apply it to a process
    /// with `CAP_SYS_RESOURCE` or `CAP_SYS_ADMIN` (root, as a rule).
    static var processLimitApplies: Bool { geteuid() != 0 }
}
