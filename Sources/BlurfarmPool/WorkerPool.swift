import BlurfarmSystem
import BlurfarmCore
import BlurfarmEngine
import BlurfarmKernels
import BlurfarmSharedMemory
import BlurfarmWire
import Dispatch
import Foundation
import Logging
import Synchronization

/// The coordinator's pool of `blurfarm-worker` processes (docs/pool.md, "The worker
/// pool"): renders images by sending one `task` per tile to idle workers, the pixels in
/// shared segments. Several images, of several jobs, are rendered at once
/// (``render(_:chain:tileSize:ticket:)`` is called from several threads): their tiles form
/// one queue ordered by the job's priority, then the job's and the image's arrival.
///
/// The decisions (which tile goes where, when a worker is killed, when an image fails) are
/// ``PoolScheduler``'s; this class is the I/O around it: one thread, the pool's own, starts,
/// reads, writes, kills and waits for every worker. That matters because a worker asks for
/// SIGKILL when its parent *thread* exits (`PR_SET_PDEATHSIG`): workers started from a
/// short-lived thread would die with it. When the coordinator process dies, the thread dies
/// with it and every worker is killed.
///
/// The pool changes nothing of its process: SIGPIPE is blocked on its own thread only (the
/// one that writes to workers), so a write to a dead worker fails with EPIPE instead of
/// killing the process, whatever the process does with SIGPIPE.
public final class WorkerPool: ImageRendering, Sendable {
    /// What a pool is made of.
    public struct Settings: Sendable {
        /// The scheduling rules: workers, retries, timeouts.
        public var scheduling: PoolScheduler.Settings
        /// The worker executable (`blurfarm-worker`), started as `EXECUTABLE --worker-id N --coordinator-pid P`.
        public var executable: String
        /// The folders the workers load plugins from (`--plugin-folder`).
        public var pluginFolders: [String]
        /// The workers' environment, `NAME=value` (the CLI passes its own).
        public var environment: [String]
        /// Where worker losses, retries and slow starts are logged.
        public var logger: Logger

        public init(
            scheduling: PoolScheduler.Settings, executable: String, pluginFolders: [String] = [],
            environment: [String] = [], logger: Logger = Logger(label: "blurfarm.pool", factory: { _ in SwiftLogNoOpLogHandler() })
        ) {
            self.scheduling = scheduling
            self.executable = executable
            self.pluginFolders = pluginFolders
            self.environment = environment
            self.logger = logger
        }
    }

    package let settings: Settings
    let inbox = Mutex(Inbox())
    let wakePipe: (read: Int32, write: Int32)
    private let finished = DispatchSemaphore(value: 0)
    /// Signalled by the pool's thread once the workers started, or could not.
    private let started = StartSignal()
    /// What ``waitUntilStarted(stop:)`` found.
    private let startOutcome = Mutex<Result<Void, RenderFailure>?>(nil)
    /// Set once the pool's thread has ended and the wake pipe is closed.
    private let ended = Mutex(false)
    let segments = SegmentPool()
    /// The workers as last seen by the pool's thread.
    let snapshot = Mutex<[WorkerStatus]>([])
    /// Called with every notice (worker started, lost; tile retried), from the pool's thread.
    let onNotice: @Sendable (PoolScheduler.PoolNotice) -> Void

    /// What other threads hand to the pool's thread.
    struct Inbox: Sendable {
        var images: [(PoolScheduler.ImageID, PoolScheduler.Image, PoolRequest)] = []
        var events: [PoolScheduler.Event] = []
        var shuttingDown = false
        var nextImage: PoolScheduler.ImageID = 1
        /// Set while the workers start, when the caller asked to stop.
        var stoppedBySignal: Int32?
    }

    /// Starts the workers and waits until each has said `hello` and `ready`: ``init(launching:onNotice:)``
    /// and ``waitUntilStarted(stop:)``.
    ///
    /// - Parameters:
    ///   - stop: while the workers start, checked every 50 ms: once it is set, the workers
    ///     started are stopped and this throws at once.
    ///   - onNotice: told of every worker started and lost and every tile retried.
    /// - Throws: ``RenderFailure`` as ``waitUntilStarted(stop:)``, or when the pool's wake
    ///   pipe cannot be made.
    public convenience init(
        _ settings: Settings, stop: StopRequest? = nil,
        onNotice: @escaping @Sendable (PoolScheduler.PoolNotice) -> Void = { _ in }
    ) throws(RenderFailure) {
        try self.init(launching: settings, onNotice: onNotice)
        try waitUntilStarted(stop: stop)
    }

