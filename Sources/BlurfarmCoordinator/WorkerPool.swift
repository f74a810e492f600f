import BlurfarmCore
import BlurfarmEngine
import BlurfarmKernels
import BlurfarmSharedMemory
import BlurfarmWire
import CSystemShims
import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The coordinator's pool of `blurfarm worker` processes (docs/architecture.md, "The worker
/// pool"): renders images by sending one `task` per tile to idle workers, the pixels in
/// shared segments. Several images may be rendered at once (``render(_:chain:tileSize:)`` is
/// called from several threads): their tiles form one queue, oldest image first, so that the
/// workers never wait while any image has a tile to render.
///
/// **One thread owns the workers.** Every worker is started, read, written, killed and waited
/// for by the pool's own thread, which lives from ``init(executable:workers:retries:heartbeatTimeout:)``
/// until ``shutdown()`` has waited for every worker. That matters because a worker asks for
/// SIGKILL when its parent *thread* exits (`PR_SET_PDEATHSIG`): workers started from a
/// short-lived thread would die with it. When the coordinator process dies, the thread dies
/// with it and every worker is killed.
///
/// ``render(_:chain:tileSize:)`` puts the source and the output into shared segments, hands
/// the tiles to the pool's thread and waits. A worker that exits, breaks its pipe, sends what
/// does not decode, or stays silent longer than the heartbeat timeout while it has a task (or
/// before its `hello`) is killed (SIGKILL), waited for and replaced; its task goes back to
/// the queue with the next attempt number, as does the task of a worker that runs one task
/// longer than the task timeout. A result whose checksum does not match the coordinator's over
/// the stitched output is a failed attempt too, retried on another worker when there is one. A
/// tile fails its image when its attempt `retries + 1` fails too; a `failure` reply (a
/// filter's error) fails its image at once, and the worker goes on. When an image fails, the
/// workers still rendering its other tiles are killed and replaced first.
/// The pool ignores SIGPIPE in this process, so a write to a dead worker fails instead of
/// killing the coordinator.
public final class WorkerPool: ImageRendering, PixelAllocator {
    /// The number of workers the pool keeps running.
    public let workerCount: Int
    private let inbox: Mutex<Inbox>
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let finished = DispatchSemaphore(value: 0)
    /// Every segment the pool made and keeps for the next images (see ``lease(byteCount:)``).
    private let segments = Mutex<[SharedSegment]>([])
    /// Segments kept while nothing uses them.
    private static let spareSegments = 4

    private struct Inbox: Sendable {
        var requests: [PoolRequest] = []
        var shuttingDown = false
        /// Set while the workers start, when the run was asked to stop.
        var stoppedBySignal: Int32?
    }

    /// How many times a worker that cannot be started at all (`pipe` or `posix_spawn` fails:
    /// no descriptors, no processes, no memory) is tried, waiting 0.1 s after the first
    /// failure and twice as long after each next: about 3 s in all. At start-up the pool then
    /// fails with the reason; later it goes on with the workers it has, and fails its images
    /// only when it has none.
    public static let startAttempts = 6

