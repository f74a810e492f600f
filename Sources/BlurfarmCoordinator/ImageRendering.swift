import BlurfarmCore
import BlurfarmEngine
import BlurfarmKernels

/// Why an image could not be rendered (by the worker pool: a filter's error, a tile that
/// failed too often, workers that cannot start). The message is one line for the report.
public struct RenderFailure: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public let description: String
    /// Tile attempts that had failed and were retried before the image failed.
    public let retries: Int

    /// A failure saying `description`, after `retries` retried tiles.
    public init(_ description: String, retries: Int = 0) {
        self.description = description
        self.retries = retries
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
    func render(_ source: PixelBuffer, chain: FilterChain, tileSize: Int) throws(RenderFailure) -> RenderedImage

    /// Where the runner decodes images to, so that ``render(_:chain:tileSize:)`` finds them
    /// where it needs them (the worker pool: in memory its workers share); nil for memory of
    /// the process.
    var allocator: (any PixelAllocator)? { get }
}

/// Renders in this process with the engine's ``Renderer`` and a ``TileExecutor`` (the threads
/// `--threads` chooses). It cannot fail.
public struct InProcessRendering: ImageRendering {
    /// Runs the tiles.
    public let executor: any TileExecutor

    /// Rendering with `executor`.
    public init(executor: any TileExecutor) { self.executor = executor }

    /// Decoded images stay in this process's own memory.
    public var allocator: (any PixelAllocator)? { nil }

    /// The ``Renderer``'s output for `source`.
    public func render(_ source: PixelBuffer, chain: FilterChain, tileSize: Int) throws(RenderFailure) -> RenderedImage {
        RenderedImage(pixels: Renderer(chain: chain, tileSize: tileSize, executor: executor).render(source))
    }
}