    /// Starts the workers and returns at once: the caller does something else meanwhile (opens
    /// and decodes the first rows of an image, in the pool's memory: ``allocator``), then
    /// calls ``waitUntilStarted(stop:)`` before it renders anything, or ``shutdown()``.
    ///
    /// - Throws: ``RenderFailure`` when the pool's wake pipe or thread cannot be made.
    public init(
        launching settings: Settings, onNotice: @escaping @Sendable (PoolScheduler.PoolNotice) -> Void = { _ in }
    ) throws(RenderFailure) {
        do throws(SystemCallError) {
            wakePipe = try Syscalls.pipe(nonBlocking: true)
        } catch {
            throw RenderFailure(.workersUnavailable("cannot start the worker pool: \(error)"))
        }
        self.settings = settings
        self.onNotice = onNotice
        do throws(Threads.StartFailure) {
            try Threads.start { [self, started] in
                Syscalls.blockBrokenPipeSignalInThisThread()
                var supervisor = PoolSupervisor(pool: self)
                supervisor.run(started: started)
                finished.signal()
            }
        } catch {
            Syscalls.close(wakePipe.read)
            Syscalls.close(wakePipe.write)
            ended.withLock { $0 = true }
            throw RenderFailure(.workersUnavailable("cannot start the worker pool: \(error)"))
        }
    }

    /// Waits until each worker has said `hello` and `ready`; returns at once after the first
    /// call. Call it before rendering anything; after a ``shutdown()`` that came first, it
    /// throws.
    ///
    /// - Parameter stop: checked every 50 ms: once it is set, the workers started are stopped
    ///   and this throws at once.
    /// - Throws: ``RenderFailure`` when the worker executable cannot be run (at once), when the
    ///   workers keep failing to start (dying before their `hello`), when one cannot be started
    ///   at all (after ``startAttempts`` tries with backoff), or when `stop` was set. The pool
    ///   is then shut down, and a second call throws the same.
    public func waitUntilStarted(stop: StopRequest? = nil) throws(RenderFailure) {
        try startOutcome.withLock { (outcome: inout Result<Void, RenderFailure>?) throws(RenderFailure) in
            if outcome == nil {
                while started.semaphore.wait(timeout: .now() + .milliseconds(50)) == .timedOut {
                    if let signalNumber = stop?.signalNumber {
                        inbox.withLock { inbox in
                            inbox.stoppedBySignal = signalNumber
                            wake()
                        }
                    }
                }
                if let problem = started.problem.withLock({ $0 }) {
                    inbox.withLock { $0.shuttingDown = true }
                    waitForTheEnd()
                    outcome = .failure(RenderFailure(.workersUnavailable(problem)))
                } else {
                    outcome = .success(())
                }
            }
            try outcome!.get()
        }
    }

    /// Renders `source` through `chain` in the workers, tile by tile, and returns the output,
    /// whose pixels live in a shared segment. `ticket` places the image in the queue and
    /// hears of its tiles as they are done.
    ///
    /// - Throws: ``RenderFailure``: a filter's error, a tile that failed more than the retry
    ///   limit, the job cancelled, a segment that cannot be created, a pool shut down.
    public func render(
        _ source: PixelBuffer, chain: FilterChain, tileSize: Int, ticket: RenderTicket
    ) throws(RenderFailure) -> RenderedImage {
        let outputRect = chain.outputRect(forImage: source.rect)
        let channels = chain.channels(forSource: source.channels)
        if source.rect.isEmpty || outputRect.isEmpty {
            // Nothing to send: a segment holds at least one byte and no tile has pixels.
            return RenderedImage(
                pixels: Renderer(chain: chain, tileSize: tileSize, executor: ThreadedTileExecutor(threads: 1)).render(source))
        }
        let output: PixelBuffer
        do throws(SharedMemoryError) {
            let segment = try segments.lease(byteCount: outputRect.area * channels * MemoryLayout<Float>.stride)
            output = PixelBuffer(rect: outputRect, storage: segment.storage, channels: channels)
        } catch {
            throw RenderFailure(.sharedMemory("\(error)"))
        }
        let retries = try submit(
            outputRect, from: .float32(source), image: source.rect, into: .float32(output), chain: chain,
            tileSize: tileSize, ticket: ticket
        ).wait().retries
        return RenderedImage(pixels: output, retries: retries)
    }