    /// Starts `workers` processes of `executable` (`blurfarm worker --worker-id N
    /// --coordinator-pid P`) and waits until each has said `hello` and `ready`.
    ///
    /// - Parameters:
    ///   - executable: the `blurfarm` executable (the CLI passes `/proc/self/exe`).
    ///   - retries: how often a tile is retried after a failed attempt (a worker that died or
    ///     hung, a bad checksum) before its image fails.
    ///   - heartbeatTimeout: how long a worker with a task (or one not yet greeted) may stay
    ///     silent before it is killed and replaced.
    ///   - taskTimeout: how long a worker may work on one task (heartbeats or not) before it is
    ///     killed and replaced, and the task retried: ``TaskTimeout/adaptive`` by default.
    ///   - pluginFolders: the folders the workers load plugins from (`--plugin-folder`).
    ///   - stop: while the workers start, checked every 50 ms: once it is set, the workers
    ///     started are stopped and this throws at once.
    /// - Throws: ``RenderFailure`` when the workers keep failing to start (dying before their
    ///   `hello`), when one cannot be started at all (no pipe, no process: the reason, after
    ///   ``startAttempts`` tries with backoff), or when `stop` was set.
    public init(
        executable: String, workers: Int, retries: Int = 3, heartbeatTimeout: Duration = .seconds(10),
        taskTimeout: TaskTimeout = .adaptive, pluginFolders: [String] = [], stop: StopRequest? = nil
    ) throws(RenderFailure) {
        precondition(workers >= 1, "a pool has at least one worker")
        precondition(retries >= 0, "retries cannot be negative")
        _ = blurfarm_ignore_sigpipe()
        let fds: (read: Int32, write: Int32)
        do throws(SystemCallError) {
            fds = try Syscalls.pipe(nonBlocking: true)
        } catch {
            throw RenderFailure("cannot start the worker pool: \(error)")
        }
        workerCount = workers
        wakeRead = fds.read
        wakeWrite = fds.write
        inbox = Mutex(Inbox())
        let started = StartSignal()
        let wakeRead = fds.read
        let thread = Thread { [self] in
            let supervisor = Supervisor(
                executable: executable, workerCount: workers, retries: retries, heartbeatTimeout: heartbeatTimeout,
                taskTimeout: taskTimeout, wake: wakeRead, pluginFolders: pluginFolders)
            supervisor.run(pool: self, started: started)
            finished.signal()
        }
        thread.name = "blurfarm.worker-pool"
        thread.start()
        while started.semaphore.wait(timeout: .now() + .milliseconds(50)) == .timedOut {
            if let signalNumber = stop?.signalNumber {
                // The pool's thread stops the workers it started and reports back.
                inbox.withLock { inbox in
                    inbox.stoppedBySignal = signalNumber
                    wake()
                }
            }
        }
        if let problem = started.problem.withLock({ $0 }) {
            finished.wait()
            inbox.withLock { $0.shuttingDown = true }
            close(wakeRead)
            close(wakeWrite)
            throw RenderFailure(problem)
        }
    }

    /// Renders `source` through `chain` in the workers, tile by tile, and returns the output,
    /// whose pixels live in a shared segment.
    ///
    /// - Throws: ``RenderFailure``: a filter's error (the worker's message), a tile that failed
    ///   more than the retry limit, a segment that cannot be created, a pool already shut down.
    public func render(_ source: PixelBuffer, chain: FilterChain, tileSize: Int) throws(RenderFailure) -> RenderedImage {
        let outputRect = chain.outputRect(forImage: source.rect)
        let channels = chain.channels(forSource: source.channels)
        if source.rect.isEmpty || outputRect.isEmpty {
            // Nothing to send: a segment holds at least one byte and no tile has pixels.
            return RenderedImage(
                pixels: Renderer(chain: chain, tileSize: tileSize, executor: ThreadedTileExecutor(threads: 1)).render(source))
        }
        let sourceSegment: SharedSegment, outputSegment: SharedSegment, sharedSource: PixelBuffer
        do {
            if let segment = segment(holding: source) {
                // Decoded into one of the pool's segments (``storage(byteCount:)``): no copy.
                (sourceSegment, sharedSource) = (segment, source)
            } else {
                sourceSegment = try lease(byteCount: source.rect.area * source.channels * MemoryLayout<Float>.stride)
                sharedSource = PixelBuffer(rect: source.rect, storage: sourceSegment.storage, channels: source.channels)
                sharedSource.copy(source.rect, from: source)
            }
            outputSegment = try lease(byteCount: outputRect.area * channels * MemoryLayout<Float>.stride)
        } catch {
            throw RenderFailure("cannot share the pixels with the workers: \(error)")
        }
        let output = PixelBuffer(rect: outputRect, storage: outputSegment.storage, channels: channels)
        let sourceRegion = SharedRegion(
            segment: sourceSegment.id,
            byteOffset: sharedSource.offset * MemoryLayout<Float>.stride, rect: sharedSource.rect,
            channels: sharedSource.channels, rowStride: sharedSource.rowStride)
        let request = PoolRequest(
            tiles: TileGrid(bounds: outputRect, tileSize: tileSize).tiles, image: source.rect,
            filters: chain.filters.map(\.spec), edge: chain.edge, colour: chain.colour, source: sourceRegion,
            outputSegment: outputSegment.id, output: output,
            plugins: chain.filters.filter { $0.origin != .builtIn }.map(\.spec.name),
            pixelsRead: { chain.pixelsRead(for: $0, image: source.rect) })
        // Woken under the lock: `shutdown` sets `shuttingDown` under it before it closes the
        // pipe, so the write never reaches a descriptor number the process has reused.
        let accepted = inbox.withLock { inbox -> Bool in
            if inbox.shuttingDown { return false }
            inbox.requests.append(request)
            wake()
            return true
        }
        guard accepted else { throw RenderFailure("the worker pool is shut down") }
        request.done.wait()
        // The segments stay open (their ids valid) until every task of the image is answered.
        withExtendedLifetime(sourceSegment) {}
        switch request.result! {
        case .success(let retries): return RenderedImage(pixels: output, retries: retries)
        case .failure(let failure): throw failure
        }
    }

