import BlurfarmCore
import BlurfarmSystem
import BlurfarmWire
import Dispatch
import Foundation
import Synchronization

/// The worker's side of the conversation (docs/protocol.md): reads frames from one file
/// descriptor, writes frames to another, renders tasks with a ``TaskRunner`` (whole images with
/// an ``ImageTaskRunner``, photos searched with a ``DetectionTaskRunner``).
///
/// ``run(input:)`` sends `hello` and `ready`, then reads. Tasks run one after the other on a
/// thread of their own while the loop goes on reading, so `cancel` and `shutdown` are seen
/// during a long task; the coordinator may send the next task while one runs (it waits in
/// `waiting`: at most `WireProtocol.tasksHeld` tasks at once). A task ends in its `result` or `failure`
/// (none when it was cancelled) and `ready`. While a task runs, a heartbeat thread sends
/// `heartbeat(taskID)` every ``heartbeatInterval``. All frames go through one lock, whole. The
/// loop ends at `shutdown`, at the end of the input, or at bad input; then nothing more is
/// written, and a task still running is abandoned (the process exits; in a test its result is
/// dropped).
public final class Worker: Sendable {
    /// How often a running task's heartbeat is sent: a policy. The protocol asks for at least
    /// one a second; half that leaves room for a loaded machine.
    public static let heartbeatInterval: Duration = .milliseconds(500)

    /// How long a worker idle after searching photos keeps its detectors' sessions (their
    /// networks' buffers, hundreds of megabytes): long enough for the next photo of a job's
    /// detection step (the pool sends it at once), short enough that a worker of a service left
    /// idle after a job gives the memory back within seconds.
    public static let detectorIdleRelease: Duration = .seconds(2)

    /// The id the coordinator gave this worker (sent in `hello`).
    public let workerID: UInt32
    /// The process id sent in `hello`.
    public let pid: Int32
    private let runner: TaskRunner
    private let images: ImageTaskRunner
    private let detections: DetectionTaskRunner
    private let writer: FrameWriter
    private let tasks = DispatchQueue(label: "blurfarm.worker.task")

    private struct State {
        /// The task running, and when its last heartbeat (or its start) was.
        var running: (id: UInt64, lastBeat: ContinuousClock.Instant)?
        /// Tasks accepted and not yet running, in order.
        var waiting: [UInt64] = []
        /// Tasks cancelled (running or waiting): no reply is sent for them.
        var cancelled: Set<UInt64> = []
        /// Whether the loop has ended.
        var finished = false
        /// When the last detection task ended, while its detector's sessions are open.
        var searchedAt: ContinuousClock.Instant?
    }

    private let state = Mutex(State())

    /// A worker that writes its frames to `output` (a file descriptor it does not close).
    public init(workerID: UInt32, pid: Int32, output: Int32, runner: TaskRunner) {
        self.workerID = workerID
        self.pid = pid
        self.runner = runner
        images = ImageTaskRunner(tasks: runner)
        detections = DetectionTaskRunner(plugins: runner.plugins)
        writer = FrameWriter(fd: output)
    }

    /// Runs the conversation, reading frames from `input` (a file descriptor it does not
    /// close), until `shutdown`, the end of the input, or bad input.
    public func run(input: Int32) -> WorkerExit {
        do throws(Threads.StartFailure) {
            try startHeartbeats()
        } catch {
            return .setupFailed("cannot start the heartbeat thread: \(error)")
        }
        writer.send(.hello(Hello(workerID: workerID, pid: pid)))
        writer.send(.ready)
        let exit = readLoop(input)
        state.withLock { $0.finished = true }
        writer.close()
        return exit
    }

