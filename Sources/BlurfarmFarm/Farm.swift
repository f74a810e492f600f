import BlurfarmCoordinator
import BlurfarmPool
import BlurfarmSystem
import BlurfarmCore
import BlurfarmEngine
import BlurfarmManifest
import Dispatch
import Foundation
import Logging
import Synchronization

/// What a ``Farm`` is made of, decided by its caller: the library reads no environment, no
/// working directory and installs no signal handler.
public struct FarmSettings: Sendable {
    /// Worker processes (0: render in this process, with ``threads`` threads).
    public var workers: Int
    public var threads: Int
    /// The executable the workers run (`blurfarm-worker`).
    public var workerExecutable: String
    /// The workers' environment, `NAME=value`.
    public var workerEnvironment: [String]
    /// The folders the workers load plugins from (and the coordinator its detectors).
    public var pluginFolders: [String]
    /// The folder detectors find their models in (docs/manifest.md#regions-a-detector-finds);
    /// nil: a job whose regions a detector finds is refused, saying so.
    public var modelFolder: String?
    /// Retries, timeouts, the pixel limit, images decoded at once.
    public var configuration: FarmConfiguration
    /// The configuration file's absolute path, for the reports.
    public var configurationPath: String?
    /// Where records, locks and reports live (absolute).
    public var stateFolder: String
    /// blurfarm's and libvips's versions: part of every output's recipe. Asked only by a job
    /// that keeps records, and only when a decision needs them (libvips's version maps libvips
    /// or asks a worker, ``LibvipsVersion``: `apply` never needs it).
    public var recipeVersions: @Sendable () -> String
    /// The run's stop request (SIGINT, SIGTERM in the CLI): every job stops.
    public var stop: StopRequest
    public var logger: Logger

    public init(
        workers: Int, threads: Int, workerExecutable: String, workerEnvironment: [String] = [],
        pluginFolders: [String] = [], modelFolder: String? = nil, configuration: FarmConfiguration, configurationPath: String? = nil,
        stateFolder: String, recipeVersions: @escaping @Sendable () -> String, stop: StopRequest = StopRequest(),
        logger: Logger = Logger(label: "blurfarm", factory: { _ in SwiftLogNoOpLogHandler() })
    ) {
        self.workers = workers
        self.threads = threads
        self.workerExecutable = workerExecutable
        self.workerEnvironment = workerEnvironment
        self.pluginFolders = pluginFolders
        self.modelFolder = modelFolder
        self.configuration = configuration
        self.configurationPath = configurationPath
        self.stateFolder = stateFolder
        self.recipeVersions = recipeVersions
        self.stop = stop
        self.logger = logger
    }
}

/// The engine as a library (docs/farm.md, "A farm"): one pool of workers that many
/// jobs share. Jobs are submitted at any time and run side by side, their tiles ordered by
/// priority then arrival; each can be paused, reprioritised or cancelled alone. Everything
/// that happens is told as ``FarmEvent``s, to an `AsyncStream` (``events()``) or a callback
/// (``onEvent(_:)``). The workers start with the first job that has work and live until
/// ``shutdown()``.
public final class Farm: Sendable {
    public let settings: FarmSettings
    private let subscribers = Mutex<[@Sendable (FarmEvent) -> Void]>([])
    private let jobs = Mutex<[FarmJobID: Entry]>([:])
    private let nextJob = Atomic<UInt64>(1)
    /// The pool once started.
    private let pool = Mutex<WorkerPool?>(nil)
    /// Held while the pool starts (not ``pool``'s lock: a callback may ask for ``workers``).
    private let starting = NSLock()
    private let isShutDown = Atomic<Bool>(false)
    /// The detectors jobs' regions name, each loaded and its model opened once (``detectors(for:)``).
    let detectors = Mutex<[String: RegionDetector]>([:])

    /// A submitted job: how to steer it, and its outcome once done.
    private final class Entry: Sendable {
        let control: JobControl
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<JobOutcome?>(nil)

        init(control: JobControl) { self.control = control }
    }

    public init(_ settings: FarmSettings) { self.settings = settings }

    // MARK: Events

    /// Calls `callback` with every event from now on, from the farm's threads (one event at a
    /// time per job; keep it quick).
    public func onEvent(_ callback: @escaping @Sendable (FarmEvent) -> Void) {
        subscribers.withLock { $0.append(callback) }
    }