    /// Pixels the workers can read without a copy: the runner decodes into these.
    public var allocator: (any PixelAllocator)? { self }

    /// A segment's memory for a decoder (``PixelAllocator``); nil when no segment can be made.
    public func storage(byteCount: Int) -> PixelStorage? {
        try? lease(byteCount: byteCount).storage
    }

    /// The pool's segment whose memory `buffer` lies in, if any.
    private func segment(holding buffer: PixelBuffer) -> SharedSegment? {
        segments.withLock { kept in kept.first { $0.storage === buffer.storage } }
    }

    /// A segment of at least `byteCount` bytes (and at most a quarter more) that nothing uses:
    /// one the pool made for an earlier image and got back (its output buffer dropped), or a
    /// new one. Reusing segments matters: a new memfd's pages are allocated, zeroed and mapped
    /// page by page in the coordinator and in every worker, and freed at the end, which cost
    /// more than the filtering; a kept segment keeps its pages and the workers their mappings.
    /// At most ``spareSegments`` unused segments are kept.
    private func lease(byteCount: Int) throws(SharedMemoryError) -> SharedSegment {
        try segments.withLock { (kept: inout [SharedSegment]) throws(SharedMemoryError) -> SharedSegment in
            var unused: [Int] = []
            for index in kept.indices where kept[index].isOnlyReference() {
                let size = kept[index].byteCount
                if size >= byteCount && size - byteCount <= byteCount / 4 { return kept[index] }
                unused.append(index)
            }
            for index in unused.dropLast(Self.spareSegments - 1).reversed() { kept.remove(at: index) }
            let segment = try SharedSegment.create(byteCount: byteCount, name: "blurfarm-pixels")
            kept.append(segment)
            return segment
        }
    }

    /// Sends `shutdown` to every worker, closes their pipes and waits for them (SIGKILL after
    /// 2 s), then ends the pool's thread. An image still being rendered fails. Idempotent.
    /// Call it when the pool is no longer needed: the pool's thread holds the pool until then.
    public func shutdown() {
        let first = inbox.withLock { inbox -> Bool in
            if inbox.shuttingDown { return false }
            inbox.shuttingDown = true
            return true
        }
        guard first else { return }
        wake()
        finished.wait()
        close(wakeRead)
        close(wakeWrite)
    }

    private func wake() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)  // a full pipe already wakes the thread
    }

    /// The requests handed over since the last call, whether the pool is shutting down, and the
    /// signal that stopped its start, if any.
    fileprivate func takeRequests() -> (requests: [PoolRequest], shuttingDown: Bool, stoppedBySignal: Int32?) {
        inbox.withLock { inbox in
            defer { inbox.requests.removeAll() }
            return (inbox.requests, inbox.shuttingDown, inbox.stoppedBySignal)
        }
    }
}

/// The outcome of starting the workers, from the pool's thread to its initializer.
private final class StartSignal: Sendable {
    let semaphore = DispatchSemaphore(value: 0)
    let problem = Mutex<String?>(nil)
}

/// One image handed to the pool's thread; the caller waits on ``done``. Written by the pool's
/// thread only, before it signals ``done``, and read by the caller only after.
private final class PoolRequest: @unchecked Sendable {
    let tiles: [Rect]
    let image: Rect
    let filters: [FilterSpec]
    let edge: EdgeRule
    let colour: ColourMode
    let source: SharedRegion
    let outputSegment: UInt32
    let output: PixelBuffer
    /// The plugins of the chain, named when a tile fails past the retry limit: a worker that
    /// dies while rendering them is most likely killed by one.
    let plugins: [String]
    /// How many pixels the chain reads for a tile: what the adaptive task timeout allows for.
    let pixelsRead: @Sendable (Rect) -> Int
    let done = DispatchSemaphore(value: 0)
    /// The retried tiles on success.
    var result: Result<Int, RenderFailure>?

