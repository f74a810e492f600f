import BlurfarmCore
import BlurfarmKernels
import BlurfarmSystem
import Foundation
import Synchronization

/// Renders filter chains over an image that arrives in horizontal bands, top to bottom, and
/// hands each chain's output on in bands as they are finished: the image is never whole in
/// memory, and the chains (the variants of one input) share one decode.
///
/// Each chain's output is cut into bands of ``bandHeight`` rows across its whole width. For
/// each band number a window of the source holds the rows that the tiles of every chain's band
/// of that number read (the band's rows and the chain's reach above and below, folded by the
/// edge rule: ``sourceRows``), and the tiles render from it with
/// ``FilterChain/render(tile:source:image:into:)``: the same bits as rendering the whole image,
/// whatever the band height (the kernels are tile-invariant). Decoding runs on a thread of its
/// own, at most ``depth`` windows ahead of the rendering; up to `bandsInFlight` bands render at
/// once (the rendering queues a band and returns: ``BandRendering``), so memory holds about `depth + bandsInFlight + 1` windows of
/// `width × (bandHeight + 2 × reach)` pixels and `bandsInFlight` output bands of each chain.
public struct BandedRender: Sendable {
    /// The chains, one per output.
    public let chains: [FilterChain]
    /// The side of the tiles a band is cut into (0: one tile across the band).
    public let tileSize: Int
    /// The source image's rectangle (origin 0, 0).
    public let image: Rect
    /// Output rows per band (at least 1).
    public let bandHeight: Int
    /// Windows decoded ahead of the ones being rendered (at least 1).
    public let depth: Int

    /// A banded render of `image` through each of `chains` in tiles of `tileSize`,
    /// `bandHeight` output rows a band, decoding up to `depth` windows ahead.
    public init(chains: [FilterChain], tileSize: Int, image: Rect, bandHeight: Int, depth: Int = 2) {
        precondition(!chains.isEmpty, "a banded render has a chain")
        precondition(bandHeight >= 1 && depth >= 1, "a band has rows, and decoding runs ahead")
        precondition(image.x == 0 && image.y == 0, "an image's rectangle starts at the origin")
        self.chains = chains
        self.tileSize = tileSize
        self.image = image
        self.bandHeight = bandHeight
        self.depth = depth
    }

    /// Each chain's output rectangle (``FilterChain/outputRect(forImage:)``).
    public var outputs: [Rect] { chains.map { $0.outputRect(forImage: image) } }

    /// The bands of chain `chain`'s output, top to bottom, each the output's whole width.
    public func bands(ofChain chain: Int) -> [Rect] {
        let output = chains[chain].outputRect(forImage: image)
        return stride(from: output.y, to: output.maxY, by: bandHeight).map { y in
            Rect(x: output.x, y: y, width: output.width, height: min(bandHeight, output.maxY - y))
        }
    }

    /// The tiles a band is cut into.
    public func tiles(of band: Rect) -> [Rect] { TileGrid(bounds: band, tileSize: tileSize).tiles }

