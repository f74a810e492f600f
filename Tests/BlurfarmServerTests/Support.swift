import BlurfarmAPI
import BlurfarmCoordinator
import BlurfarmKernels
import BlurfarmManifest
import BlurfarmServer
import BlurfarmTestSupport
import Foundation
import Logging
import Synchronization
import Testing

/// An farm the tests script: it records what the service asks of it and sends the events
/// a test gives it, as the real farm would.
final class ScriptedFarm: JobFarm {
    struct State {
        var submitted: [ServedJob] = []
        var calls: [String] = []
        var listeners: [AsyncStream<JobFarmEvent>.Continuation] = []
        var refusal: String?
        var workers: [WorkerInfo] = []
    }

    let state = Mutex(State())

    func submit(_ job: ServedJob) throws(JobFarmRefusal) {
        let refusal = state.withLock { state -> String? in
            if let refusal = state.refusal { return refusal }
            state.submitted.append(job)
            state.calls.append("submit \(job.id)")
            return nil
        }
        if let refusal { throw JobFarmRefusal(refusal) }
    }

    func cancel(_ id: Int64) { record("cancel \(id)") }
    func pause(_ id: Int64) { record("pause \(id)") }
    func resume(_ id: Int64) { record("resume \(id)") }
    func setPriority(_ id: Int64, _ priority: Int) { record("priority \(id) \(priority)") }

    func events() -> AsyncStream<JobFarmEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: JobFarmEvent.self)
        state.withLock { $0.listeners.append(continuation) }
        return stream
    }

    func workers() -> [WorkerInfo] { state.withLock { $0.workers } }

    func shutdown(grace: Duration) async { record("shutdown") }

    /// Sends `event` to the service.
    func emit(_ event: JobFarmEvent) {
        for listener in state.withLock({ $0.listeners }) { listener.yield(event) }
    }

    var calls: [String] { state.withLock { $0.calls } }
    var submitted: [ServedJob] { state.withLock { $0.submitted } }

    private func record(_ call: String) { state.withLock { $0.calls.append(call) } }
}

/// A root folder with two photos under `in/`, a queue database beside it, and a service over
/// a scripted farm.
struct ServerFixture {
    let folder: URL
    let root: String
    let jobFarm = ScriptedFarm()
    let service: FarmService
    let store: QueueStore

    static let manifest = """
        job: served
        inputs: [in/*.jpg]
        outputs:
          - name: blur
            path: out/{stem}.png
            filters:
              - gaussian:
                  sigma: 2

        """

    /// A fixture; `database` reuses the queue of an earlier one (a restart).
    init(
        reusing earlier: ServerFixture? = nil, depth: Int = 2, progressInterval: Duration = .milliseconds(250),
        configuration: FarmConfiguration = FarmConfiguration()
    ) throws {
        if let earlier {
            folder = earlier.folder
        } else {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("blurfarm-serve-\(UUID().uuidString)")
            let input = folder.appendingPathComponent("root/in")
            try FileManager.default.createDirectory(at: input, withIntermediateDirectories: true)
            let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("samples")
            for name in ["mate-FreshFlower.jpg", "plasma-Kite.jpg"] {
                try FileManager.default.copyItem(
                    at: samples.appendingPathComponent(name), to: input.appendingPathComponent(name))
            }
        }
        root = folder.appendingPathComponent("root").resolvingSymlinksInPath().path
        store = try QueueStore(path: folder.appendingPathComponent("queue.sqlite").path)
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        service = FarmService(
            store: store, jobFarm: jobFarm,
            loader: JobLoader(configuration: configuration, registry: .builtIn, reads: []),
            roots: try Roots([root]), scheduler: Scheduler(depth: depth), progressInterval: progressInterval,
            logger: logger)
    }

    func remove() { try? FileManager.default.removeItem(at: folder) }

    /// Submits the fixture's manifest with `priority`.
    @discardableResult
    /// Submits the fixture's manifest as `name` (nil: `submitted.job`). Jobs of one name and
    /// manifest wait for each other (one lock): tests that want several in the farm name them.
    func submit(priority: Int = 50, name: String? = nil) async throws -> QueueJob {
        let job = try await service.submit(SubmitRequest(manifest: Self.manifest, folder: root, name: name, priority: priority))
        try await settled()
        return job
    }

    /// Waits until no manifest is being planned: the jobs dispatched are in the farm (the
    /// service plans them off its actor first).
    func settled() async throws {
        try await eventually("the service's plans to end") { await service.plansInProgress == 0 }
    }

    /// Waits until job `id` satisfies `condition`; returns it (as it is when the service's
    /// hub ends, if it never does). The job changes only through the service, which publishes
    /// every change on its hub after storing it: the job is read again after each event, and
    /// no clock is involved. Other tests may hold the cooperative pool for seconds (the
    /// synchronous tests of the suite that wait for processes); the wait then lasts longer but
    /// cannot end early.
    @discardableResult
    func wait(for id: Int64, until condition: @Sendable (QueueJob) -> Bool) async throws -> QueueJob {
        // Subscribed before the first read: no change falls between the two.
        var changes = service.hub.subscribe().makeAsyncIterator()
        var job = try await service.job(id)
        while !condition(job), await changes.next() != nil {
            job = try await service.job(id)
        }
        return job
    }
}