    init(
        tiles: [Rect], image: Rect, filters: [FilterSpec], edge: EdgeRule, colour: ColourMode, source: SharedRegion,
        outputSegment: UInt32, output: PixelBuffer, plugins: [String], pixelsRead: @escaping @Sendable (Rect) -> Int
    ) {
        self.plugins = plugins
        self.pixelsRead = pixelsRead
        self.tiles = tiles
        self.image = image
        self.filters = filters
        self.edge = edge
        self.colour = colour
        self.source = source
        self.outputSegment = outputSegment
        self.output = output
    }

    func finish(_ result: Result<Int, RenderFailure>) {
        self.result = result
        done.signal()
    }
}

/// The pool's thread: owns the worker processes and the images being rendered.
private final class Supervisor {
    struct Slot {
        let workerID: UInt32
        let pid: pid_t
        let input: Int32
        let output: Int32
        var decoder = FrameDecoder()
        var greeted = false
        var idle = false
        /// The task sent to the worker and not yet followed by its `ready`.
        var task: UInt64?
        /// When the worker was sent ``task``.
        var taskSent: ContinuousClock.Instant
        /// The pixels ``task``'s filters read (``FilterChain/pixelsRead(for:image:)``), what its
        /// timeout allows for: computed once, when it is sent.
        var taskPixelsRead = 0
        var lastHeard: ContinuousClock.Instant
    }

    struct Pending {
        let tile: Rect
        let attempt: UInt32
        /// The worker whose result failed the last attempt (a bad checksum) while it lives on:
        /// another worker takes the retry when there is one.
        var avoid: UInt32?
    }

    /// An image being rendered.
    final class Job {
        let request: PoolRequest
        let imageID: UInt64
        var queue: [Pending]
        var remaining: Int
        var retries = 0

        init(request: PoolRequest, imageID: UInt64) {
            self.request = request
            self.imageID = imageID
            queue = request.tiles.map { Pending(tile: $0, attempt: 1) }
            remaining = request.tiles.count
        }
    }

    let executable: String
    /// The workers the pool keeps running: those asked for, fewer once workers could not be
    /// started (after ``WorkerPool/startAttempts`` tries) while some run.
    var workerCount: Int
    let retries: Int
    let heartbeatTimeout: Duration
    let taskTimeout: TaskTimeout
    /// The longest a task that was answered took (the adaptive task timeout grows with it).
    var slowestTask = Duration.zero
    let wake: Int32
    var slots: [Slot] = []
    var nextWorkerID: UInt32 = 1
    var nextTaskID: UInt64 = 1
    var nextImageID: UInt64 = 1
    /// The images being rendered, oldest first: their tiles are dispatched in that order.
    var jobs: [Job] = []
    /// The tasks sent and not yet answered, with their image.
    var inFlight: [UInt64: (job: Job, pending: Pending)] = [:]
    /// Results received and not yet checked against the output: checked after the next
    /// dispatch, so that the workers get their next tasks first.
    var unverified: [(job: Job, pending: Pending, checksum: UInt64, workerID: UInt32)] = []
    /// Workers that died or hung before their `hello`, since the last `hello`.
    var startFailures = 0
    /// Set when workers keep failing to start: every request fails with it.
    var broken: String?
    /// A worker that could not be started at all: the tries so far, when the next may be made,
    /// and why the last failed.
    var startRetry: (attempts: Int, next: ContinuousClock.Instant, problem: String)?

    /// Passed to every worker as `--plugin-folder` arguments.
    let pluginFolders: [String]
    /// The workers' environment (``makeWorkerEnvironment()``), a null-terminated list.
    let workerEnvironment = Supervisor.makeWorkerEnvironment()

    deinit { workerEnvironment.forEach { free($0) } }

    init(
        executable: String, workerCount: Int, retries: Int, heartbeatTimeout: Duration, taskTimeout: TaskTimeout,
        wake: Int32, pluginFolders: [String]
    ) {
        self.pluginFolders = pluginFolders
        self.executable = executable
        self.workerCount = workerCount
        self.retries = retries
        self.heartbeatTimeout = heartbeatTimeout
        self.taskTimeout = taskTimeout
        self.wake = wake
    }