    /// Starts rendering the output pixels of `region` (inside the chain's output rectangle for
    /// `image`) in the workers, tile by tile, into `output` (whose rectangle holds `region`),
    /// from `source`, which holds the part of `image` that the region's tiles read: one band of
    /// a streamed image (``BandedRender``), or a whole image. The same bits as the same pixels
    /// of the whole image's render, converted to `output`'s samples over `background` when it
    /// holds a file's samples (``AnyPixels/store(_:in:background:)``). Pixels in the pool's
    /// memory (``allocator``) are shared as they are; others are copied into a segment and
    /// back. Returns at once: the next band of a streamed image is queued while the last tiles
    /// of one are rendered, with no thread of the caller's waiting for either; the wait returns
    /// the tiles retried.
    ///
    /// - Throws: (from the wait) ``RenderFailure`` as ``render(_:chain:tileSize:ticket:)``.
    public func submit(
        _ region: Rect, from source: AnyPixels, image: Rect, into output: AnyPixels, chain: FilterChain,
        tileSize: Int, ticket: RenderTicket, background: SIMD3<Float> = .zero
    ) -> RenderInFlight {
        precondition(output.rect.contains(region), "the output \(output.rect) does not hold \(region)")
        let tiles = TileGrid(bounds: region, tileSize: tileSize).tiles
        guard !tiles.isEmpty else { return RenderInFlight(.success(0)) }
        let sharedSource: Shared, sharedOutput: Shared
        do throws(SharedMemoryError) {
            sharedSource = try shared(source)
            sharedOutput = try shared(output)
        } catch {
            return RenderInFlight(.failure(RenderFailure(.sharedMemory("\(error)"))))
        }
        let request = PoolRequest(
            .tiles(PoolRequest.Tiles(
                image: image, filters: chain.filters.map(\.spec), edge: chain.edge, colour: chain.colour,
                regions: chain.regions, source: sharedSource.region, output: sharedOutput.pixels, outputRegion: sharedOutput.region,
                background: background)),
            progress: ticket.progress)
        let accepted = queue(request, ticket: ticket) { id in
            PoolScheduler.Image(
                tiles: tiles, pixelsRead: tiles.map { chain.pixelsRead(for: $0, image: image) },
                order: PoolScheduler.ImageOrder(priority: ticket.priority, job: ticket.job, image: id),
                plugins: chain.filters.filter { $0.origin != .builtIn }.map(\.spec.name))
        }
        guard accepted else { return RenderInFlight(.failure(RenderFailure(.poolShutDown))) }
        return RenderInFlight { () throws(RenderFailure) -> RenderInFlight.Done in
            request.done.wait()
            request.done.signal()  // a second wait returns at once
            // The segments stay open (their ids valid) until every task of the image is answered.
            withExtendedLifetime((sharedSource, sharedOutput)) {}
            switch request.result! {
            case .success(let retries):
                if sharedOutput.pixels.storage !== output.storage { output.copy(region, from: sharedOutput.pixels) }
                return RenderInFlight.Done(retries: retries, at: request.finished)
            case .failure(let failure): throw failure
            }
        }
    }

    /// Its workers, each holding ``PoolScheduler/Settings/tasksHeld`` tasks at once.
    public var wholeImageWorkers: (workers: Int, tasksHeld: Int)? {
        (settings.scheduling.workers, settings.scheduling.tasksHeld)
    }

    /// Runs `task` (its ids and attempt are the pool's to fill in) in one worker, which decodes
    /// the input, renders each output's chain and encodes each output, and returns the
    /// worker's answer and the attempts retried. `pixelsRead` (the decode's, the filters' and
    /// the encodes', as the caller counts them from its chains) sizes the task's timeout;
    /// `ticket` places it in the queue (one "tile": the image, the input's size) and hears when
    /// it is done. A worker that dies or hangs on it is replaced and the task tried again on
    /// another, as a tile is; nothing is written by a worker, so nothing is left behind.
    ///
    /// - Throws: ``RenderFailure``: the task failed every attempt, its job was cancelled, the
    ///   pool was shut down.
    public func renderImage(_ task: ImageTask, image: Rect, pixelsRead: Int, ticket: RenderTicket) throws(RenderFailure)
        -> (ImageResult, retries: Int)
    {
        let (request, retries) = try runWhole(.image(task), image: image, pixelsRead: pixelsRead, ticket: ticket)
        guard let result = request.imageResult else { preconditionFailure("an image task finished without its worker's answer") }
        return (result, retries)
    }