    /// The source rows each band number's tiles read, in band order: the rows of the union of
    /// the source regions of the tiles of every chain's band of that number, widened so that
    /// both ends never move up from one band to the next (the source is read once, top to
    /// bottom).
    public var sourceRows: [Range<Int>] {
        let bandsOfChains = chains.indices.map { bands(ofChain: $0) }
        let count = bandsOfChains.map(\.count).max() ?? 0
        var rows = (0..<count).map { number -> Range<Int> in
            var top = Int.max, bottom = Int.min
            for (chain, bands) in zip(chains, bandsOfChains) where number < bands.count {
                for tile in tiles(of: bands[number]) {
                    let region = chain.sourceRegion(for: tile, image: image)
                    guard !region.isEmpty else { continue }
                    top = min(top, region.y)
                    bottom = max(bottom, region.maxY)
                }
            }
            return top < bottom ? top..<bottom : 0..<0
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

    /// The windows and output bands a render holds at once, at most: the windows decoded ahead,
    /// rendering, being filled and kept for their rows, and each chain's output bands rendering
    /// and being written; one to spare. Each is as large as the larger of a window and an output
    /// band (what admission estimates: `DecodeMemory.Streaming.buffers`).
    public static func blocks(depth: Int, bandsInFlight: Int, chains: Int) -> Int {
        depth + bandsInFlight + 3 + chains * (bandsInFlight + 1)
    }

    /// Starts rendering the tiles of one band of one chain: (the chain's index, the band, the
    /// window of the source that holds what its tiles read, the output band to fill); returns
    /// what waits until they are rendered (and throws their failure). Called on the thread of
    /// ``run(sourceChannels:allocator:bandsInFlight:read:render:write:)``, up to
    /// `bandsInFlight` bands before their waits.
    public typealias BandRendering =
        @Sendable (_ chain: Int, _ band: Rect, _ window: AnyPixels, _ output: AnyPixels) throws -> () throws -> Void

    /// Rendering in this process by ``Renderer``s with `executor`, done before it returns;
    /// output bands of a file's samples are composited over `backgrounds[chain]` (black when
    /// not given).
    public func rendering(with executor: any TileExecutor, backgrounds: [SIMD3<Float>] = []) -> BandRendering {
        let (chains, tileSize, image) = (chains, tileSize, image)
        let scratch = ScratchStorage()
        return { chain, band, window, output in
            Renderer(chain: chains[chain], tileSize: tileSize, executor: executor).render(
                band, from: window, image: image, into: output,
                background: chain < backgrounds.count ? backgrounds[chain] : .zero, scratch: scratch)
            return {}
        }
    }


    /// Renders the image: `read` fills its buffer (the image's whole width, the rows after the
    /// last it filled) from the source, on a thread of its own (`decodeAhead`); `render` renders each band of
    /// each chain (``BandRendering``); `write` takes each chain's finished output bands, top to
    /// bottom, on the calling thread. The first error thrown by any of them stops them all and
    /// is rethrown, once no band is being rendered; after it, `read` is not called again.
    ///
    /// - Parameters:
    ///   - source: the format and channels (3 or 4) of the windows `read` fills: a file's
    ///     samples, or `Float32`.
    ///   - outputs: each chain's output bands' format and channels; nil: `Float32` with
    ///     `chains[i].channels(forSource:)` channels.
    ///   - allocator: where the windows and output bands are made (the worker pool's shared
    ///     memory), blocks of one size reused from band to band; nil: this process's memory.
    ///   - bandsInFlight: bands rendered at once (at least 1): while the last tiles of one band
    ///     finish, the next band's keep the workers busy.
    ///   - decodeAhead: whether `read` runs on a thread of its own, ahead of the rendering
    ///     (when the rendering is other threads' or processes'); false: on the calling thread,
    ///     a window before each band's rendering (a worker, one core's worth, gains nothing
    ///     from a second thread).
    public func run(
        source: SampleLayout, outputs layouts: [SampleLayout]? = nil, allocator: (any PixelAllocator)? = nil, bandsInFlight: Int = 1,
        decodeAhead: Bool = true,
        read: @escaping @Sendable (AnyPixels) throws -> Void, render: @escaping BandRendering,
        write: (_ chain: Int, _ band: AnyPixels) throws -> Void
    ) throws {
        precondition(bandsInFlight >= 1, "a band renders at a time")
        let layouts = layouts ?? chains.map { SampleLayout(format: .float32, channels: $0.channels(forSource: source.channels)) }
        precondition(layouts.count == chains.count, "a layout for each chain's output")
        let windows = WindowQueue(depth: depth)
        let plan = sourceRows
        let width = image.width
        let bandsOfChains = chains.indices.map { bands(ofChain: $0) }
        let bytes = max(
            (plan.map(\.count).max() ?? 0) * width * source.channels * source.format.byteSize,
            zip(outputs, layouts).map { bandHeight * $0.width * $1.channels * $1.format.byteSize }.max() ?? 0, 1)
        let blocks = BlockRecycler(
            blockBytes: bytes, allocator: allocator,
            slabBlocks: Self.blocks(depth: depth, bandsInFlight: bandsInFlight, chains: chains.count))
        let decoder = WindowDecoder(plan: plan, width: width, layout: source, blocks: blocks, read: read)
        // Decoding on a thread of its own, ahead of the rendering (when asked); else, or where
        // the system refuses a thread, on this one, a window at a time.
        var decodesAhead = false
        if decodeAhead {
            do throws(Threads.StartFailure) {
                try Threads.start {
                    windows.finish(with: Result {
                        for _ in plan.indices {
                            guard windows.push(try decoder.next()) else { return }
                        }
                    })
                }
                decodesAhead = true
            } catch {}
        }
        // The bands being rendered, oldest first: each chain's output band and its wait.
        var rendering: [[(chain: Int, output: AnyPixels, wait: () throws -> Void)]] = []
        var failure: (any Error)?
        do {
            for number in plan.indices {
                let window = decodesAhead ? try windows.pop() : try decoder.next()
                rendering.append([])
                for chain in chains.indices where number < bandsOfChains[chain].count {
                    let band = bandsOfChains[chain][number]
                    let output = AnyPixels(
                        rect: band, channels: layouts[chain].channels, format: layouts[chain].format, storage: blocks.storage())
                    rendering[rendering.count - 1].append((chain, output, try render(chain, band, window, output)))
                }
                while rendering.count >= bandsInFlight {
                    for (chain, output, wait) in rendering.removeFirst() {
                        try wait()
                        try write(chain, output)
                    }
                }
            }
            while !rendering.isEmpty {
                for (chain, output, wait) in rendering.removeFirst() {
                    try wait()
                    try write(chain, output)
                }
            }
        } catch {
            failure = error
        }
        // No band is left rendering into memory about to be reused or released.
        for bands in rendering { for (_, _, wait) in bands { try? wait() } }
        if !decodesAhead {
            if let failure { throw failure }
            return
        }
        // The decoder has pushed its last window, or stops at its next one.
        windows.cancel()
        let decoded = windows.decoderResult()
        if let failure { throw failure }
        try decoded.get()
    }
}

extension BandedRender {
    /// The banded render of one chain, as `renderer` renders it (its chain and tile size).
    public init(renderer: Renderer, image: Rect, bandHeight: Int, depth: Int = 2) {
        self.init(chains: [renderer.chain], tileSize: renderer.tileSize, image: image, bandHeight: bandHeight, depth: depth)
    }

    /// The output rectangle of a render of one chain.
    public var output: Rect { outputs[0] }

    /// The output bands of a render of one chain.
    public var bands: [Rect] { bands(ofChain: 0) }
}

extension Renderer {
    /// Renders the output pixels of `region` (inside the chain's output rectangle for `image`)
    /// tile by tile into `output` (whose rectangle holds `region`), from `source`, which holds
    /// the part of `image` that the region's tiles read (``FilterChain/sourceRegion(for:image:)``).
    /// The same bits as the same pixels of ``render(_:)`` of the whole image. Pixels at a file's
    /// depth are converted a tile at a time (``FilterChain/render(tile:from:image:into:background:scratch:)``),
    /// in memory from `scratch`, reused from tile to tile.
    public func render(
        _ region: Rect, from source: AnyPixels, image: Rect, into output: AnyPixels, background: SIMD3<Float> = .zero,
        scratch: ScratchStorage = ScratchStorage()
    ) {
        let chain = self.chain
        executor.run(tiles: TileGrid(bounds: region, tileSize: tileSize).tiles) { tile in
            do throws(FilterFailure) {
                try chain.render(
                    tile: tile, from: source, image: image, into: output, background: background, scratch: scratch)
            } catch {
                // As in render(_:): only plugins fail, and they never run in process.
                preconditionFailure("filter '\(error.filter)' failed in the in-process renderer: \(error.message)")
            }
        }
    }
}

/// The windows of a banded render, decoded one after the other, top to bottom: each holds its
/// rows of the plan, those it shares with the window before copied from it, the rest read.
/// Used by one thread at a time.
private final class WindowDecoder: @unchecked Sendable {
    private let plan: [Range<Int>]
    private let width: Int
    private let layout: SampleLayout
    private let blocks: BlockRecycler
    private let read: @Sendable (AnyPixels) throws -> Void
    private var number = 0
    private var previous: AnyPixels?
    /// Rows read so far.
    private var decoded = 0

    init(
        plan: [Range<Int>], width: Int, layout: SampleLayout, blocks: BlockRecycler,
        read: @escaping @Sendable (AnyPixels) throws -> Void
    ) {
        self.plan = plan
        self.width = width
        self.layout = layout
        self.blocks = blocks
        self.read = read
    }

    /// The next window.
    func next() throws -> AnyPixels {
        let rows = plan[number]
        number += 1
        let window = AnyPixels(
            rect: Rect(x: 0, y: rows.lowerBound, width: width, height: rows.count), channels: layout.channels,
            format: layout.format, storage: blocks.storage())
        // Rows read before come from the last window (both ends only move down).
        // (None when the first window starts below the image's top: a plan whose output
        // starts lower, as a region's box would.)
        let kept = rows.lowerBound..<max(rows.lowerBound, min(rows.upperBound, decoded))
        if let previous, !kept.isEmpty {
            window.copy(Rect(x: 0, y: kept.lowerBound, width: width, height: kept.count), from: previous)
        }
        // Rows no window needs (none, for the built-in filters) are read and dropped.
        if rows.lowerBound > decoded {
            try read(AnyPixels.uninitialized(
                Rect(x: 0, y: decoded, width: width, height: rows.lowerBound - decoded), channels: layout.channels,
                format: layout.format))
            decoded = rows.lowerBound
        }
        if rows.upperBound > decoded {
            try read(window.view(Rect(x: 0, y: decoded, width: width, height: rows.upperBound - decoded)))
            decoded = rows.upperBound
        }
        previous = window
        return window
    }
}

/// Blocks of memory of one size, handed out again once the buffer holding one is released: the
/// windows and output bands of a banded render are all about one size, and fresh memory costs
/// the kernel a page fault every 4 KiB. Holds no more blocks than were in use at once. With an
/// allocator (the worker pool's shared memory), the blocks are slices of one slab of
/// `slabBlocks` blocks it gives, taken at the first block: one shared segment (one file
/// descriptor) per image, whatever the number of bands; past `slabBlocks` blocks in use at
/// once, or without a slab, the blocks are this process's memory.
private final class BlockRecycler: Sendable {
    let blockBytes: Int
    private let allocator: (any PixelAllocator)?
    private let slabBlocks: Int
    private struct Blocks {
        /// Addresses of the blocks of this process's memory not in use.
        var unused: [UInt] = []
        /// The slab, once asked for (nil inside: the allocator had none).
        var slab: PixelStorage??
        /// The slab's blocks not in use.
        var unusedSlices: [Int] = []
    }
    private let blocks = Mutex(Blocks())

    init(blockBytes: Int, allocator: (any PixelAllocator)?, slabBlocks: Int) {
        self.blockBytes = (blockBytes + 63) / 64 * 64
        self.allocator = allocator
        self.slabBlocks = slabBlocks
    }

    deinit {
        blocks.withLock { blocks in
            for address in blocks.unused { UnsafeMutableRawPointer(bitPattern: address)!.deallocate() }
        }
    }

    /// A block's storage, uninitialised; it comes back here when the storage goes (the storage
    /// keeps the recycler alive).
    func storage() -> PixelStorage {
        let (slab, slice, address) = blocks.withLock { blocks -> (PixelStorage?, Int?, UInt?) in
            if let allocator {
                if blocks.slab == nil {
                    blocks.slab = .some(allocator.storage(byteCount: blockBytes * slabBlocks))
                    blocks.unusedSlices = Array((0..<slabBlocks).reversed())
                }
                if let slab = blocks.slab!, let slice = blocks.unusedSlices.popLast() { return (slab, slice, nil) }
            }
            return (nil, nil, blocks.unused.popLast())
        }
        if let slab, let slice {
            return PixelStorage(slicing: slab, byteOffset: slice * blockBytes, byteCount: blockBytes) { [self] in
                blocks.withLock { $0.unusedSlices.append(slice) }
            }
        }
        let block =
            address.flatMap { UnsafeMutableRawPointer(bitPattern: $0) }
            ?? UnsafeMutableRawPointer.allocate(byteCount: blockBytes, alignment: 64)
        return PixelStorage(adopting: block, byteCount: blockBytes) { [self] pointer, _ in
            blocks.withLock { $0.unused.append(UInt(bitPattern: pointer)) }
        }
    }
}

/// The windows decoded and not yet rendered, at most `depth`, and how the decoder ended.
private final class WindowQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private let depth: Int
    private var windows: [AnyPixels] = []
    private var cancelled = false
    private var ended: Result<Void, any Error>?

    init(depth: Int) { self.depth = depth }

    /// Adds a window, waiting while `depth` are waiting; false when the render was cancelled.
    func push(_ window: AnyPixels) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while windows.count >= depth && !cancelled { condition.wait() }
        guard !cancelled else { return false }
        windows.append(window)
        condition.broadcast()
        return true
    }

    /// The next window, waiting for it; throws the decoder's error when it failed first.
    func pop() throws -> AnyPixels {
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