    func run(pool: WorkerPool, started: StartSignal) {
        var starting = true
        while true {
            startMissingWorkers(starting: starting)
            let (requests, shuttingDown, stoppedBySignal) = pool.takeRequests()
            if starting {
                if let problem = broken ?? stoppedBySignal.map({ "stopped by signal \($0) while the workers started" }) {
                    stopWorkers()
                    started.problem.withLock { $0 = problem }
                    started.semaphore.signal()
                    return
                }
                if slots.count == workerCount && slots.allSatisfy(\.greeted) {
                    starting = false
                    started.semaphore.signal()
                }
            }
            for request in requests {
                let job = Job(request: request, imageID: nextImageID)
                nextImageID += 1
                jobs.append(job)
                if job.remaining == 0 { finish(job, .success(0)) }
            }
            if shuttingDown {
                // Workers first: no worker writes into a segment once its image is given back.
                stopWorkers()
                for job in jobs { finish(job, .failure(RenderFailure("the worker pool was shut down", retries: job.retries))) }
                return
            }
            if let broken {
                for job in jobs { finish(job, .failure(RenderFailure(broken, retries: job.retries))) }
            }
            dispatch()
            verifyResults()
            checkSilence()
            waitForInput()
        }
    }

    // MARK: Workers

    /// Starts the workers missing from ``workerCount`` (from this thread, which outlives them).
    /// One that cannot be started is tried again after a backoff, up to
    /// ``WorkerPool/startAttempts`` times; then, at start-up (`starting`) or with no worker
    /// left, the pool is broken with the reason, else it goes on with the workers it has.
    func startMissingWorkers(starting: Bool) {
        while slots.count < workerCount && broken == nil {
            if let retry = startRetry, ContinuousClock.now < retry.next { return }
            let problem: String
            do throws(SystemCallError) {
                try startWorker()
                startRetry = nil
                continue
            } catch {
                problem = "\(error)"
            }
            let attempts = (startRetry?.attempts ?? 0) + 1
            guard attempts >= WorkerPool.startAttempts else {
                let delay = Duration.milliseconds(100) * (1 << (attempts - 1))
                startRetry = (attempts, .now + delay, problem)
                return
            }
            startRetry = nil
            if starting || slots.isEmpty {
                broken = "cannot start worker \(slots.count + 1) of \(workerCount): \(problem) "
                    + "(tried \(attempts) times); lower --workers or raise the limit"
            } else {
                workerCount = slots.count
            }
        }
    }

    /// Starts one worker and adds its slot; throws when a pipe or the process cannot be made.
    func startWorker() throws(SystemCallError) {
        let workerID = nextWorkerID
        let toChild = try Syscalls.pipe()
        let fromChild: (read: Int32, write: Int32)
        do throws(SystemCallError) {
            fromChild = try Syscalls.pipe()
        } catch {
            close(toChild.read)
            close(toChild.write)
            throw error
        }
        let arguments = [
            executable, "worker", "--worker-id", "\(workerID)", "--coordinator-pid", "\(getpid())",
        ] + pluginFolders.flatMap { ["--plugin-folder", $0] }
        let spawned = Result { () throws(SystemCallError) -> pid_t in
            try Syscalls.spawn(
                executable, arguments: arguments, environment: workerEnvironment, stdin: toChild.read,
                stdout: fromChild.write)
        }
        close(toChild.read)
        close(fromChild.write)
        let pid: pid_t
        switch spawned {
        case .success(let started): pid = started
        case .failure(let error):
            close(toChild.write)
            close(fromChild.read)
            throw error
        }
        nextWorkerID += 1
        // Read without blocking: a descriptor number poll reported may belong to a replacement.
        Syscalls.setNonBlocking(fromChild.read)
        slots.append(Slot(
            workerID: workerID, pid: pid, input: toChild.write, output: fromChild.read, taskSent: .now, lastHeard: .now))
    }

    /// This process's environment for the workers, with `SWIFT_BACKTRACE=enable=no` unless it
    /// sets `SWIFT_BACKTRACE`: a worker that crashes (a plugin's fault) is reported in one line
    /// by the coordinator, not by pages of backtrace on the shared standard error. Copied at
    /// the start, freed with the supervisor.
    static func makeWorkerEnvironment() -> [UnsafeMutablePointer<CChar>?] {
        var entries: [UnsafeMutablePointer<CChar>?] = []
        var index = 0
        var hasBacktrace = false
        while let entry = environ[index] {
            if String(cString: entry).hasPrefix("SWIFT_BACKTRACE=") { hasBacktrace = true }
            entries.append(strdup(entry))
            index += 1
        }
        if !hasBacktrace { entries.append(strdup("SWIFT_BACKTRACE=enable=no")) }
        return entries + [nil]
    }