    /// Every event from now on, as a stream (each call a new subscriber).
    public func events() -> AsyncStream<FarmEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: FarmEvent.self)
        onEvent { event in continuation.yield(event) }
        return stream
    }

    func publish(_ event: FarmEvent) {
        for subscriber in subscribers.withLock({ $0 }) { subscriber(event) }
    }

    // MARK: Jobs

    /// Queues `job` and returns its number at once; it runs on its own thread (on the caller's,
    /// which then waits, when the system refuses one), side by side with the others, and tells its progress as events ending in ``FarmEvent/jobFinished(_:_:)``.
    /// Unless `keepsOutcome` is false, the outcome is kept for ``wait(_:)``; without it the
    /// farm forgets the job once it has told its end: a service, whose farm lives on and is
    /// told of every job by its events, kept every job's report, each holding its unnamed file
    /// in the state folder open (three descriptors and 48 MB a job of 100,000 outputs).
    @discardableResult
    public func submit(_ job: FarmJob, keepsOutcome: Bool = true) -> FarmJobID {
        let id = FarmJobID(nextJob.add(1, ordering: .relaxed).oldValue)
        let entry = Entry(control: JobControl(job: id.rawValue, priority: job.priority, stop: settings.stop))
        jobs.withLock { $0[id] = entry }
        let body: @Sendable () -> Void = { [self] in
            let outcome = run(id, job, control: entry.control)
            if keepsOutcome { entry.outcome.withLock { $0 = outcome } }
            publish(.jobFinished(id, outcome))
            if !keepsOutcome { jobs.withLock { $0[id] = nil } }
            entry.done.signal()
        }
        do throws(Threads.StartFailure) {
            try Threads.start(stackSize: 8 << 20, body)
        } catch {
            // No thread to spare: the job runs on the caller's, which waits for it, rather
            // than never.
            body()
        }
        return id
    }

    /// Cancels the job: its tiles leave the pool's queue, the workers rendering them drop them
    /// and go on, no output of it is written from now on (its outputs report `cancelled`),
    /// and the other jobs are untouched.
    public func cancel(_ id: FarmJobID) {
        guard let entry = entry(id) else { return }
        entry.control.cancel()
        pool.withLock { $0 }?.cancel(job: id.rawValue)
    }

    /// Pauses the job: no new output of it starts; those being rendered finish.
    public func pause(_ id: FarmJobID) { entry(id)?.control.setPaused(true) }

    /// Resumes a paused job.
    public func resume(_ id: FarmJobID) { entry(id)?.control.setPaused(false) }

    /// Gives the job another priority, for its images from now on and those in the queue.
    public func setPriority(_ id: FarmJobID, _ priority: Int) {
        guard let entry = entry(id) else { return }
        entry.control.priority = priority
        pool.withLock { $0 }?.reprioritise(job: id.rawValue, priority: priority)
    }

    /// Waits for the job to finish: its outcome (nil for a number never submitted, or one
    /// submitted without `keepsOutcome` once it has finished).
    public func wait(_ id: FarmJobID) -> JobOutcome? {
        guard let entry = entry(id) else { return nil }
        entry.done.wait()
        entry.done.signal()  // for the next waiter
        return entry.outcome.withLock { $0 }
    }

    /// ``wait(_:)`` without blocking a task's thread (``Threads/awaited(stackSize:_:)``).
    public func finished(_ id: FarmJobID) async -> JobOutcome? {
        await Threads.awaited { self.wait(id) }
    }

    /// The worker processes now (none before the first job with work, or in process).
    public var workers: [WorkerStatus] { pool.withLock { $0 }?.workers ?? [] }

    /// The temporary files of every job's writes in progress removed, for a process that must
    /// exit at once; how many there were.
    @discardableResult
    public func removeTemporaryFiles() -> Int {
        jobs.withLock { $0.values.map(\.control) }.reduce(0) { $0 + $1.temporaryFiles.removeAll() }
    }

    /// Stops the workers now (after the stop request was set): the images in their hands are
    /// abandoned and the jobs report them stopped. The farm takes no more work.
    public func shutdown() {
        isShutDown.store(true, ordering: .relaxed)
        pool.withLock { $0 }?.shutdown()
    }

    private func entry(_ id: FarmJobID) -> Entry? { jobs.withLock { $0[id] } }

    /// What renders the tiles: the pool (started by the first caller) or this process's threads.
    func rendering() throws(RenderFailure) -> any ImageRendering {
        guard settings.workers > 0 else {
            return InProcessRendering(executor: ThreadedTileExecutor(threads: settings.threads))
        }
        if let started = pool.withLock({ $0 }) { return started }
        starting.lock()
        defer { starting.unlock() }
        if let started = pool.withLock({ $0 }) { return started }
        if isShutDown.load(ordering: .relaxed) { throw RenderFailure(.poolShutDown) }
        let started = try WorkerPool(settings.poolSettings, stop: settings.stop) { [self] notice in
            switch notice {
            case .workerStarted(let id, let pid): publish(.workerStarted(id: id, pid: pid))
            case .workerLost(let id, let pid, let reason, let exit):
                publish(.workerLost(id: id, pid: pid, reason: "\(reason) (\(exit))"))
            default: break
            }
        }
        pool.withLock { $0 = started }
        // Shut down while it started: it stops now.
        if isShutDown.load(ordering: .relaxed) {
            started.shutdown()
            throw RenderFailure(.poolShutDown)
        }
        return started
    }
}

extension FarmSettings {
    /// The worker pool these settings make.
    public var poolSettings: WorkerPool.Settings {
        // Capped at a million seconds so that the nanoseconds fit an Int64.
        func duration(_ seconds: Double) -> Duration { .nanoseconds(Int64(min(seconds, 1e6) * 1e9)) }
        return WorkerPool.Settings(
            scheduling: PoolScheduler.Settings(
                workers: workers, retries: configuration.retries,
                heartbeatTimeout: duration(configuration.heartbeatTimeout),
                taskTimeout: configuration.taskTimeout.map { .fixed(duration($0)) } ?? .adaptive,
                startAttempts: PoolSchedule.startAttempts),
            executable: workerExecutable, pluginFolders: pluginFolders,
            environment: workerEnvironment, logger: logger)
    }
}
