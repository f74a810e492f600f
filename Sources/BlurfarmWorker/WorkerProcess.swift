import BlurfarmCore
import BlurfarmPlugins
import BlurfarmSharedMemory
import CSystemShims

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Setting up a worker process so that it never outlives its coordinator.
public enum WorkerProcess {
    /// Why setting up failed: the call and its errno.
    public struct SetupError: Error, Sendable, CustomStringConvertible {
        /// The call that failed, e.g. `prctl(PR_SET_PDEATHSIG)`.
        public let call: String
        /// Its errno.
        public let errno: Int32

        /// One line naming the call and the error.
        public var description: String { "\(call): \(String(cString: strerror(errno))) (errno \(errno))" }
    }

    /// Ignores SIGPIPE (a closed pipe shows as a failed write), asks the kernel to send SIGKILL
    /// when the parent dies (`PR_SET_PDEATHSIG`), then checks that the parent is still
    /// `coordinatorPID`: if the coordinator died between fork and the request, the worker was
    /// re-parented and the request came too late. Returns whether the coordinator is the parent.
    ///
    /// The signal comes when the *thread* that started the worker exits, which is the process
    /// for a single-threaded launcher; a coordinator starts workers from a thread that lives
    /// as long as it does.
    ///
    /// - Throws: ``SetupError`` when `signal` or `prctl` fails.
    public static func bindToParent(coordinatorPID: Int32) throws(SetupError) -> Bool {
        if blurfarm_ignore_sigpipe() != 0 { throw SetupError(call: "signal(SIGPIPE)", errno: errno) }
        if blurfarm_set_parent_death_signal(SIGKILL) != 0 {
            throw SetupError(call: "prctl(PR_SET_PDEATHSIG)", errno: errno)
        }
        return getppid() == coordinatorPID
    }

    /// The whole life of a `blurfarm-worker` process: bound to its coordinator, then the
    /// message loop on standard input and output until `shutdown` or the end of the input.
    /// Errors go to standard error, one line each. Returns the exit status
    /// (``WorkerExit``); the caller exits with it at once (a task still running after
    /// `shutdown` is abandoned).
    public static func run(workerID: UInt32, coordinatorPID: Int32, pluginFolders: [String]) -> Int32 {
        do throws(SetupError) {
            guard try bindToParent(coordinatorPID: coordinatorPID) else {
                say("the coordinator (pid \(coordinatorPID)) is gone")
                return WorkerExit.coordinatorGoneStatus
            }
        } catch {
            say("\(error)")
            return WorkerExit.setupFailedStatus
        }
        // An image task's buffers (a decode, its outputs) are tens of megabytes, each mapped
        // afresh and zeroed by the kernel. Kept in the heap instead, the next image reuses their
        // pages: with whole 1080p images in the workers, `perf record` put the kernel's page
        // zeroing at 14% of the run before, 9.7% after.
        _ = blurfarm_reuse_freed_memory(BLURFARM_REUSED_MEMORY, 1)
        let runner = TaskRunner(
            registry: .forThisProcess, plugins: PluginLoader(folders: pluginFolders),
            segments: SharedSegmentTable(ownerPID: coordinatorPID))
        let worker = Worker(workerID: workerID, pid: getpid(), output: STDOUT_FILENO, runner: runner)
        let exit = worker.run(input: STDIN_FILENO)
        if let message = exit.message { say(message) }
        return exit.status
    }

    /// One line on standard error, as the CLI's errors read.
    private static func say(_ message: String) {
        let line = Array("blurfarm: error: worker: \(ShownName.of(message))\n".utf8)
        line.withUnsafeBytes { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
}
