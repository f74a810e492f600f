import BlurfarmCore
import BlurfarmKernels

/// Why an image could not be rendered: a typed reason (kept whole up to the report's
/// `error.kind`) and a one-line message.
public struct RenderFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Reason: Sendable, Equatable {
        /// A filter (built-in or plugin) refused the tile: the worker's message.
        case filter(tile: Rect, worker: UInt32, message: String)
        /// A tile failed every attempt (workers died, hung, sent bad checksums); `plugins` are
        /// the chain's, the likeliest cause.
        case tileFailed(tile: Rect, attempts: UInt32, plugins: [String], last: String)
        /// A whole-image task (decoded, filtered and encoded in one worker) failed every attempt.
        case imageFailed(attempts: UInt32, last: String)
        /// A detection task (a photo decoded and searched in one worker) failed every attempt.
        case searchFailed(attempts: UInt32, last: String)
        /// Its job was cancelled.
        case cancelled
        /// The pool was shut down (the run stopped).
        case poolShutDown
        /// No worker could run: why.
        case workersUnavailable(String)
        /// The pixels could not be shared with the workers: why.
        case sharedMemory(String)
    }

    public let reason: Reason
    /// Tile attempts that had failed and were retried before the image failed.
    public let retries: Int

    /// A failure for `reason`, after `retries` retried tiles.
    public init(_ reason: Reason, retries: Int = 0) {
        self.reason = reason
        self.retries = retries
    }

    /// The message for the report: one line.
    public var description: String {
        switch reason {
        case .filter(let tile, let worker, let message): "tile \(tile): worker \(worker): \(message)"
        case .tileFailed(let tile, let attempts, let plugins, let last):
            "tile \(tile) failed \(attempts) times"
                + (plugins.isEmpty ? "" : " (the chain runs \(plugins.map { "plugin '\($0)'" }.joined(separator: ", ")))")
                + "; the last time: \(last)"
        case .imageFailed(let attempts, let last):
            "decoding, filtering and encoding it in a worker failed \(attempts) times; the last time: \(last)"
        case .searchFailed(let attempts, let last):
            "searching it in a worker failed \(attempts) times; the last time: \(last)"
        case .cancelled: "cancelled"
        case .poolShutDown: "the worker pool was shut down"
        case .workersUnavailable(let problem): problem
        case .sharedMemory(let problem): "cannot share the pixels with the workers: \(problem)"
        }
    }
}

/// A rendered image and what it took.
public struct RenderedImage: Sendable {
    /// The chain's output.
    public let pixels: PixelBuffer
    /// Tile attempts that failed and were retried.
    public let retries: Int

    /// `pixels`, rendered with `retries` retried tiles.
    public init(pixels: PixelBuffer, retries: Int = 0) {
        self.pixels = pixels
        self.retries = retries
    }
}

/// How ``JobRunner`` renders a filter chain over one decoded image: in this process
/// (``InProcessRendering``) or in worker processes (``WorkerPool``). Either way the output is
/// the chain's output rectangle with the chain's channels, bit-identical whatever renders it.
/// The runner calls it from several threads at once (one per image in flight).
public protocol ImageRendering: Sendable {
    /// The filtered image: `chain.outputRect(forImage: source.rect)` with
    /// `chain.channels(forSource: source.channels)` channels, rendered in tiles of `tileSize`
    /// pixels (0: one tile).
    func render(
        _ source: PixelBuffer, chain: FilterChain, tileSize: Int, ticket: RenderTicket
    ) throws(RenderFailure) -> RenderedImage

    /// Starts rendering the output pixels of `region` (inside the chain's output rectangle for
    /// `image`) into `output` (whose rectangle holds `region`), from `source`, which holds the
    /// part of `image` that the region's tiles read: one band of a streamed image, at the
    /// file's depth or in `Float32`. The same bits as the same pixels of the whole image's
    /// render (stored as the encoder stores them, over `background`, when `output` holds a
    /// file's samples: ``AnyPixels/store(_:in:background:)``), once ``RenderInFlight/wait()``
    /// returns (the tiles retried). Several may be in flight at once.
    func submit(
        _ region: Rect, from source: AnyPixels, image: Rect, into output: AnyPixels, chain: FilterChain,
        tileSize: Int, ticket: RenderTicket, background: SIMD3<Float>
    ) -> RenderInFlight

    /// Where the runner decodes images to, so that ``render(_:chain:tileSize:)`` finds them
    /// where it needs them (the worker pool: in memory its workers share); nil for memory of
    /// the process.
    var allocator: (any PixelAllocator)? { get }

