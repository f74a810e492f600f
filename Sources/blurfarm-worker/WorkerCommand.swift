import ArgumentParser
import BlurfarmWorker

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `blurfarm-worker`: a worker process, started by the coordinator (`blurfarm run`, `apply`,
/// `serve`) from the folder of its own executable. Frames on stdin and stdout, one line on
/// stderr for errors. The whole worker is in BlurfarmWorker
/// (``WorkerProcess/run(workerID:coordinatorPID:pluginFolders:registry:)``); this executable links
/// neither libvips nor the coordinator, so a worker starts in a few milliseconds.
@main
struct WorkerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "blurfarm-worker",
        abstract: "A blurfarm worker process, started by the coordinator (frames on stdin/stdout).",
        discussion: """
            Speaks the wire protocol (docs/protocol.md) on standard input and output and writes \
            errors to standard error.

            With --libvips-version it prints the version of the libvips it loads (what a \
            coordinator's recipes name), that library's file, the inode of the file mapped and \
            the folders the dynamic loader searches, one per line, and exits.

            Exit status: 0 after 'shutdown' or the end of the input, 65 bad input, 69 the \
            coordinator was gone at start, 71 setup failed, 74 read error.
            """)

    @Option(help: "The id the coordinator gives this worker (sent back in 'hello').")
    var workerId: UInt32?

    @Option(help: "The coordinator's process id: the expected parent, whose shared segments are opened.")
    var coordinatorPid: Int32?

    @Option(help: ArgumentHelp(
        "A folder plugins are loaded from, by name, when a task names one (repeatable, in order).",
        valueName: "folder"))
    var pluginFolder: [String] = []

    @Flag(help: "Print the version of the libvips a worker loads, its file, its inode and the folders the loader searches, and exit.")
    var libvipsVersion = false

    func validate() throws {
        if !libvipsVersion, workerId == nil || coordinatorPid == nil {
            throw ValidationError("--worker-id and --coordinator-pid are required (or --libvips-version)")
        }
    }

    func run() throws {
        guard !libvipsVersion, let workerId, let coordinatorPid else {
            print(WorkerProcess.libvipsReport)
            return
        }
        Glibc.exit(WorkerProcess.run(workerID: workerId, coordinatorPID: coordinatorPid, pluginFolders: pluginFolder))
    }
}
