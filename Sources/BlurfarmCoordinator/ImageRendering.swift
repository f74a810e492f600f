import BlurfarmCore
import BlurfarmEngine
import BlurfarmKernels

/// Why an image could not be rendered (by the worker pool: a filter's error, a tile that
/// failed too often, workers that cannot start). The message is one line for the report.
public struct RenderFailure: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public let description: String

    /// A failure saying `description`.
    public init(_ description: String) { self.description = description }
}

/// How ``JobRunner`` renders a filter chain over one decoded image: in this process
/// (``InProcessRendering``) or in worker processes (``WorkerPool``). Either way the output is
/// the chain's output rectangle with the chain's channels, bit-identical whatever renders it.
public protocol ImageRendering: Sendable {
    /// The filtered image: `chain.outputRect(forImage: source.rect)` with
    /// `chain.channels(forSource: source.channels)` channels, rendered in tiles of `tileSize`
    /// pixels (0: one tile).
    func render(_ source: PixelBuffer, chain: FilterChain, tileSize: Int) throws(RenderFailure) -> PixelBuffer
}

/// Renders in this process with the engine's ``Renderer`` and a ``TileExecutor`` (the threads
/// `--threads` chooses). It cannot fail.
public struct InProcessRendering: ImageRendering {
    /// Runs the tiles.
    public let executor: any TileExecutor

    /// Rendering with `executor`.
    public init(executor: any TileExecutor) { self.executor = executor }

    /// The ``Renderer``'s output for `source`.
    public func render(_ source: PixelBuffer, chain: FilterChain, tileSize: Int) throws(RenderFailure) -> PixelBuffer {
        Renderer(chain: chain, tileSize: tileSize, executor: executor).render(source)
    }
}
