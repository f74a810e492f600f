import BlurfarmFarm
import BlurfarmState
import BlurfarmPool
import BlurfarmAPI
import BlurfarmCoordinator
import Foundation
import Synchronization

/// The farm of `blurfarm serve`: the coordinator's ``Farm`` (one worker pool for every job),
/// seen as a ``JobFarm``. Every use the server makes of the farm is in this file.
public final class FarmBridge: JobFarm {
    private let farm: Farm
    private struct State {
        /// The queue's job id of each farm job, and back.
        var queueIDs: [FarmJobID: Int64] = [:]
        var farmIDs: [Int64: FarmJobID] = [:]
        /// Outputs started and not finished, by queue job id.
        var rendering: [Int64: Set<String>] = [:]
        /// Outputs cancelled before they started and not yet told, by queue job id: told as
        /// one count before the job's next event (its end comes after them), so that a
        /// cancelled job of a million outputs sends the service one event, not a million.
        var cancelledUnstarted: [Int64: Int] = [:]
        /// Workers lost in each slot.
        var restarts: [UInt32: Int] = [:]
        var listeners: [AsyncStream<JobFarmEvent>.Continuation] = []
    }
    private let state = Mutex(State())

    /// A farm with `settings` (its stop request is what ``shutdown(grace:)`` sets).
    public init(settings: FarmSettings) {
        farm = Farm(settings)
        farm.onEvent { [weak self] event in self?.translate(event) }
    }

    public func submit(_ job: ServedJob) throws(JobFarmRefusal) {
        // The ids are mapped before the job's first event is translated: its thread waits
        // for this lock.
        state.withLock { state in
            // Its end is told by its event: the farm keeps nothing of it after.
            let id = farm.submit(
                FarmJob(
                    plan: job.plan, registry: job.registry, priority: job.priority, retryFailed: job.retryFailed,
                    confinement: job.confinement, abandonedAge: 0),
                keepsOutcome: false)
            state.queueIDs[id] = job.id
            state.farmIDs[job.id] = id
        }
    }

    public func cancel(_ id: Int64) { farmID(id).map(farm.cancel) }
    public func pause(_ id: Int64) { farmID(id).map(farm.pause) }
    public func resume(_ id: Int64) { farmID(id).map(farm.resume) }
    public func setPriority(_ id: Int64, _ priority: Int) { farmID(id).map { farm.setPriority($0, priority) } }

    public func events() -> AsyncStream<JobFarmEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: JobFarmEvent.self)
        state.withLock { $0.listeners.append(continuation) }
        return stream
    }

    public func workers() -> [WorkerInfo] {
        let restarts = state.withLock { $0.restarts }
        return farm.workers.map { worker in
            WorkerInfo(
                slot: worker.id, pid: worker.pid, state: WorkerState(worker.state),
                tile: worker.tile.map { "\($0.width)x\($0.height)+\($0.x)+\($0.y)" }, tilesDone: worker.tilesDone,
                restarts: restarts[worker.id] ?? 0)
        }
    }

    /// Pauses every job (no new output starts), lets the outputs being rendered finish for up
    /// to `grace`, then stops the farm: the images still in the workers' hands are abandoned
    /// (never half-written: their temporary files are removed) and their jobs end.
    public func shutdown(grace: Duration) async {
        let jobs = state.withLock { Array($0.farmIDs.values) }
        for job in jobs { farm.pause(job) }
        let deadline = ContinuousClock.now + grace
        while ContinuousClock.now < deadline, state.withLock({ $0.rendering.values.contains { !$0.isEmpty } }) {
            try? await Task.sleep(for: .milliseconds(50))
        }
        farm.settings.stop.request(SIGTERM)
        farm.shutdown()
        for job in jobs { _ = await farm.finished(job) }
        farm.removeTemporaryFiles()
    }

    private func farmID(_ id: Int64) -> FarmJobID? { state.withLock { $0.farmIDs[id] } }

    /// The farm's event as the service's, sent to every listener.
    private func translate(_ event: FarmEvent) {
        let (translated, listeners) = state.withLock { state -> ([JobFarmEvent], [AsyncStream<JobFarmEvent>.Continuation]) in
            func queueID(_ id: FarmJobID) -> Int64? { state.queueIDs[id] }
            var translated: [JobFarmEvent] = []
            /// `event` of job `job`, after the count of its outputs cancelled unstarted.
            func send(_ event: JobFarmEvent, of job: Int64) {
                if let count = state.cancelledUnstarted.removeValue(forKey: job) {
                    translated.append(.outputsCancelled(job: job, count: count))
                }
                translated.append(event)
            }
            switch event {
            case .jobAccepted(let id, _, let outputs, let upToDate, _):
                if let job = queueID(id) { send(.accepted(job: job, outputs: outputs + upToDate, upToDate: upToDate), of: job) }
            case .outputStarted(let id, let output, let tiles):
                if let job = queueID(id) {
                    send(.outputStarted(job: job, output: output, tiles: tiles), of: job)
                    state.rendering[job, default: []].insert(output)
                }
            case .tilesDone(let id, let output, let done, let total):
                if let job = queueID(id) { send(.tilesDone(job: job, output: output, done: done, total: total), of: job) }
            case .outputFinished(let id, let report):
                guard let job = queueID(id) else { break }
                if state.rendering[job]?.remove(report.output) == nil, report.status == .cancelled {
                    state.cancelledUnstarted[job, default: 0] += 1
                } else {
                    send(.outputFinished(job: job, Self.outcome(report)), of: job)
                }
            case .problem(let id, let problem):
                let refusal: JobRefusal? = if case .locked = problem { .locked } else { nil }
                if !problem.isWarning, let job = queueID(id) { send(.problem(job: job, problem.description, refusal: refusal), of: job) }
            case .outputsNotStarted(let id, let status, let count):
                if status == .cancelled, let job = queueID(id) { state.cancelledUnstarted[job, default: 0] += count }
            case .pruned, .batchFinished:
                break
            case .workerStarted:
                translated = [.workersChanged]
            case .workerLost(let slot, _, _):
                state.restarts[slot, default: 0] += 1
                translated = [.workersChanged]
            case .jobFinished(let id, let outcome):
                if let job = queueID(id) {
                    send(.finished(job: job, failed: outcome.failures, cancelled: outcome.report.cancelled > 0), of: job)
                    state.rendering[job] = nil
                    state.farmIDs[job] = nil
                }
                state.queueIDs[id] = nil
            }
            return (translated, state.listeners)
        }
        for event in translated {
            for listener in listeners { listener.yield(event) }
        }
    }

    /// The API's state of an output that ended as `status`.
    private static func outputState(of status: OutputReport.Status) -> JobOutputState {
        switch status {
        case .written: .written
        case .failed, .failedEarlier: .failed
        case .stopped: .stopped
        case .cancelled: .cancelled
        case .skipped: .upToDate
        }
    }

    /// How an output ended, from its report.
    private static func outcome(_ report: OutputReport) -> OutputOutcome {
        OutputOutcome(
            status: outputState(of: report.status), output: report.output,
            pixels: report.pixels, tiles: report.tiles,
            seconds: report.decodeSeconds + report.filterSeconds + report.encodeSeconds, retries: report.retries,
            checksum: report.checksum, errorKind: report.failure?.kind, error: report.error)
    }
}

extension WorkerState {
    /// The API's name for what the pool says a worker is doing.
    init(_ state: WorkerStatus.State) {
        switch state {
        case .starting: self = .starting
        case .idle: self = .idle
        case .busy: self = .busy
        case .stopping: self = .stopping
        }
    }
}
