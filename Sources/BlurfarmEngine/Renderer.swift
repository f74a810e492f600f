import BlurfarmCore
import BlurfarmKernels

/// Renders a filter chain over a whole image, tile by tile: cuts the output into a
/// ``TileGrid``, renders every tile from the source with its halo, and stitches the
/// interiors into one output buffer. Each output pixel is written by exactly one tile.
public struct Renderer: Sendable {

    public let chain: FilterChain
    /// Tile side in pixels; 0 renders the image as one tile.
    public let tileSize: Int
    public let executor: any TileExecutor

    public init(chain: FilterChain, tileSize: Int, executor: any TileExecutor) {
        self.chain = chain
        self.tileSize = tileSize
        self.executor = executor
    }

    /// The tiles the output of a source covering `image` is cut into.
    public func tiles(forImage image: Rect) -> [Rect] {
        TileGrid(bounds: chain.outputRect(forImage: image), tileSize: tileSize).tiles
    }

    /// The filtered image. Its rectangle is the chain's output rectangle (the source's, or
    /// grown for the `grow` edge rule); its channels the chain's
    /// (``FilterChain/channels(forSource:)``).
    public func render(_ source: PixelBuffer) -> PixelBuffer {
        let output = PixelBuffer(
            rect: chain.outputRect(forImage: source.rect), channels: chain.channels(forSource: source.channels))
        let chain = self.chain
        executor.run(tiles: tiles(forImage: source.rect)) { tile in
            do throws(FilterFailure) {
                try chain.render(tile: tile, source: source, into: output)
            } catch {
                // Only plugins fail, and they run in worker processes (TaskRunner), which
                // answer a failure with a message; a plugin reaching this renderer is a bug.
                preconditionFailure("filter '\(error.filter)' failed in the in-process renderer: \(error.message)")
            }
        }
        return output
    }
}