    /// Runs `task` (its ids and attempt are the pool's to fill in) in one worker, which
    /// decodes the photo as shown and runs the detector's network on the schedule's passes, and
    /// returns the worker's answer and the attempts retried. `image` (the photo's size, from its
    /// header) sizes the task's timeout; `ticket` places it in the queue and hears when it is
    /// done. A worker that dies or hangs on it (a detector that crashes) is replaced and the
    /// task tried again on another, as a tile is.
    ///
    /// - Throws: ``RenderFailure``, as ``renderImage(_:image:pixelsRead:ticket:)``.
    public func detect(_ task: DetectionTask, image: Rect, ticket: RenderTicket) throws(RenderFailure) -> (DetectionResult, retries: Int) {
        // The decodes at the passes' sizes, the network's set-up and its passes: a generous
        // multiple of the photo's pixels for the timeout's allowance (a 16 MP photo's search on
        // one thread takes about 7 s of the 1,280 s allowed).
        let pixels = image.area.multipliedReportingOverflow(by: 4).partialValue
        let (request, retries) = try runWhole(.detection(task), image: image, pixelsRead: pixels, ticket: ticket)
        guard let result = request.detectionResult else { preconditionFailure("a detection task finished without its worker's answer") }
        return (result, retries)
    }

    /// Queues `work`, one task of a whole input (`image`, its "tile") for one worker, allowed
    /// the timeout of `pixelsRead` pixels, and waits for it: the finished request, which holds
    /// the worker's answer, and the attempts retried.
    private func runWhole(_ work: PoolRequest.Work, image: Rect, pixelsRead: Int, ticket: RenderTicket) throws(RenderFailure)
        -> (PoolRequest, retries: Int)
    {
        let request = PoolRequest(work, progress: ticket.progress)
        let accepted = queue(request, ticket: ticket) { id in
            PoolScheduler.Image(
                tiles: [image], pixelsRead: [pixelsRead],
                order: PoolScheduler.ImageOrder(priority: ticket.priority, job: ticket.job, image: id))
        }
        guard accepted else { throw RenderFailure(.poolShutDown) }
        request.done.wait()
        switch request.result! {
        case .success(let retries): return (request, retries)
        case .failure(let failure): throw failure
        }
    }

    /// Hands `request` to the pool's thread with the scheduler's image `image` makes of its
    /// id; false once the pool is shutting down. Woken under the lock: `shutdown` sets
    /// `shuttingDown` under it before it closes the pipe, so the write never reaches a
    /// descriptor number the process has reused.
    private func queue(
        _ request: PoolRequest, ticket: RenderTicket, image: (PoolScheduler.ImageID) -> PoolScheduler.Image
    ) -> Bool {
        inbox.withLock { inbox -> Bool in
            if inbox.shuttingDown { return false }
            let id = inbox.nextImage
            inbox.nextImage += 1
            inbox.images.append((id, image(id), request))
            wake()
            return true
        }
    }

    /// Pixels in one of the pool's segments and where they lie there.
    private struct Shared {
        let segment: SharedSegment
        /// The byte of the segment where the pixels' storage starts.
        let storageOffset: Int
        let pixels: AnyPixels
        var region: SharedRegion {
            SharedRegion(
                segment: segment.id, file: segment.identity, byteOffset: storageOffset + pixels.byteOffset, rect: pixels.rect,
                channels: pixels.channels, format: pixels.format, rowStride: pixels.rowStride)
        }
    }

    /// `pixels` themselves when they lie in one of the pool's segments (``allocator``: no
    /// copy), else a copy of them in a leased segment.
    private func shared(_ pixels: AnyPixels) throws(SharedMemoryError) -> Shared {
        if let (segment, offset) = segments.segment(holding: pixels.storage) {
            return Shared(segment: segment, storageOffset: offset, pixels: pixels)
        }
        let segment = try segments.lease(byteCount: max(1, pixels.rect.area * pixels.channels * pixels.format.byteSize))
        let copy = AnyPixels(rect: pixels.rect, channels: pixels.channels, format: pixels.format, storage: segment.storage)
        copy.copy(pixels.rect, from: pixels)
        return Shared(segment: segment, storageOffset: 0, pixels: copy)
    }

    /// Pixels the workers can read without a copy: the runner decodes into these.
    public var allocator: (any PixelAllocator)? { segments }

    /// Two: the next band's tiles keep the workers busy while the last of one finish.
    public var bandsInFlight: Int { 2 }