    func noteStartFailure(_ problem: String) {
        startFailures += 1
        if startFailures > 3 * workerCount { broken = "the workers keep failing to start: \(problem)" }
    }

    /// Kills the worker in `index` (SIGKILL), waits for it and removes its slot; its task, if
    /// it belongs to the image being rendered, is a failed attempt. The pool's loop starts a
    /// replacement.
    func lose(_ index: Int, because reason: String) {
        let slot = slots.remove(at: index)
        kill(slot.pid, SIGKILL)
        close(slot.input)
        close(slot.output)
        var status: Int32 = 0
        while waitpid(slot.pid, &status, 0) < 0 && errno == EINTR {}
        let exit = Self.describe(status: status)
        let message = "worker \(slot.workerID) (pid \(slot.pid)) \(reason) (\(exit))"
        if !slot.greeted { noteStartFailure(message) }
        if let taskID = slot.task, let (job, pending) = inFlight.removeValue(forKey: taskID) {
            failedAttempt(pending, of: job, message)
        }
        // The replacement is started by the pool's loop (startMissingWorkers).
    }

    /// "exit status N" or "killed by signal N".
    static func describe(status: Int32) -> String {
        let signalNumber = status & 0x7F
        if signalNumber == 0 { return "exit status \((status >> 8) & 0xFF)" }
        return "killed by signal \(signalNumber)"
    }

    /// Sends `shutdown` to every worker, closes its pipes and waits for it; a worker still
    /// running after 2 s is killed.
    func stopWorkers() {
        for slot in slots {
            _ = send(.shutdown, to: slot)
            close(slot.input)
            close(slot.output)
        }
        let deadline = ContinuousClock.now + .seconds(2)
        for slot in slots {
            var status: Int32 = 0
            while true {
                let result = waitpid(slot.pid, &status, WNOHANG)
                if result == slot.pid || (result < 0 && errno != EINTR) { break }
                if ContinuousClock.now >= deadline {
                    kill(slot.pid, SIGKILL)
                    while waitpid(slot.pid, &status, 0) < 0 && errno == EINTR {}
                    break
                }
                usleep(5_000)
            }
        }
        slots.removeAll()
    }

    // MARK: Tasks

    /// Sends queued tiles to idle workers while both remain: the oldest image's first.
    func dispatch() {
        var index = 0
        while index < slots.count {
            guard slots[index].greeted, slots[index].idle,
                let (job, position) = nextTask(for: slots[index].workerID)
            else {
                index += 1
                continue
            }
            let pending = job.queue.remove(at: position)
            let taskID = nextTaskID
            nextTaskID += 1
            let request = job.request
            let output = SharedRegion(
                segment: request.outputSegment, byteOffset: 0, rect: request.output.rect,
                channels: request.output.channels, rowStride: request.output.rowStride)
            let task = TaskMessage(
                taskID: taskID, imageID: job.imageID, attempt: pending.attempt, tile: pending.tile,
                image: request.image, filters: request.filters, edge: request.edge, colour: request.colour,
                pixels: .shared(source: request.source, output: output))
            inFlight[taskID] = (job, pending)
            slots[index].idle = false
            slots[index].task = taskID
            slots[index].taskSent = .now
            slots[index].taskPixelsRead = request.pixelsRead(pending.tile)
            slots[index].lastHeard = .now
            if !send(.task(task), to: slots[index]) {
                lose(index, because: "could not be sent a task: \(errorText())")
                continue  // the same index is the next slot
            }
            index += 1
        }
    }

    /// The queued tile the worker `workerID` takes next: the oldest image's first tile that
    /// this worker did not fail, unless it is the only worker.
    func nextTask(for workerID: UInt32) -> (Job, Int)? {
        for job in jobs {
            if let position = job.queue.firstIndex(where: { $0.avoid != workerID || workerCount == 1 }) {
                return (job, position)
            }
        }
        return nil
    }

