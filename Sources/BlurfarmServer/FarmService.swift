import BlurfarmAPI
import BlurfarmCore
import BlurfarmCoordinator
import BlurfarmImageIO
import BlurfarmManifest
import BlurfarmSystem
import Foundation
import Logging
import Synchronization

/// The farm service: the durable queue, the scheduler, the farm's events and the event
/// stream. Every change is one transaction of the queue store with its entry in the event log,
/// then published. Tiles rendered and outputs started and finished are the exception, as they
/// come by the hundred (outputs up to thousands) a second: they are stored and published
/// together, at most every `progressInterval` and before any other change of the queue (an
/// output that starts in a paused or cancelled job, at once). Manifests are planned off the actor, on threads of
/// their own (a plan of a million outputs takes minutes): every other call is answered while
/// one plans, and a job cancelled while it plans stops planning.
public actor FarmService {
    /// The queue.
    public nonisolated let store: QueueStore
    /// The event stream's hub.
    public nonisolated let hub: EventHub
    let jobFarm: any JobFarm
    private let loader: JobLoader
    /// The folders its jobs may read and write below.
    public nonisolated let roots: Roots
    private let scheduler: Scheduler
    let logger: Logger
    private var eventTask: Task<Void, Never>?
    /// Tiles rendered since the server started, and how many when, over the last ten seconds.
    var tilesDone = 0
    var recentTiles: [(at: ContinuousClock.Instant, count: Int)] = []
    /// Tiles rendered and not yet stored: by job, how many, and each output's last count.
    var pendingTiles: [Int64: PendingTiles] = [:]
    /// Outputs started and finished and not yet stored, by job.
    var pendingOutputs: [Int64: PendingOutputs] = [:]
    /// The jobs the farm was told to pause or cancel (and not to resume): an output that starts
    /// in one is stored at once.
    var farmHolds: Set<Int64> = []
    /// Stores the pending tiles and outputs when it wakes; nil when none wait.
    var progressTask: Task<Void, Never>?
    let progressInterval: Duration
    /// The last output written (the page's thumbnail).
    public internal(set) var lastWritten: String?
    /// Set when the server stops: no job is taken, and the farm's end of the jobs in it is
    /// not theirs (they are taken back at the next start).
    var stopping = false
    /// The jobs being planned for the farm (dispatched, not yet in it), each with its stop.
    private var planning: [Int64: PlanningStop] = [:]
    /// The stops of the submissions being planned (stopped with the server).
    private var submissions: [ObjectIdentifier: PlanningStop] = [:]
    /// Manifests being planned now: submitted ones being checked, and dispatched jobs.
    public var plansInProgress: Int { planning.count + submissions.count }
    /// The plan a submission was checked with, while its job is queued (``queue(_:manifestPath:source:request:priority:)``):
    /// a job that goes to the farm then takes it, planned a moment before; one that waits is
    /// planned again when its turn comes, as its files are then.
    private var checkedPlan: (id: Int64, plan: JobPlan)?
    /// Manifests planned since the server started (each submission's check, each job's plan
    /// for the farm).
    private let plansMade = Atomic<Int>(0)
    /// ``plansMade``, for `/metrics`.
    public nonisolated var plansTotal: Int { plansMade.load(ordering: .relaxed) }
    /// Told on a plan's thread each time its planner asks whether to stop (between the glob
    /// walk's folders and between inputs), with the job's id (nil: a submission's check): how
    /// a test holds a plan in progress (`PlanningOffActorTests`). Nil but in tests.
    private var planningAsks: (@Sendable (Int64?) -> Void)?

    /// Sets ``planningAsks`` for the plans that start from now on.
    func tellPlanningAsks(_ asks: (@Sendable (Int64?) -> Void)?) { planningAsks = asks }

    /// The stop of a plan of `job` (nil: a submission's check), which tells ``planningAsks``.
    private func planningStop(of job: Int64?) -> PlanningStop {
        guard let asks = planningAsks else { return PlanningStop() }
        return PlanningStop { asks(job) }
    }

    /// A service over `store`, rendering with `jobFarm`; submitted manifests are planned by
    /// `loader`, reading their files beneath `roots` (``JobLoader/confinement``), and must stay
    /// below them. Tiles rendered and outputs finished are stored and published at most every
    /// `progressInterval`.
    public init(
        store: QueueStore, jobFarm: any JobFarm, loader: JobLoader, roots: Roots, scheduler: Scheduler = Scheduler(),
        progressInterval: Duration = .milliseconds(250), logger: Logger = Logger(label: "blurfarm.serve")
    ) {
        self.store = store
        self.progressInterval = progressInterval
        self.jobFarm = jobFarm
        var confined = loader
        confined.confinement = roots.confinement
        self.loader = confined
        self.roots = roots
        self.scheduler = scheduler
        self.logger = logger
        self.hub = EventHub()
    }

    /// Listens to the farm, takes back the jobs a previous server left unfinished (they are
    /// queued again; outputs written before are up to date) and starts the queue.
    public func start() throws(ServiceError) {
        let events = jobFarm.events()
        eventTask = Task { [weak self] in
            for await event in events { await self?.handle(event) }
        }
        for job in try storeCall({ try $0.jobs(states: [.active, .paused, .cancelling]) }) {
            try transition(job.id!, .serverRestarted)
        }
        try schedule()
    }

    /// Takes no more jobs (requests that change the queue are refused), and ignores how the
    /// farm ends the jobs it has: they stay unfinished in the queue for the next start.
    public func beginStopping() {
        stopping = true
        for stop in Array(planning.values) + Array(submissions.values) { stop.stop() }
    }

    /// Stores the tiles and outputs not yet stored, stops listening to the farm and ends the
    /// event streams.
    public func stop() {
        storeProgress()
        eventTask?.cancel()
        hub.finish()
    }

    // MARK: Requests

    /// Checks and queues a job: the manifest must plan now and every file it names must be
    /// below the roots, before anything runs. The plan is made off the actor: other calls are
    /// answered meanwhile.
    public func submit(_ request: SubmitRequest) async throws(ServiceError) -> QueueJob {
        if stopping { throw .stopping }
        let priority = request.priority ?? 50
        guard (0...100).contains(priority) else { throw .badRequest("priority must be 0 to 100, not \(priority)") }
        // A file name ends at a NUL: a path holding one would name another file than the one checked.
        for (key, value) in [("path", request.path), ("folder", request.folder), ("name", request.name)]
        where value?.utf8.contains(0) == true {
            throw .badRequest("'\(key)' must not contain a NUL character")
        }
        let manifestPath: String
        let source: ManifestSource
        let plan: @Sendable () -> ServedPlan
        let stop = planningStop(of: nil)
        switch (request.manifest, request.path) {
        case (let text?, nil):
            guard let folder = request.folder, folder.hasPrefix("/") else {
                throw .badRequest("'folder' must be the absolute folder the manifest's paths are relative to")
            }
            let name = request.name ?? "submitted.job"
            guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else {
                throw .badRequest("'name' must be a file name, without '/'")
            }
            guard roots.contains(folder) else { throw .outsideRoots(PathOutsideRoots(path: folder)) }
            manifestPath = (folder.hasSuffix("/") ? folder : folder + "/") + name
            source = .text
            plan = { [self, manifestPath] in servedPlan(text: text, manifestPath: manifestPath, stopped: stop.plannerAsks) }
        case (nil, let path?):
            guard path.hasPrefix("/") else { throw .badRequest("'path' must be absolute") }
            guard roots.contains(path) else { throw .outsideRoots(PathOutsideRoots(path: path)) }
            manifestPath = path
            source = .path
            plan = { [self] in servedPlan(manifestAt: path, stopped: stop.plannerAsks) }
        default:
            throw .badRequest("give either 'manifest' (with 'folder') or 'path'")
        }
        submissions[ObjectIdentifier(stop)] = stop
        let planned = await Self.offActor(plan)
        submissions[ObjectIdentifier(stop)] = nil
        if stopping { throw .stopping }
        switch planned {
        case .invalid(let diagnostics): throw .invalidManifest(diagnostics)
        case .outside(let outside): throw .outsideRoots(outside)
        case .planned(let plan): return try queue(plan, manifestPath: manifestPath, source: source, request: request, priority: priority)
        }
    }

    /// Queues the job `plan` plans, as `request` submitted it.
    private func queue(
        _ plan: JobPlan, manifestPath: String, source: ManifestSource, request: SubmitRequest, priority: Int
    ) throws(ServiceError) -> QueueJob {
        var job = QueueJob(
            id: nil, name: plan.job.name, manifest: manifestPath, source: source,
            manifestText: source == .text ? request.manifest ?? "" : "", priority: priority, state: .queued,
            inFarm: false, retryFailed: false, submittedAt: Date(), startedAt: nil, finishedAt: nil,
            outputsTotal: plan.outputCount, outputsUpToDate: 0, outputsWritten: 0, outputsFailed: 0,
            outputsCancelled: 0, tilesDone: 0, tilesTotal: 0, pixelsWritten: 0, error: nil, refusal: nil)
        let (inserted, event) = try storeCall { [job] in try $0.insert(job) { Self.event(.job, of: $0) } }
        publish(event)
        job = inserted
        logger.info("job \(job.id!) '\(job.name)' queued", metadata: ["manifest": "\(manifestPath)"])
        checkedPlan = (job.id!, plan)
        defer { checkedPlan = nil }
        try schedule()
        return try self.job(job.id!)
    }

    /// The job `id`.
    public func job(_ id: Int64) throws(ServiceError) -> QueueJob {
        guard let job = try storeCall({ try $0.job(id) }) else { throw .notFound(id) }
        return job
    }

    /// The jobs in queue order, those in `states` only when given, at most `limit`.
    public func jobs(states: [JobState]?, limit: Int?) throws(ServiceError) -> [QueueJob] {
        try storeCall { try $0.jobs(states: states, limit: limit) }
    }

    /// The outputs of job `id` started so far, by path: those in `states` only when given,
    /// after the path `after` when given, at most `limit` (``OutputList/next`` when more follow).
    /// Read from the queue's database on a thread of its own, as a plan is: a job may have
    /// millions of outputs, and every other call is answered while a client reads them (read on
    /// the actor, a 300,000-output job's whole list kept the job list waiting 0.9 s; a page of
    /// 100,000 read on the cooperative threads would hold one of them as long).
    public nonisolated func outputs(
        of id: Int64, states: [JobOutputState]? = nil, after: String? = nil, limit: Int = .max
    ) async throws(ServiceError) -> OutputList {
        try await Self.offActor { [self] in
            Result { () throws(ServiceError) -> OutputList in
                guard try storeCall({ try $0.job(id) }) != nil else { throw .notFound(id) }
                var page = try storeCall { try $0.outputs(of: id, states: states, after: after, limit: limit == .max ? limit : limit + 1) }
                guard page.count > limit else { return OutputList(outputs: page) }
                page.removeLast(page.count - limit)
                return OutputList(outputs: page, next: page.last?.output)
            }
        }.get()
    }

    /// Pauses, resumes, cancels or retries the job `id`.
    public func request(_ event: JobEvent, job id: Int64) throws(ServiceError) -> QueueJob {
        if stopping { throw .stopping }
        try transition(id, event)
        try schedule()
        return try job(id)
    }

    /// Changes the job's priority (0–100).
    public func setPriority(_ priority: Int, job id: Int64) throws(ServiceError) -> QueueJob {
        if stopping { throw .stopping }
        guard (0...100).contains(priority) else { throw .badRequest("priority must be 0 to 100, not \(priority)") }
        var job = try job(id)
        job.priority = priority
        try save(job)
        if job.inFarm, planning[id] == nil { jobFarm.setPriority(id, priority) }
        try schedule()
        return try self.job(id)
    }

    /// The worker processes.
    public nonisolated func workers() -> [WorkerInfo] { jobFarm.workers() }

    // MARK: The machine and the scheduler

    /// Applies `event` to job `id`'s machine, stores the new state and carries out the actions,
    /// after the tiles and outputs waiting: a job paused has its outputs that started before
    /// the pause stored.
    func transition(_ id: Int64, _ event: JobEvent) throws(ServiceError) {
        storeProgress()
        var job = try job(id)
        var machine = job.machine
        let actions: [JobAction]
        do {
            actions = try machine.handle(event)
        } catch {
            throw .refused(error)
        }
        job.machine = machine
        if event == .dispatched {
            job.startedAt = Date()
            job.error = nil
            job.refusal = nil
        }
        if machine.state.isFinished { job.finishedAt = Date() }
        if machine.state == .cancelled {
            // Cancelled in the queue or while it planned, the farm never had it: its outputs not
            // counted were cancelled before they started (a job cancelled in the farm has
            // every output counted by now).
            job.outputsCancelled += max(
                0, job.outputsTotal - job.outputsUpToDate - job.outputsWritten - job.outputsFailed - job.outputsCancelled)
        }
        if event == .retryRequested {
            job.finishedAt = nil
            job.error = nil
            job.refusal = nil
        }
        try save(job)
        logger.info("job \(id) \(machine.state.rawValue)")
        if machine.state.isFinished {
            farmHolds.remove(id)
            forgetFinished(like: job)
        }
        for action in actions { try perform(action, job: job) }
    }

    /// Removes, off the actor, the finished jobs of `job`'s manifest but the newest `jobs-kept`
    /// with their outputs' rows (``QueueStore/forgetFinished(name:manifest:keeping:chunk:)``):
    /// a manifest submitted by cron keeps its last runs in the queue, not every run's rows.
    private func forgetFinished(like job: QueueJob) {
        let (store, kept, logger, name, manifest) = (store, loader.configuration.jobsKept, logger, job.name, job.manifest)
        Task {
            await Self.offActor {
                do throws(QueueStoreError) {
                    let gone = try store.forgetFinished(name: name, manifest: manifest, keeping: kept)
                    if !gone.isEmpty { logger.info("jobs \(gone.map(String.init).joined(separator: ", ")) removed from the queue (jobs-kept \(kept))") }
                } catch {
                    logger.error("\(error)")
                }
            }
        }
    }

    private func perform(_ action: JobAction, job: QueueJob) throws(ServiceError) {
        let id = job.id!
        switch action {
        // A job being planned is not in the farm yet: its plan's end reads its state then.
        case .pauseInFarm:
            farmHolds.insert(id)
            if planning[id] == nil { jobFarm.pause(id) }
        case .resumeInFarm:
            farmHolds.remove(id)
            if planning[id] == nil { jobFarm.resume(id) }
        case .cancelInFarm:
            farmHolds.insert(id)
            if let stop = planning[id] { stop.stop() } else { jobFarm.cancel(id) }
        case .submitToFarm:
            // Planned again as its files are now, off the actor (unless it was checked just now,
            // in this call); cancelling it stops the plan.
            let stop = planningStop(of: id)
            planning[id] = stop
            let (source, text, manifest) = (job.source, job.manifestText, job.manifest)
            let checked = checkedPlan.flatMap { $0.id == id ? ServedPlan.planned($0.plan) : nil }
            Task {
                // Temporary files of writes a killed server left behind are the farm's to remove,
                // before it writes (FarmBridge: whatever their age).
                let planned = await Self.offActor { [self] in
                    checked
                        ?? (source == .text
                            ? servedPlan(text: text, manifestPath: manifest, stopped: stop.plannerAsks)
                            : servedPlan(manifestAt: manifest, stopped: stop.plannerAsks))
                }
                planEnded(id, planned, stop)
            }
        }
    }

    /// The end of job `id`'s plan for the farm: the job handed to the farm (paused there if it
    /// was paused meanwhile), or failed with why it does not plan, or cancelled when it was
    /// cancelled while it planned. Nothing when the server is stopping: the job stays
    /// unfinished for the next start.
    private func planEnded(_ id: Int64, _ planned: ServedPlan, _ stop: PlanningStop) {
        if planning[id] === stop { planning[id] = nil }
        if stopping { return }
        do throws(ServiceError) {
            let machine = try job(id).machine
            if stop.isStopped(), machine.state == .cancelling {
                // It never reached the farm: its cancel ends here.
                try transition(id, .farmFinished(failed: 0, cancelled: true))
            } else if machine.inFarm, machine.state == .active || machine.state == .paused {
                try submitPlanned(id, planned)
            }
            try schedule()
        } catch {
            logger.error("job \(id): \(error)")
        }
    }

    /// Hands job `id`, planned as `planned`, to the farm; a job that no longer plans, or that
    /// the farm refuses, fails with why.
    private func submitPlanned(_ id: Int64, _ planned: ServedPlan) throws(ServiceError) {
        let job = try job(id)
        let refusal: String
        var kind: JobRefusal?
        switch planned {
        case .invalid(let diagnostics):
            refusal = DiagnosticPrinter.render(diagnostics, program: "blurfarm")
            kind = .invalid
        case .outside(let outside):
            refusal = outside.description
        case .planned(let plan):
            do throws(JobFarmRefusal) {
                try jobFarm.submit(ServedJob(
                    id: id, plan: plan, registry: loader.registry, priority: job.priority,
                    retryFailed: job.retryFailed, confinement: roots.confinement))
                // Paused while it planned: the farm holds it from the start.
                if job.state == .paused {
                    farmHolds.insert(id)
                    jobFarm.pause(id)
                }
                return
            } catch {
                refusal = error.description
            }
        }
        var failed = job
        failed.error = refusal
        failed.refusal = kind
        try save(failed)
        try transition(id, .farmRefused)
    }

    /// `work` on a thread of its own, awaited (``Threads/awaited(stackSize:_:)``): the actor
    /// answers other calls meanwhile. A plan may take minutes: on GCD's global queue, on a
    /// loaded machine, a one-output submission waited for a large plan to end
    /// (`PlanningOffActorTests`). The thread is background work (``Threads/runInBackground()``):
    /// on two busy cores, a call now and then waited over 100 ms for the plan to give up its core.
    private static func offActor<Value: Sendable>(_ work: @escaping @Sendable () -> Value) async -> Value {
        // The glob walk and the manifest's parser recurse: the main thread's stack.
        await Threads.awaited(stackSize: 8 << 20) {
            Threads.runInBackground()
            return work()
        }
    }

    /// The plan of a submitted manifest's `text`, read as the file `manifestPath`.
    private nonisolated func servedPlan(text: String, manifestPath: String, stopped: @escaping @Sendable () -> Bool) -> ServedPlan {
        servedPlan(loader.decode(text: text, manifestPath: manifestPath), manifestPath: manifestPath, stopped: stopped)
    }

    /// The plan of the manifest file at `path`, read beneath the roots as it is now (never
    /// through a link out of them, never blocking on a FIFO); a file that cannot be read is its
    /// diagnostic, one outside the roots too.
    private nonisolated func servedPlan(manifestAt path: String, stopped: @escaping @Sendable () -> Bool = { false }) -> ServedPlan {
        do throws(RootedFileError) {
            return servedPlan(
                loader.decode(bytes: try roots.readManifest(path), manifestPath: path), manifestPath: path, stopped: stopped)
        } catch {
            if case .outside(let outside) = error { return .outside(outside) }
            return .invalid(Diagnostics([.error(error.description, at: nil)]))
        }
    }

    /// What a served manifest comes to, `decoded` from `manifestPath`.
    private enum ServedPlan: Sendable {
        case planned(JobPlan)
        case invalid(Diagnostics)
        /// A folder it would walk, or a file it would read or write, is outside the roots.
        case outside(PathOutsideRoots)
    }

    /// The plan of `decoded`: its folders checked against the roots before its globs are
    /// walked (a glob outside them is never read, its files never named in a diagnostic), then
    /// its inputs and outputs.
    private nonisolated func servedPlan(
        _ decoded: Result<JobSpec, Diagnostics>, manifestPath: String, stopped: @escaping @Sendable () -> Bool = { false }
    ) -> ServedPlan {
        let job: JobSpec
        switch decoded {
        case .failure(let diagnostics): return .invalid(diagnostics)
        case .success(let success): job = success
        }
        if let outside = roots.firstOutside(job, manifestPath: manifestPath) {
            return .outside(PathOutsideRoots(path: outside))
        }
        plansMade.add(1, ordering: .relaxed)
        switch loader.plan(job, manifestPath: manifestPath, stopped: stopped) {
        case .failure(let diagnostics): return .invalid(diagnostics)
        case .success(let plan):
            if let outside = roots.firstOutside(plan) { return .outside(PathOutsideRoots(path: outside)) }
            return .planned(plan)
        }
    }

    /// Hands the farm the queued jobs the scheduler picks.
    func schedule() throws(ServiceError) {
        if stopping { return }
        let entries = try storeCall { try $0.jobs(states: [.queued, .active, .paused, .cancelling]) }.map {
            Scheduler.Entry(id: $0.id!, priority: $0.priority, machine: $0.machine, key: "\($0.name)\u{0}\($0.manifest)")
        }
        for id in scheduler.toDispatch(entries) { try transition(id, .dispatched) }
    }

    /// Changes job `id` with `body`, and its outputs' rows as `outputs` says, in one
    /// transaction with its event of `kind` (QueueStore's), then publishes the event.
    func update(
        _ id: Int64, kind: StreamEvent.Kind, outputs: [QueueStore.OutputChange] = [], _ body: @escaping @Sendable (inout QueueJob) -> Void
    ) throws(ServiceError) {
        guard let (_, event) = try storeCall({ try $0.change(id, outputs: outputs, body) { Self.event(kind, of: $0) } }) else {
            throw .notFound(id)
        }
        publish(event)
    }

    /// Stores `job` as it is, in one transaction with its event, then publishes the event.
    func save(_ job: QueueJob) throws(ServiceError) {
        publish(try storeCall { try $0.save(job, event: Self.event(.job, of: job)) })
    }

    /// The event of `kind` that tells `job`: its view, without its manifest's text.
    static func event(_ kind: StreamEvent.Kind, of job: QueueJob) -> QueueEvent {
        QueueEvent(id: nil, at: Date(), kind: kind, jobId: job.id, data: json(JobView(job, withManifest: false)))
    }

    /// Sends `event`, stored, to the stream's clients.
    func publish(_ event: QueueEvent) {
        hub.publish(StreamEvent(id: event.id, kind: event.kind, data: event.data))
    }

    nonisolated func storeCall<T>(_ body: (QueueStore) throws -> T) throws(ServiceError) -> T {
        do {
            return try body(store)
        } catch let error as QueueStoreError {
            throw .store(error)
        } catch {
            throw .store(QueueStoreError(path: store.path, message: "\(error)"))
        }
    }

    /// `value` as compact JSON (dates ISO 8601, keys sorted).
    static func json(_ value: some Encodable) -> String {
        String(decoding: (try? APIJSON.encoder().encode(value)) ?? Data("null".utf8), as: UTF8.self)
    }
}

/// The stop of a plan made off the service's actor: set when its job is cancelled, or the
/// server stops; the planner asks it between folders and inputs.
final class PlanningStop: Sendable {
    private let stopped = Atomic(false)
    /// Told each time the planner asks (``FarmService/planningAsks``).
    private let asked: (@Sendable () -> Void)?

    init(asked: (@Sendable () -> Void)? = nil) { self.asked = asked }

    func stop() { stopped.store(true, ordering: .relaxed) }

    @Sendable func isStopped() -> Bool { stopped.load(ordering: .relaxed) }

    /// What the planner asks between folders and inputs: ``isStopped()``, once `asked` was told.
    @Sendable func plannerAsks() -> Bool {
        asked?()
        return isStopped()
    }
}
