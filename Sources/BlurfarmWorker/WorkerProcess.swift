import BlurfarmCore
import BlurfarmImageIO
import BlurfarmKernels
import BlurfarmPlugins
import BlurfarmSharedMemory
import BlurfarmSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Setting up a worker process so that it never outlives its coordinator.
public enum WorkerProcess {
    /// Ignores SIGPIPE (a closed pipe shows as a failed write), asks the kernel to send SIGKILL
    /// when the parent dies (`PR_SET_PDEATHSIG`), then checks that the parent is still
    /// `coordinatorPID`: if the coordinator died between fork and the request, the worker was
    /// re-parented and the request came too late. Returns whether the coordinator is the parent.
    ///
    /// The signal comes when the *thread* that started the worker exits, which is the process
    /// for a single-threaded launcher; a coordinator starts workers from a thread that lives
    /// as long as it does.
    ///
    /// - Throws: the `SystemCallError` of `signal` or `prctl`.
    package static func bindToParent(coordinatorPID: Int32) throws(SystemCallError) -> Bool {
        try Syscalls.ignoreBrokenPipeSignal()
        try Syscalls.setParentDeathSignal(SIGKILL)
        return Syscalls.parentProcessID == coordinatorPID
    }

    /// What `blurfarm-worker --libvips-version` prints for a coordinator, which then never maps
    /// libvips to name it in its recipes (BlurfarmFarm's `LibvipsVersion`): the
    /// ``LibvipsReport`` of this process, or "unavailable" when libvips cannot be loaded. Maps
    /// libvips without starting it.
    public static var libvipsReport: String { LibvipsReport.ofThisProcess?.text ?? "unavailable" }

    /// The whole life of a `blurfarm-worker` process: bound to its coordinator, then the
    /// message loop on standard input and output until `shutdown` or the end of the input.
    /// Errors go to standard error, one line each. Returns the exit status
    /// (``WorkerExit``); the caller exits with it at once (a task still running after
    /// `shutdown` is abandoned). `registry` holds the filters it runs besides the plugins of
    /// `pluginFolders`: the built-in ones (a test's worker adds one of its own).
    public static func run(
        workerID: UInt32, coordinatorPID: Int32, pluginFolders: [String], registry: FilterRegistry = .builtIn
    ) -> Int32 {
        do throws(SystemCallError) {
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
        Syscalls.reuseFreedMemory(arenas: 1)
        // One core's worth of work: a large JPEG's chunks are encoded in one go, not on every core.
        ImageWriter.encoderCores = 1
        let runner = TaskRunner(
            registry: registry, plugins: PluginLoader(folders: pluginFolders),
            segments: SharedSegmentTable(ownerPID: coordinatorPID))
        let worker = Worker(workerID: workerID, pid: Syscalls.processID, output: STDOUT_FILENO, runner: runner)
        let exit = worker.run(input: STDIN_FILENO)
        if let message = exit.message { say(message) }
        return exit.status
    }

    /// One line on standard error, as the CLI's errors read.
    private static func say(_ message: String) {
        try? Syscalls.writeAll(STDERR_FILENO, Array("blurfarm: error: worker: \(ShownName.of(message))\n".utf8))
    }
}