    /// Checks every result received against the output it wrote: a tile whose checksum
    /// matches is done, one that does not is a failed attempt, retried on another worker.
    func verifyResults() {
        let results = unverified
        unverified.removeAll()
        for (job, pending, checksum, workerID) in results where jobs.contains(where: { $0 === job }) {
            let computed = PixelChecksum.of(job.request.output, in: pending.tile)
            if computed == checksum {
                job.remaining -= 1
                if job.remaining == 0 { finish(job, .success(job.retries)) }
            } else {
                failedAttempt(
                    pending, of: job, "checksum mismatch: worker \(workerID) sent \(checksum), the output holds \(computed)",
                    avoid: workerID)
            }
        }
    }

    /// A failed attempt at `pending`: back to the front of its image's queue with the next
    /// attempt number, or the image fails when the attempts are used up.
    func failedAttempt(_ pending: Pending, of job: Job, _ message: String, avoid: UInt32? = nil) {
        if Int(pending.attempt) > retries {
            let plugins = job.request.plugins.map { "plugin '\($0)'" }.joined(separator: ", ")
            let running = plugins.isEmpty ? "" : " (the chain runs \(plugins))"
            finish(job, .failure(RenderFailure(
                "tile \(pending.tile) failed \(pending.attempt) times\(running); the last time: \(message)",
                retries: job.retries)))
        } else {
            job.retries += 1
            job.queue.insert(Pending(tile: pending.tile, attempt: pending.attempt + 1, avoid: avoid), at: 0)
        }
    }

    /// Ends an image; the workers still rendering its tasks (it failed) are killed and replaced.
    func finish(_ job: Job, _ result: Result<Int, RenderFailure>) {
        guard let position = jobs.firstIndex(where: { $0 === job }) else { return }
        jobs.remove(at: position)
        // Workers still rendering a tile of this image (it failed) would go on writing into
        // its segments, which the pool lends out again once the caller lets go: they are
        // killed and waited for first, and replaced. (A `cancel` only drops the reply.)
        let busy = slots.filter { slot in slot.task.flatMap { inFlight[$0] }.map { $0.job === job } ?? false }
        for slot in busy {
            inFlight[slot.task!] = nil
            if let index = slots.firstIndex(where: { $0.workerID == slot.workerID }) {
                lose(index, because: "was stopped: the image of its task failed")
            }
        }
        job.request.finish(result)
    }

    // MARK: Messages

    /// Kills and replaces workers that have a task (or no `hello` yet) and were silent longer
    /// than the heartbeat timeout, and workers that have run one task longer than the task
    /// timeout.
    func checkSilence() {
        let now = ContinuousClock.now
        var index = 0
        while index < slots.count {
            let slot = slots[index]
            if (slot.task != nil || !slot.greeted) && slot.lastHeard.duration(to: now) > heartbeatTimeout {
                lose(index, because: "was silent for more than \(heartbeatTimeout) and was killed")
                continue
            }
            if slot.task != nil {
                let limit = taskTimeout.limit(pixelsRead: slot.taskPixelsRead, slowestSoFar: slowestTask)
                if slot.taskSent.duration(to: now) > limit {
                    lose(index, because: "ran one task longer than the task timeout of \(taskTimeout.describe(limit)) and was killed")
                    continue
                }
            }
            index += 1
        }
    }

