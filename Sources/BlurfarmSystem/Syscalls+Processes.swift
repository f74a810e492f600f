// The system calls of processes and threads: pipes, spawning, signalling and reaping workers,
// waiting for their output, starting threads (`Threads`), the limits that bound how many can run.
import CSystemShims

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension Syscalls {
    /// A pipe whose ends are closed on exec (and non-blocking if asked): `pipe2` is not visible
    /// to Swift without `_GNU_SOURCE`. A child started by ``spawn(_:arguments:environment:stdin:stdout:)``
    /// inherits only its standard input and output (every other descriptor closed), so none
    /// gets an end between `pipe` and `fcntl`.
    package static func pipe(nonBlocking: Bool = false) throws(SystemCallError) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        try retrying("pipe") { Glibc.pipe(&fds) }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            if nonBlocking { setNonBlocking(fd) }
        }
        return (fds[0], fds[1])
    }

    package static func setNonBlocking(_ fd: Int32) {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }

    /// Starts `executable` with `arguments` (the first is its name) and `environment` (a
    /// null-terminated list), `stdin` and `stdout` as its standard input and output, `stderr`
    /// as its standard error (this process's when nil; every other descriptor closed in the child), no signal blocked and SIGINT, SIGTERM and SIGPIPE at their defaults,
    /// whatever this process ignores. `posix_spawn` fails with EAGAIN when the user may not have
    /// another process (`RLIMIT_NPROC`), ENOMEM without memory for it.
    package static func spawn(
        _ executable: String, arguments: [String], environment: CStrings, stdin: Int32, stdout: Int32, stderr: Int32? = nil
    ) throws(SystemCallError) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdin, STDIN_FILENO)
        posix_spawn_file_actions_adddup2(&actions, stdout, STDOUT_FILENO)
        if let stderr { posix_spawn_file_actions_adddup2(&actions, stderr, STDERR_FILENO) }
        // Nothing else is inherited: the server's listening socket and its database, files
        // being written, were opened by libraries that do not all ask for close-on-exec.
        try retryingReturnedError("posix_spawn_file_actions_addclosefrom_np", { blurfarm_spawn_close_from(&actions, STDERR_FILENO + 1) })
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
        try retryingReturnedError("posix_spawn", {
            environment.pointers.withUnsafeBufferPointer { environment in
                posix_spawn(&pid, executable, &actions, &attributes, argv, UnsafeMutablePointer(mutating: environment.baseAddress))
            }
        })
        return pid
    }

    /// A null-terminated list of C strings (an `environ`), freed with it.
    package final class CStrings {
        package let pointers: [UnsafeMutablePointer<CChar>?]

        package init(_ strings: [String]) { pointers = strings.map { strdup($0) } + [nil] }

        deinit { pointers.forEach { free($0) } }
    }

    package static func kill(_ pid: pid_t) { _ = Glibc.kill(pid, SIGKILL) }

    /// Whether a process `pid` exists (any process, not only a child): only ESRCH says it does
    /// not; one this process may not signal (EPERM) exists.
    package static func isRunning(_ pid: pid_t) -> Bool { Glibc.kill(pid, 0) == 0 || errno != ESRCH }

    /// Waits for the child `pid` to end: its wait status.
    package static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        _ = try? retrying("waitpid") { waitpid(pid, &status, 0) }
        return status
    }

    /// Whether the child `pid` has ended (and is reaped), without waiting.
    package static func hasExited(_ pid: pid_t) -> Bool { endStatus(pid) != nil }

    /// The wait status of the child `pid` when it has ended (it is then reaped), nil while it
    /// runs; without waiting. A child that cannot be waited for counts as ended, status -1.
    package static func endStatus(_ pid: pid_t) -> Int32? {
        var status: Int32 = 0
        guard let result = try? retrying("waitpid", { waitpid(pid, &status, WNOHANG) }) else { return -1 }
        return result == pid ? status : nil
    }

    /// The wait status of the child `pid`, looked for every millisecond until `deadline` (for a
    /// child a moment from its end: its output has closed), then it is killed (SIGKILL) and
    /// reaped: nil. A child that cannot be waited for counts as ended, status -1.
    package static func endStatus(_ pid: pid_t, killedAfter deadline: ContinuousClock.Instant) -> Int32? {
        while true {
            if let status = endStatus(pid) { return status }
            if ContinuousClock.now >= deadline { break }
            sleep(milliseconds: 1)
        }
        kill(pid)
        _ = wait(pid)
        return nil
    }

    /// "exit status N" or "killed by signal N".
    package static func describe(status: Int32) -> String {
        let signalNumber = status & 0x7F
        if signalNumber == 0 { return "exit status \((status >> 8) & 0xFF)" }
        return "killed by signal \(signalNumber)"
    }

    /// Waits up to `milliseconds` for any of `fds` to be readable (or closed): the indices of
    /// those that are (none when the time passed). The one `poll` of blurfarm.
    package static func pollReadable(_ fds: [Int32], milliseconds: Int32) throws(SystemCallError) -> [Int] {
        var entries = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        guard try retrying("poll", { Glibc.poll(&entries, nfds_t(entries.count), milliseconds) }) > 0 else { return [] }
        return entries.indices.filter { entries[$0].revents != 0 }
    }

    /// Reads and discards what a non-blocking descriptor holds.
    package static func drain(_ fd: Int32) {
        var bytes = [UInt8](repeating: 0, count: 64)
        while Glibc.read(fd, &bytes, bytes.count) > 0 {}
    }

    /// What one read from a non-blocking descriptor gave.
    package enum ReadOutcome {
        case bytes([UInt8])
        case wouldBlock
        /// End of file or an error: why.
        case failed(String)
    }

    /// Reads what a non-blocking descriptor holds now (up to 64 KiB).
    package static func readAvailable(_ fd: Int32) -> ReadOutcome {
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        let n = Glibc.read(fd, &chunk, chunk.count)
        if n < 0 && (errno == EINTR || errno == EAGAIN) { return .wouldBlock }
        if n == 0 { return .failed("closed its output") }
        if n < 0 { return .failed("could not be read: \(String(cString: strerror(errno)))") }
        return .bytes(Array(chunk[0..<n]))
    }

    /// Writes one byte to a non-blocking pipe; a full pipe is fine (it is a wake-up).
    package static func writeByte(_ fd: Int32) {
        var byte: UInt8 = 1
        _ = write(fd, &byte, 1)
    }

    /// What a new thread runs, handed through `pthread_create`'s argument.
    private final class ThreadBody {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    /// Makes the calling thread background work: its niceness (Linux keeps one per thread)
    /// raised to `niceness`, or left where it is when it is already higher. The other threads
    /// of the process keep theirs, and get the processors first when both want them.
    package static func lowerThisThreadsPriority(to niceness: Int32) throws(SystemCallError) {
        let thread = id_t(blurfarm_thread_id())
        errno = 0
        let now = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), thread)
        if now == -1, errno != 0 { throw SystemCallError(call: "getpriority", errno: errno) }
        guard now < niceness else { return }
        try retrying("setpriority") { setpriority(__priority_which_t(PRIO_PROCESS.rawValue), thread, niceness) }
    }

    /// Starts a detached thread with a stack of `stackSize` bytes running `body` (``Threads``);
    /// `pthread_create`'s EAGAIN when the process or its user may have no more threads.
    package static func startThread(stackSize: Int, _ body: @escaping @Sendable () -> Void) throws(SystemCallError) {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        pthread_attr_setstacksize(&attributes, max(stackSize, Int(PTHREAD_STACK_MIN)))
        let argument = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
        var thread = pthread_t()
        do {
            try retryingReturnedError("pthread_create", {
                pthread_create(&thread, &attributes, { argument in
                    let started = Unmanaged<ThreadBody>.fromOpaque(argument!).takeRetainedValue()
                    started.body()
                    return nil
                }, argument)
            })
        } catch {
            Unmanaged<ThreadBody>.fromOpaque(argument).release()
            throw error
        }
    }

    /// Ignores SIGPIPE in this whole process (`sigaction`): a write to a pipe whose reader died
    /// fails with EPIPE instead of killing it.
    package static func ignoreBrokenPipeSignal() throws(SystemCallError) {
        try retrying("signal(SIGPIPE)") { blurfarm_ignore_sigpipe() }
    }

    /// Sends every `signals` (two: SIGINT and SIGTERM) this process receives to the pipe whose
    /// write end is `writeEnd`, one byte each, its number (`sigaction` with a handler that only
    /// writes): a thread reading the other end answers them.
    package static func forwardSignals(_ signals: (Int32, Int32), to writeEnd: Int32) throws(SystemCallError) {
        try retrying("sigaction") { blurfarm_forward_signals(writeEnd, signals.0, signals.1) }
    }

    /// Ignores both `signals` in this whole process (`sigaction`).
    package static func ignoreSignals(_ signals: (Int32, Int32)) {
        _ = blurfarm_ignore_signals(signals.0, signals.1)
    }

    /// Ignores SIGXFSZ in this whole process: a write past the file-size limit (`ulimit -f`)
    /// fails with EFBIG instead of killing it.
    package static func ignoreFileSizeSignal() throws(SystemCallError) {
        try retrying("signal(SIGXFSZ)") { blurfarm_ignore_sigxfsz() }
    }

    /// Asks the kernel to send `signal` to this process when the thread that started it exits
    /// (`prctl(PR_SET_PDEATHSIG)`).
    package static func setParentDeathSignal(_ signal: Int32) throws(SystemCallError) {
        try retrying("prctl(PR_SET_PDEATHSIG)") { blurfarm_set_parent_death_signal(signal) }
    }

    /// The id of this process's parent: 1 (or a subreaper) once the parent has died.
    package static var parentProcessID: Int32 { getppid() }

    /// Blocks SIGPIPE in the calling thread only: a write to a pipe whose reader died fails
    /// with EPIPE there instead of killing the process, and the process's own handling of
    /// SIGPIPE is left as it is.
    package static func blockBrokenPipeSignalInThisThread() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// The soft limit of `resource` (`RLIMIT_NOFILE`, `RLIMIT_NPROC`), nil when unlimited or
    /// unknown.
    package static func softLimit(_ resource: __rlimit_resource) -> Int? {
        guard let limit = limits(resource), limit.rlim_cur != rlim_t.max else { return nil }  // RLIM_INFINITY
        return Int(clamping: limit.rlim_cur)
    }

    /// The soft and hard limits of `resource`; nil when the system does not say. The one
    /// `getrlimit` of blurfarm.
    private static func limits(_ resource: __rlimit_resource) -> rlimit? {
        var limit = rlimit()
        return getrlimit(__rlimit_resource_t(resource.rawValue), &limit) == 0 ? limit : nil
    }

    /// Whether `RLIMIT_NPROC` binds this process: the kernel does not apply it to a process
    /// with `CAP_SYS_RESOURCE` or `CAP_SYS_ADMIN` (root, as a rule).
    package static var processLimitApplies: Bool { effectiveUserID != 0 }

    /// Gives the memory the allocator holds free back to the system (`malloc_trim(0)`: every
    /// arena, not only the top of the main heap). A job's images are decoded, rendered and
    /// encoded on threads of their own, and glibc keeps what they freed in per-thread arenas
    /// for them: a server that runs for months asks for it back when a job ends.
    package static func returnFreedMemory() {
        _ = malloc_trim(0)
    }

    /// Makes malloc serve blocks up to `BLURFARM_REUSED_MEMORY` (256 MiB) from its heaps and keep
    /// them there when freed, so that the next image's buffers reuse the pages instead of having
    /// them mapped and zeroed afresh (``blurfarm_reuse_freed_memory``); `arenas` > 0 caps the
    /// heaps. False when malloc refused.
    @discardableResult
    package static func reuseFreedMemory(arenas: Int32) -> Bool {
        blurfarm_reuse_freed_memory(BLURFARM_REUSED_MEMORY, arenas) == 0
    }

    /// This process's soft limit of open descriptors, nil when unlimited; with `raise`, first
    /// raised to the hard limit (a server holds a descriptor per connection; the default soft
    /// limit of 1024 is the kernel's old `select` bound, not a policy).
    package static func descriptorLimit(raise: Bool) -> Int? {
        if raise, var limit = limits(RLIMIT_NOFILE), limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            _ = setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        }
        return softLimit(RLIMIT_NOFILE)
    }
}

extension SystemCallError {
    /// Whether `posix_spawn` failed because of the program itself: missing, not executable,
    /// not a program, or a path that cannot name one. Trying again would not help.
    package var isAboutTheProgram: Bool {
        call == "posix_spawn" && [ENOENT, EACCES, ENOEXEC, ENOTDIR, ELOOP, ENAMETOOLONG].contains(errno)
    }
}
