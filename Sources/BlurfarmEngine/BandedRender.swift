import BlurfarmCore
import BlurfarmKernels
import Foundation
import Synchronization

/// Renders a filter chain over an image that arrives in horizontal bands, top to bottom, and
/// hands the output on in bands as they are finished: the image is never whole in memory.
///
/// The output is cut into bands of ``bandHeight`` rows across its whole width. For each band a
/// window of the source holds the rows its tiles read (the band's rows and the chain's reach
/// above and below, folded by the edge rule: ``sourceRows(for:)``), and the tiles render from
/// it with ``FilterChain/render(tile:source:image:into:)``: the same bits as rendering the
/// whole image, whatever the band height (the kernels are tile-invariant). Decoding runs on a
/// thread of its own, at most ``depth`` windows ahead of the rendering, so memory holds about
/// `depth + 2` windows of `width × (bandHeight + 2 × reach)` pixels and one output band.
public struct BandedRender: Sendable {
    /// Renders the tiles of each band.
    public let renderer: Renderer
    /// The source image's rectangle (origin 0, 0).
    public let image: Rect
    /// Output rows per band (at least 1).
    public let bandHeight: Int
    /// Windows decoded ahead of the one being rendered (at least 1).
    public let depth: Int

    /// A banded render of `image` with `renderer`, `bandHeight` output rows a band, decoding up
    /// to `depth` windows ahead.
    public init(renderer: Renderer, image: Rect, bandHeight: Int, depth: Int = 2) {
        precondition(bandHeight >= 1 && depth >= 1, "a band has rows, and decoding runs ahead")
        precondition(image.x == 0 && image.y == 0, "an image's rectangle starts at the origin")
        self.renderer = renderer
        self.image = image
        self.bandHeight = bandHeight
        self.depth = depth
    }

    /// The output rectangle (``FilterChain/outputRect(forImage:)``).
    public var output: Rect { renderer.chain.outputRect(forImage: image) }

    /// The output bands, top to bottom, each the output's whole width.
    public var bands: [Rect] {
        stride(from: output.y, to: output.maxY, by: bandHeight).map { y in
            Rect(x: output.x, y: y, width: output.width, height: min(bandHeight, output.maxY - y))
        }
    }

    /// The source rows each band's tiles read, in band order: the rows of the union of the
    /// tiles' source regions, widened so that both ends never move up from one band to the next
    /// (the source is read once, top to bottom).
    public var sourceRows: [Range<Int>] {
        var rows = bands.map { band -> Range<Int> in
            let regions = TileGrid(bounds: band, tileSize: renderer.tileSize).tiles.map { renderer.chain.sourceRegion(for: $0, image: image) }.filter { !$0.isEmpty }
            guard let top = regions.map(\.y).min(), let bottom = regions.map(\.maxY).max() else {
                return 0..<0
            }
            return top..<bottom
        }
        // Empty ranges (a grown band beyond the image) take their place after the rows before.
        var bottom = 0
        for i in rows.indices {
            bottom = max(bottom, rows[i].upperBound)
            rows[i] = rows[i].isEmpty ? bottom..<bottom : rows[i].lowerBound..<bottom
        }
        var top = image.height
        for i in rows.indices.reversed() {
            top = min(top, rows[i].lowerBound)
            rows[i] = top..<rows[i].upperBound
        }
        return rows
    }

    /// Renders the image: `read` fills its buffer (the image's whole width, the rows after the
    /// last it filled) from the source, on a thread of its own; `write` takes each finished
    /// output band, top to bottom, on the calling thread. The first error thrown by either
    /// stops both and is rethrown; after it, `read` is not called again.
    ///
    /// - Parameter sourceChannels: the channels of the buffers `read` fills (3 or 4); the
    ///   output bands have ``FilterChain/channels(forSource:)`` channels.
    public func run(
        sourceChannels: Int, read: @escaping @Sendable (PixelBuffer) throws -> Void, write: (PixelBuffer) throws -> Void
    ) throws {
        let windows = WindowQueue(depth: depth)
        let plan = sourceRows
        let width = image.width
        let channels = renderer.chain.channels(forSource: sourceChannels)
        let floats = max(
            (plan.map(\.count).max() ?? 0) * width * sourceChannels, bandHeight * output.width * channels, 1)
        let blocks = BlockRecycler(blockBytes: floats * MemoryLayout<Float>.stride)
        let decoder = Thread {
            windows.finish(with: Result {
                var previous: PixelBuffer?
                var decoded = 0  // rows read so far
                for rows in plan {
                    let rect = Rect(x: 0, y: rows.lowerBound, width: width, height: rows.count)
                    let window = PixelBuffer(
                        rect: rect, storage: blocks.storage(byteCount: rect.area * sourceChannels * MemoryLayout<Float>.stride),
                        channels: sourceChannels)
                    // Rows read before come from the last window (both ends only move down).
                    let kept = rows.lowerBound..<min(rows.upperBound, decoded)
                    if let previous, !kept.isEmpty {
                        window.copy(Rect(x: 0, y: kept.lowerBound, width: width, height: kept.count), from: previous)
                    }
                    // Rows no window needs (none, for the built-in filters) are read and dropped.
                    if rows.lowerBound > decoded {
                        try read(PixelBuffer.uninitialized(
                            Rect(x: 0, y: decoded, width: width, height: rows.lowerBound - decoded), channels: sourceChannels))
                        decoded = rows.lowerBound
                    }
                    if rows.upperBound > decoded {
                        try read(window.view(Rect(x: 0, y: decoded, width: width, height: rows.upperBound - decoded)))
                        decoded = rows.upperBound
                    }
                    guard windows.push(window) else { return }
                    previous = window
                }
            })
        }
        decoder.stackSize = 1 << 20
        decoder.start()
        var failure: (any Error)?
        do {
            for band in bands {
                let window = try windows.pop()
                let output = PixelBuffer(
                    rect: band, storage: blocks.storage(byteCount: band.area * channels * MemoryLayout<Float>.stride),
                    channels: channels)
                renderer.render(band, from: window, image: image, into: output)
                try write(output)
            }
        } catch {
            failure = error
        }
        // The decoder has pushed its last window, or stops at its next one.
        windows.cancel()
        let decoded = windows.decoderResult()
        if let failure { throw failure }
        try decoded.get()
    }
}