    /// Waits up to 100 ms for the workers' output or the wake pipe, and handles what came.
    func waitForInput() {
        var fds = [pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
        fds += slots.map { pollfd(fd: $0.output, events: Int16(POLLIN), revents: 0) }
        let count = poll(&fds, nfds_t(fds.count), 100)
        guard count > 0 else { return }
        if fds[0].revents != 0 {
            var bytes = [UInt8](repeating: 0, count: 64)
            while read(wake, &bytes, bytes.count) > 0 {}
        }
        let ready = Set(fds.dropFirst().filter { $0.revents != 0 }.map(\.fd))
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        for fd in ready {
            guard let index = slots.firstIndex(where: { $0.output == fd }) else { continue }
            let n = read(fd, &chunk, chunk.count)
            if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            if n <= 0 {
                lose(index, because: n == 0 ? "closed its output" : "could not be read: \(errorText())")
                continue
            }
            slots[index].decoder.append(chunk[0..<n])
            slots[index].lastHeard = .now
            handleMessages(workerID: slots[index].workerID)
        }
    }

    /// Handles every whole message the worker `workerID` has sent.
    func handleMessages(workerID: UInt32) {
        while let index = slots.firstIndex(where: { $0.workerID == workerID }) {
            let message: WireMessage
            do {
                guard let next = try slots[index].decoder.nextMessage() else { return }
                message = next
            } catch {
                return lose(index, because: "sent what does not decode: \(error)")
            }
            switch message {
            case .hello(let hello):
                guard !slots[index].greeted, hello.workerID == workerID,
                    hello.protocolVersion == WireProtocol.version
                else { return lose(index, because: "sent an unexpected hello") }
                slots[index].greeted = true
                startFailures = 0
            case .ready:
                guard slots[index].greeted else { return lose(index, because: "said ready before hello") }
                if let taskID = slots[index].task, let (job, pending) = inFlight.removeValue(forKey: taskID) {
                    // Ready with no reply to a task still wanted: the task is lost.
                    failedAttempt(pending, of: job, "worker \(workerID) answered nothing", avoid: workerID)
                }
                slots[index].idle = true
                slots[index].task = nil
            case .heartbeat:
                break
            case .result(let result):
                guard slots[index].task == result.taskID else { continue }  // a cancelled task's
                slowestTask = max(slowestTask, slots[index].taskSent.duration(to: .now))
                guard let (job, pending) = inFlight.removeValue(forKey: result.taskID) else { continue }
                unverified.append((job, pending, result.checksum, workerID))
            case .failure(let failure):
                guard slots[index].task == failure.taskID else { continue }
                guard let (job, pending) = inFlight.removeValue(forKey: failure.taskID) else { continue }
                finish(job, .failure(RenderFailure(
                    "tile \(pending.tile): worker \(workerID): \(failure.message)", retries: job.retries)))
            case .task, .shutdown, .cancel:
                return lose(index, because: "sent '\(message.type)', which only a coordinator sends")
            }
        }
    }

    /// Writes `message` whole to the worker's input; false when the pipe is broken.
    func send(_ message: WireMessage, to slot: Slot) -> Bool {
        guard let frame = try? FrameEncoder.encode(message) else { return false }
        do throws(IOFailure) {
            try FileDescriptorIO.writeAll(slot.input, frame)
            return true
        } catch {
            return false
        }
    }

    func errorText() -> String { String(cString: strerror(errno)) }
}

extension WorkerPool {
    /// The most workers this machine allows, and the rule that sets it.
    public struct Capacity: Sendable, Equatable {
        /// The number of workers (0: none can run).
        public let workers: Int
        /// Why, e.g. "at most 4 per core, 2 cores".
        public let reason: String
    }

    /// Workers per core at most: a worker renders on one core, and more than a few per core
    /// only adds processes, memory and descriptors.
    public static let workersPerCore = 4
    /// Descriptors each worker holds in the coordinator (its two pipe ends).
    public static let descriptorsPerWorker = 2
    /// Descriptors kept for the rest of a run (standard streams, lock, records, the wake pipe,
    /// inputs being decoded, shared segments, libvips): a run uses about 14 at rest.
    public static let descriptorsKept = 24
    /// Processes (threads count) each worker may take (a worker runs 3 or 4 threads).
    public static let tasksPerWorker = 4
    /// Processes kept for the coordinator's own threads (about 12: libvips's, the image threads,
    /// the pool's).
    public static let tasksKept = 16

    /// The most workers that may run here, by the least of: ``workersPerCore`` × `cores`; what
    /// `RLIMIT_NOFILE` leaves after ``descriptorsKept``, at ``descriptorsPerWorker`` each; and,
    /// when it applies (not to root), what `RLIMIT_NPROC` leaves after ``tasksKept``, at
    /// ``tasksPerWorker`` each.
    public static func capacity(cores: Int) -> Capacity {
        var candidates = [Capacity(workers: workersPerCore * max(cores, 1), reason: "at most \(workersPerCore) per core, \(cores) cores")]
        if let files = Syscalls.softLimit(RLIMIT_NOFILE) {
            candidates.append(Capacity(
                workers: max(0, (files - descriptorsKept) / descriptorsPerWorker),
                reason: "ulimit -n \(files) leaves room for that many (\(descriptorsPerWorker) descriptors each, \(descriptorsKept) kept)"))
        }
        if Syscalls.processLimitApplies, let tasks = Syscalls.softLimit(__RLIMIT_NPROC) {
            candidates.append(Capacity(
                workers: max(0, (tasks - tasksKept) / tasksPerWorker),
                reason: "ulimit -u \(tasks) leaves room for that many (\(tasksPerWorker) threads each, \(tasksKept) kept)"))
        }
        return candidates.min { $0.workers < $1.workers }!
    }
}
