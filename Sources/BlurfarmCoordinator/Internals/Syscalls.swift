// The system calls of BlurfarmCoordinator's worker pool: pipes, spawning workers, and the
// limits that bound how many can run. Each is retried on EINTR where that can happen and fails
// with a SystemCallError naming the call and its errno.
#if canImport(Glibc)
import Glibc
#endif

/// A failed system call: which call, and its errno.
struct SystemCallError: Error, CustomStringConvertible {
    let call: String
    let errno: Int32

    /// "pipe: Too many open files".
    var description: String { "\(call): \(String(cString: strerror(errno)))" }
}

enum Syscalls {
    /// A pipe whose ends are closed on exec (and non-blocking if asked): `pipe2` is not visible
    /// to Swift without `_GNU_SOURCE`. In the coordinator only the pool's thread starts
    /// processes, so no worker can inherit an end between `pipe` and `fcntl`.
    static func pipe(nonBlocking: Bool = false) throws(SystemCallError) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        while Glibc.pipe(&fds) != 0 {
            if Glibc.errno != EINTR { throw SystemCallError(call: "pipe", errno: Glibc.errno) }
        }
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
        _ executable: String, arguments: [String], environment: [UnsafeMutablePointer<CChar>?], stdin: Int32,
        stdout: Int32
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
            status = environment.withUnsafeBufferPointer { environment in
                posix_spawn(&pid, executable, &actions, &attributes, argv, UnsafeMutablePointer(mutating: environment.baseAddress))
            }
        } while status == EINTR
        guard status == 0 else { throw SystemCallError(call: "posix_spawn", errno: status) }
        return pid
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