extension Renderer {
    /// Renders the output pixels of `region` (inside the chain's output rectangle for `image`)
    /// tile by tile into `output` (whose rectangle holds `region`), from `source`, which holds
    /// the part of `image` that the region's tiles read (``FilterChain/sourceRegion(for:image:)``).
    /// The same bits as the same pixels of ``render(_:)`` of the whole image.
    public func render(_ region: Rect, from source: PixelBuffer, image: Rect, into output: PixelBuffer) {
        let chain = self.chain
        executor.run(tiles: TileGrid(bounds: region, tileSize: tileSize).tiles) { tile in
            do throws(FilterFailure) {
                try chain.render(tile: tile, source: source, image: image, into: output)
            } catch {
                // As in render(_:): only plugins fail, and they never run in process.
                preconditionFailure("filter '\(error.filter)' failed in the in-process renderer: \(error.message)")
            }
        }
    }
}

/// Blocks of memory of one size, handed out again once the buffer holding one is released: the
/// windows and output bands of a banded render are all about one size, and fresh memory costs
/// the kernel a page fault every 4 KiB. Holds no more blocks than were in use at once.
private final class BlockRecycler: Sendable {
    let blockBytes: Int
    /// Addresses of the blocks not in use.
    private let unused = Mutex<[UInt]>([])

    init(blockBytes: Int) { self.blockBytes = blockBytes }

    deinit {
        unused.withLock { blocks in
            for address in blocks { UnsafeMutableRawPointer(bitPattern: address)!.deallocate() }
        }
    }

    /// Storage of `byteCount` bytes (at most ``blockBytes``), uninitialised; its block comes
    /// back here when the storage goes (the storage keeps the recycler alive).
    func storage(byteCount: Int) -> PixelStorage {
        precondition(byteCount <= blockBytes, "a block holds \(blockBytes) bytes")
        let block =
            unused.withLock { $0.popLast() }.flatMap { UnsafeMutableRawPointer(bitPattern: $0) }
            ?? UnsafeMutableRawPointer.allocate(byteCount: blockBytes, alignment: 64)
        return PixelStorage(adopting: block, byteCount: byteCount) { [self] pointer, _ in
            unused.withLock { $0.append(UInt(bitPattern: pointer)) }
        }
    }
}

/// The windows decoded and not yet rendered, at most `depth`, and how the decoder ended.
private final class WindowQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private let depth: Int
    private var windows: [PixelBuffer] = []
    private var cancelled = false
    private var ended: Result<Void, any Error>?

    init(depth: Int) { self.depth = depth }

    /// Adds a window, waiting while `depth` are waiting; false when the render was cancelled.
    func push(_ window: PixelBuffer) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while windows.count >= depth && !cancelled { condition.wait() }
        guard !cancelled else { return false }
        windows.append(window)
        condition.broadcast()
        return true
    }

    /// The next window, waiting for it; throws the decoder's error when it failed first.
    func pop() throws -> PixelBuffer {
        condition.lock()
        defer { condition.unlock() }
        while windows.isEmpty && ended == nil { condition.wait() }
        if windows.isEmpty {
            try ended!.get()
            preconditionFailure("the decoder ended before the last window")
        }
        let window = windows.removeFirst()
        condition.broadcast()
        return window
    }

    /// The decoder is done (its last window pushed) or failed.
    func finish(with result: Result<Void, any Error>) {
        condition.lock()
        ended = result
        condition.broadcast()
        condition.unlock()
    }

    /// No more windows are wanted: the decoder stops at its next push.
    func cancel() {
        condition.lock()
        cancelled = true
        windows.removeAll()
        condition.broadcast()
        condition.unlock()
    }

    /// How the decoder ended, waiting for it.
    func decoderResult() -> Result<Void, any Error> {
        condition.lock()
        defer { condition.unlock() }
        while ended == nil { condition.wait() }
        return ended!
    }
}
