import BlurfarmSystem
import BlurfarmEngine
import BlurfarmImageIO
import Synchronization

/// How a running job is steered, from any thread: stopped with the whole run (``stop``),
/// cancelled alone, stopped writing (``stopWriting()``), paused, given another priority. The
/// runner checks it before each output and before each write; the pool orders and cancels the
/// job's tiles by its ``job`` number.
public final class JobControl: Sendable {
    /// The job's number in the pool's queue (its arrival).
    public let job: UInt64
    /// The run's stop request (SIGINT, SIGTERM), shared by every job of the run.
    public let stop: StopRequest
    /// The temporary files of this job's writes in progress.
    public let temporaryFiles = TemporaryFiles()
    private let state: Mutex<(cancelled: Bool, writingStopped: Bool, paused: Bool, priority: Int)>

    public init(job: UInt64 = 0, priority: Int = 0, stop: StopRequest = StopRequest()) {
        self.job = job
        self.stop = stop
        state = Mutex((false, false, false, priority))
    }

    /// Cancels the job: no output of it starts or is written from now on.
    public func cancel() { state.withLock { $0.cancelled = true } }

    /// Stops the job's writing, as a stop of the run would (its outputs not written are
    /// `stopped`, left for the next run), for the job alone: an output found its disk full, and
    /// every write after it would fail alike. True the first time it is asked.
    public func stopWriting() -> Bool {
        state.withLock { state in
            defer { state.writingStopped = true }
            return !state.writingStopped
        }
    }

    /// Pauses or resumes the job: while paused, no new output of it starts.
    public func setPaused(_ paused: Bool) { state.withLock { $0.paused = paused } }

    public var priority: Int {
        get { state.withLock { $0.priority } }
        set { state.withLock { $0.priority = newValue } }
    }

    public var isCancelled: Bool { state.withLock { $0.cancelled } }
    public var isPaused: Bool { state.withLock { $0.paused } }

    /// Why the job must write nothing more: cancelled, or stopped with the run or alone
    /// (``stopWriting()``); nil while it goes on.
    public var ended: OutputFailure? {
        let (cancelled, writingStopped) = state.withLock { ($0.cancelled, $0.writingStopped) }
        if cancelled { return .cancelled }
        if writingStopped || stop.signalNumber != nil { return .stopped }
        return nil
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