    private func readLoop(_ input: Int32) -> WorkerExit {
        var decoder = FrameDecoder()
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count: Int
            do {
                count = try chunk.withUnsafeMutableBytes { (raw) throws(SystemCallError) in try Syscalls.read(input, into: raw) }
            } catch {
                return .inputFailed("\(error)")
            }
            if count == 0 {
                let left = decoder.bufferedByteCount
                return left == 0 ? .endOfInput : .badInput("the input ends inside a frame (\(left) bytes)")
            }
            decoder.append(chunk[0..<count])
            do {
                while let message = try decoder.nextMessage() {
                    switch message {
                    case .shutdown:
                        return .shutdown
                    // Rendering comes once the photos are searched: the detectors' buffers go first.
                    case .task(let task):
                        let execute = { @Sendable [runner, detections] in
                            detections.closeSessions()
                            return runner.execute(task)
                        }
                        if let busy = accept(task.taskID, execute) { return .badInput(busy) }
                    case .imageTask(let task):
                        let execute = { @Sendable [images, detections] in
                            detections.closeSessions()
                            return WireMessage.imageResult(images.execute(task))
                        }
                        if let busy = accept(task.taskID, execute) { return .badInput(busy) }
                    case .detectionTask(let task):
                        let execute = { @Sendable [detections] in WireMessage.detectionResult(detections.execute(task)) }
                        if let busy = accept(task.taskID, searches: true, execute) { return .badInput(busy) }
                    case .cancel(let taskID):
                        state.withLock { state in
                            if state.running?.id == taskID || state.waiting.contains(taskID) { state.cancelled.insert(taskID) }
                        }
                    case .hello, .ready, .result, .failure, .heartbeat, .imageResult, .detectionResult:
                        return .badInput("a coordinator does not send '\(message.type)'")
                    }
                }
            } catch {
                return .badInput(error.description)
            }
        }
    }

    /// Queues task `taskID` for the task thread, which answers it with `execute`'s reply, or
    /// says why it cannot (the worker holds `WireProtocol.tasksHeld` tasks already).
    private func accept(_ taskID: UInt64, searches: Bool = false, _ execute: @escaping @Sendable () -> WireMessage) -> String? {
        let held: [UInt64]? = state.withLock { state in
            let held = (state.running.map { [$0.id] } ?? []) + state.waiting
            if held.count >= WireProtocol.tasksHeld { return held }
            state.waiting.append(taskID)
            return nil
        }
        if let held {
            return "task \(taskID) arrived while the worker holds tasks \(held.map(String.init).joined(separator: " and ")) "
                + "(at most \(WireProtocol.tasksHeld) before a 'ready')"
        }
        tasks.async { [self] in
            // Runs unless it was cancelled while it waited.
            let runs = state.withLock { state in
                state.waiting.removeFirst()
                guard !state.cancelled.contains(taskID) else { return false }
                state.running = (taskID, ContinuousClock.now)
                return true
            }
            let reply = runs ? execute() : nil
            var frame: [UInt8] = []
            if let reply {
                do {
                    frame = try FrameEncoder.encode(reply)
                } catch {
                    frame = (try? FrameEncoder.encode(.failure(TaskFailure(
                        taskID: taskID, message: "the result does not fit a frame: \(error)")))) ?? []
                }
            }
            // Cleared under the lock the heartbeat thread sends under: no heartbeat for this
            // task follows its reply.
            let cancelled = state.withLock { state in
                state.running = nil
                state.searchedAt = searches ? .now : nil
                return state.cancelled.remove(taskID) != nil
            }
            if !cancelled { writer.send(frame: frame) }
            writer.send(.ready)
        }
        return nil
    }

    /// A thread that sends the running task's heartbeat every ``heartbeatInterval``, until the
    /// loop ends; and that has the task thread close the detectors' sessions once the worker has
    /// been idle for ``detectorIdleRelease`` after a search.
    private func startHeartbeats() throws(Threads.StartFailure) {
        try Threads.start { [self] in
            while true {
                let (finished, release) = state.withLock { state -> (Bool, Bool) in
                    if state.finished { return (true, false) }
                    if let running = state.running, running.lastBeat.duration(to: .now) >= Self.heartbeatInterval {
                        state.running = (running.id, ContinuousClock.now)
                        writer.send(.heartbeat(taskID: running.id))
                    }
                    guard state.running == nil, state.waiting.isEmpty, let searched = state.searchedAt,
                        searched.duration(to: .now) >= Self.detectorIdleRelease
                    else { return (false, false) }
                    state.searchedAt = nil
                    return (false, true)
                }
                if finished { return }
                // On the task thread, after any task queued meanwhile: the sessions are its own.
                if release { tasks.async { [detections] in detections.closeSessions() } }
                Thread.sleep(forTimeInterval: 0.1)  // a fifth of the interval: beats at most 0.1 s late
            }
        }
    }
}