    /// The bands of a streamed image rendered at once: more than one when the tiles of the
    /// next band should keep the renderers busy while the last tiles of one finish.
    var bandsInFlight: Int { get }

    /// The processes that make whole images (``renderImage(_:image:pixelsRead:ticket:)``), and the tasks
    /// each holds at once: a worker pool's workers; nil for a rendering that makes none (this
    /// process's threads, which render tiles only).
    var wholeImageWorkers: (workers: Int, tasksHeld: Int)? { get }

    /// Makes `task` in one of ``wholeImageWorkers`` (its ids and attempt are the rendering's
    /// to fill in): the input decoded, each output's chain rendered and encoded there; the
    /// answer and the attempts retried. `image` is the input's size (from its header), and
    /// `pixelsRead` the pixels the task's decode, filters and encodes read, which size its
    /// timeout; `ticket` places it (one "tile": the image) and hears when it is done. Asked only
    /// of a rendering with ``wholeImageWorkers``.
    ///
    /// - Throws: ``RenderFailure``: the task failed every attempt, its job was cancelled, the
    ///   rendering was shut down.
    func renderImage(_ task: ImageTask, image: Rect, pixelsRead: Int, ticket: RenderTicket) throws(RenderFailure)
        -> (ImageResult, retries: Int)

    /// Searches a photo as `task` says in one of ``wholeImageWorkers`` (its ids and attempt
    /// are the rendering's to fill in): the photo decoded there, the detector's network run
    /// there on its passes; the answer and the attempts retried. `image` (the photo's size, from
    /// its header) sizes the task's timeout; `ticket` places it and hears when it is done.
    /// Asked only of a rendering with ``wholeImageWorkers``.
    ///
    /// - Throws: ``RenderFailure``, as ``renderImage(_:image:pixelsRead:ticket:)``.
    func detect(_ task: DetectionTask, image: Rect, ticket: RenderTicket) throws(RenderFailure) -> (DetectionResult, retries: Int)
}

/// Renders in this process with the engine's ``Renderer`` and a ``TileExecutor`` (the threads
/// `--threads` chooses). It cannot fail.
public struct InProcessRendering: ImageRendering {
    /// Runs the tiles.
    public let executor: any TileExecutor
    /// The memory of the tiles' conversions, reused from band to band.
    private let scratch = ScratchStorage()

    /// Rendering with `executor`.
    public init(executor: any TileExecutor) { self.executor = executor }

    /// Decoded images stay in this process's own memory.
    public var allocator: (any PixelAllocator)? { nil }

    /// The ``Renderer``'s output for `source`; the ticket hears of all the tiles at the end
    /// (the in-process engine cannot be cancelled half way through an image).
    public func render(
        _ source: PixelBuffer, chain: FilterChain, tileSize: Int, ticket: RenderTicket
    ) throws(RenderFailure) -> RenderedImage {
        let pixels = Renderer(chain: chain, tileSize: tileSize, executor: executor).render(source)
        let tiles = TileGrid(bounds: pixels.rect, tileSize: tileSize).tiles.count
        ticket.progress?(tiles, tiles)
        return RenderedImage(pixels: pixels)
    }

    /// The ``Renderer``'s output for `region`, rendered before this returns; the ticket hears
    /// of its tiles at the end.
    public func submit(
        _ region: Rect, from source: AnyPixels, image: Rect, into output: AnyPixels, chain: FilterChain,
        tileSize: Int, ticket: RenderTicket, background: SIMD3<Float>
    ) -> RenderInFlight {
        Renderer(chain: chain, tileSize: tileSize, executor: executor).render(
            region, from: source, image: image, into: output, background: background, scratch: scratch)
        let tiles = TileGrid(bounds: region, tileSize: tileSize).tiles.count
        ticket.progress?(tiles, tiles)
        return RenderInFlight(.success(0))
    }

    /// One: the executor's threads share each band's tiles.
    public var bandsInFlight: Int { 1 }

    /// None: this process's threads render tiles, and the runner decodes and encodes here.
    public var wholeImageWorkers: (workers: Int, tasksHeld: Int)? { nil }

    /// Never asked (``wholeImageWorkers`` is nil).
    public func renderImage(_ task: ImageTask, image: Rect, pixelsRead: Int, ticket: RenderTicket) throws(RenderFailure)
        -> (ImageResult, retries: Int)
    {
        preconditionFailure("whole images are made by worker processes, and this rendering has none")
    }

    /// Never asked (``wholeImageWorkers`` is nil): the coordinator searches here itself.
    public func detect(_ task: DetectionTask, image: Rect, ticket: RenderTicket) throws(RenderFailure) -> (DetectionResult, retries: Int) {
        preconditionFailure("photos are searched in worker processes, and this rendering has none")
    }
}