    /// Every image of `job` (``RenderTicket/job``) still in the pool fails as cancelled: its
    /// tiles leave the queue, the workers rendering them are told to drop them and go on.
    public func cancel(job: UInt64) { send(.jobCancelled(job: job)) }

    /// The images of `job` take `priority` from now on.
    public func reprioritise(job: UInt64, priority: Int) { send(.jobReprioritised(job: job, priority: priority)) }

    /// The workers now: id, pid, state, tiles done.
    public var workers: [WorkerStatus] { snapshot.withLock { $0 } }

    private func send(_ event: PoolScheduler.Event) {
        inbox.withLock { inbox in
            guard !inbox.shuttingDown else { return }
            inbox.events.append(event)
            wake()
        }
    }

    /// Sends `shutdown` to every worker, closes their input pipes and waits for each one's end
    /// (its output pipe's end, then the process's; SIGKILL after 2 s), then ends the pool's thread. An image still being rendered fails. Idempotent.
    /// Call it when the pool is no longer needed: the pool's thread holds the pool until then.
    public func shutdown() {
        beginShutdown()
        waitForTheEnd()
    }

    /// Starts ``shutdown()`` and returns at once: the workers stop while the caller does
    /// something else (encodes the last rows); ``shutdown()`` then waits for them.
    public func beginShutdown() {
        // Under the lock, as `submit` wakes: the pipe is closed only after `shuttingDown` is set.
        inbox.withLock { inbox in
            guard !inbox.shuttingDown else { return }
            inbox.shuttingDown = true
            wake()
        }
    }

    /// Waits for the pool's thread to end, then closes the wake pipe; once.
    private func waitForTheEnd() {
        ended.withLock { ended in
            guard !ended else { return }
            finished.wait()
            Syscalls.close(wakePipe.read)
            Syscalls.close(wakePipe.write)
            ended = true
        }
    }

    func wake() { Syscalls.writeByte(wakePipe.write) }  // a full pipe already wakes the thread
}

/// A worker as the pool last saw it.
public struct WorkerStatus: Sendable, Equatable {
    public let id: UInt32
    public let pid: Int32
    /// What it is doing.
    public let state: State
    /// What a worker is doing: ``PoolScheduler/WorkerState`` without its task.
    public enum State: String, Sendable {
        case starting, idle, busy, stopping
    }
    /// The tile it renders, when busy.
    public let tile: Rect?
    public let tilesDone: Int
}

/// The outcome of starting the workers, from the pool's thread to its initializer.
final class StartSignal: Sendable {
    let semaphore = DispatchSemaphore(value: 0)
    let problem = Mutex<String?>(nil)
}

/// One image handed to the pool's thread; the caller waits on ``done``. Written by the pool's
/// thread only, before it signals ``done``, and read by the caller only after.
final class PoolRequest: @unchecked Sendable {
    /// What the image's tasks are.
    enum Work {
        /// Tiles of a chain, the pixels in shared segments.
        case tiles(Tiles)
        /// One whole-image task: the worker decodes, renders and encodes (its ids, attempt
        /// and nothing else filled in by the pool's thread when it is sent).
        case image(ImageTask)
        /// One detection task: the worker decodes the photo and runs the detector (its ids
        /// and attempt filled in as an image task's).
        case detection(DetectionTask)
    }

    /// A chain rendered tile by tile: where its pixels are.
    struct Tiles {
        let image: Rect
        let filters: [FilterSpec]
        let edge: EdgeRule
        let colour: ColourMode
        let regions: RegionMask
        let source: SharedRegion
        let output: AnyPixels
        let outputRegion: SharedRegion
        let background: SIMD3<Float>
    }

    let work: Work
    let progress: (@Sendable (Int, Int) -> Void)?
    let done = DispatchSemaphore(value: 0)
    /// The retried tiles on success.
    var result: Result<Int, RenderFailure>?
    /// A whole-image task's answer, once it came.
    var imageResult: ImageResult?
    /// A detection task's answer, once it came.
    var detectionResult: DetectionResult?
    /// When the pool's thread heard of the last tile.
    var finished = ContinuousClock.now

    init(_ work: Work, progress: (@Sendable (Int, Int) -> Void)?) {
        self.work = work
        self.progress = progress
    }

    /// The tile work, for the tasks of a tiled image.
    var tiles: Tiles? {
        if case .tiles(let tiles) = work { return tiles }
        return nil
    }

    func finish(_ result: Result<Int, RenderFailure>) {
        self.result = result
        finished = .now
        done.signal()
    }
}
