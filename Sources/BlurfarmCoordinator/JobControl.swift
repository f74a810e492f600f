import BlurfarmCore
import BlurfarmSystem
import BlurfarmEngine
import BlurfarmImageIO
import Synchronization

/// How a running job is steered, from any thread: stopped with the whole run (``stop``),
/// cancelled alone, stopped writing to a full or read-only disk (``stopWriting(at:)``), paused,
/// given another priority. The runner checks it before each output and before each write; the pool orders and
/// cancels the job's tiles by its ``job`` number.
public final class JobControl: Sendable {
    /// The job's number in the pool's queue (its arrival).
    public let job: UInt64
    /// The run's stop request (SIGINT, SIGTERM), shared by every job of the run.
    public let stop: StopRequest
    /// The temporary files of this job's writes in progress.
    public let temporaryFiles = TemporaryFiles()
    private let state: Mutex<(cancelled: Bool, paused: Bool, priority: Int)>
    /// The file systems (their devices) the job writes nothing more to: each found full or
    /// read-only.
    private let fullDevices = Mutex<Set<UInt64>>([])

    public init(job: UInt64 = 0, priority: Int = 0, stop: StopRequest = StopRequest()) {
        self.job = job
        self.stop = stop
        state = Mutex((false, false, priority))
    }

    /// Cancels the job: no output of it starts or is written from now on.
    public func cancel() { state.withLock { $0.cancelled = true } }

    /// Stops the job's writing to the file system that holds `path`: an output there found it
    /// full or read-only, and every write there after it would fail alike. Its outputs there not
    /// yet written are `stopped`, as in a stopped run, left for the next run
    /// (``ended(writing:)``); its others go on. True the first time it is asked of that file
    /// system.
    public func stopWriting(at path: String) -> Bool {
        guard let device = Self.device(holding: path) else { return false }
        return fullDevices.withLock { $0.insert(device).inserted }
    }

    /// Pauses or resumes the job: while paused, no new output of it starts.
    public func setPaused(_ paused: Bool) { state.withLock { $0.paused = paused } }

    public var priority: Int {
        get { state.withLock { $0.priority } }
        set { state.withLock { $0.priority = newValue } }
    }

    public var isCancelled: Bool { state.withLock { $0.cancelled } }
    public var isPaused: Bool { state.withLock { $0.paused } }

    /// Why the job must write nothing more: cancelled, or stopped with the run; nil while it
    /// goes on.
    public var ended: OutputFailure? {
        if isCancelled { return .cancelled }
        if stop.signalNumber != nil { return .stopped }
        return nil
    }

    /// Why the job must not write `path`: ``ended``, or its file system found full or read-only
    /// (``stopWriting(at:)``: `.stopped`); nil when it may. Costs a `stat` only once a file
    /// system was found so.
    func ended(writing path: String) -> OutputFailure? {
        if let ended { return ended }
        let full = fullDevices.withLock { $0 }
        guard !full.isEmpty, let device = Self.device(holding: path) else { return nil }
        return full.contains(device) ? .stopped : nil
    }

    /// The device of the file system a file at `path` is written on: that of its nearest folder
    /// that is there, links followed; nil when none can be asked.
    static func device(holding path: String) -> UInt64? {
        var folder = PathName.folder(of: path)
        while true {
            if let info = Syscalls.status(folder.isEmpty ? "." : folder) { return UInt64(info.st_dev) }
            if folder.isEmpty || folder == "/" { return nil }
            folder = PathName.folder(of: folder)
        }
    }

    /// Waits (checking every 50 ms) while the job is paused and neither cancelled nor stopped.
    func waitWhilePaused() {
        while isPaused && ended == nil { Syscalls.sleep(milliseconds: 50) }
    }

    /// The pool ticket of this job's images, telling `progress` of their tiles.
    func ticket(progress: (@Sendable (Int, Int) -> Void)? = nil) -> RenderTicket {
        RenderTicket(job: job, priority: priority, progress: progress)
    }
}