/// A region being rendered (``ImageRendering/submit(_:from:image:into:chain:tileSize:ticket:)``):
/// ``wait()`` for its outcome.
public final class RenderInFlight: Sendable {
    /// How a render that succeeded ended.
    public struct Done: Sendable {
        /// The tiles retried.
        public let retries: Int
        /// When its last tile was rendered: earlier than the wait's return when the caller came
        /// to wait late (the time a band was rendering ends here, not when someone looked).
        public let at: ContinuousClock.Instant

        public init(retries: Int, at: ContinuousClock.Instant) {
            self.retries = retries
            self.at = at
        }
    }

    private let outcome: @Sendable () throws(RenderFailure) -> Done

    /// A render that ends when `wait` returns: how it ended, or why it failed.
    public init(_ wait: @escaping @Sendable () throws(RenderFailure) -> Done) { outcome = wait }

    /// A render already done, with `result`, the tiles retried, now.
    public init(_ result: Result<Int, RenderFailure>) {
        let done = result.map { Done(retries: $0, at: .now) }
        outcome = { () throws(RenderFailure) -> Done in try done.get() }
    }

    /// Waits until every tile is rendered and returns how the render ended; may be called again.
    ///
    /// - Throws: ``RenderFailure`` as ``WorkerPool/render(_:chain:tileSize:ticket:)``.
    public func wait() throws(RenderFailure) -> Done { try outcome() }
}

extension ImageRendering {
    /// A whole decoded image rendered as ``render(_:chain:tileSize:ticket:)`` renders its
    /// pixels, except that a chain with a ``FilterChain/fixedPointFilter(forSourceChannels:)``,
    /// from an 8-bit file (`sourceBitDepth`) to 8-bit samples in the output (`outputBitDepth`,
    /// nil for the encoder's choice, which is 8 for an 8-bit source), renders the samples (the
    /// decoded pixels hold them exactly, each sample over 255) in fixed point, as when
    /// the image streams, and returns them over 255 again: the encoder then writes the same
    /// bytes as the streamed path, whichever path an output takes (`verify: decode` and
    /// `untiled`, EXIF rotation, resize, standard input, a whole image in one worker).
    ///
    /// - Throws: ``RenderFailure`` as ``render(_:chain:tileSize:ticket:)``.
    public func render(
        _ source: PixelBuffer, sourceBitDepth: Int, outputBitDepth: Int?, chain: FilterChain, tileSize: Int,
        ticket: RenderTicket
    ) throws(RenderFailure) -> RenderedImage {
        let outputRect = chain.outputRect(forImage: source.rect)
        guard sourceBitDepth == 8, (outputBitDepth ?? 8) == 8, !outputRect.isEmpty,
            chain.fixedPointFilter(forSourceChannels: source.channels) != nil
        else { return try render(source, chain: chain, tileSize: tileSize, ticket: ticket) }
        let samples = AnyPixels.uninitialized(
            source.rect, SampleLayout(format: .uint8, channels: source.channels), allocator: allocator)
        samples.store(source, in: source.rect, background: .zero)
        let output = AnyPixels.uninitialized(
            outputRect, SampleLayout(format: .uint8, channels: chain.channels(forSource: source.channels)),
            allocator: allocator)
        let retries = try submit(
            outputRect, from: samples, image: source.rect, into: output, chain: chain, tileSize: tileSize,
            ticket: ticket, background: .zero
        ).wait().retries
        return RenderedImage(pixels: output.floats(in: outputRect), retries: retries)
    }

    /// `source` rendered with no ticket: job 0, priority 0, no progress.
    public func render(_ source: PixelBuffer, chain: FilterChain, tileSize: Int) throws(RenderFailure) -> RenderedImage {
        try render(source, chain: chain, tileSize: tileSize, ticket: RenderTicket())
    }
}

/// Where an image goes in the pool's queue, and who hears of its tiles.
public struct RenderTicket: Sendable {
    /// The job it belongs to: cancelled and reprioritised together.
    public var job: UInt64
    /// Higher goes first; then the job's arrival.
    public var priority: Int
    /// Called with (tiles done, tiles in all) as tiles are done, from the pool's thread.
    public var progress: (@Sendable (Int, Int) -> Void)?

    public init(job: UInt64 = 0, priority: Int = 0, progress: (@Sendable (Int, Int) -> Void)? = nil) {
        self.job = job
        self.priority = priority
        self.progress = progress
    }
}
