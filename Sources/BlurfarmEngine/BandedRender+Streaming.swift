import BlurfarmCore
import BlurfarmImageIO
import BlurfarmKernels

/// How tall a streamed image's bands are and what streaming it holds: one answer for every
/// place that streams an image (the coordinator, a worker's whole-image task, `apply`).
extension BandedRender {
    /// The band height for `chains` over an image covering `image` in tiles of `tileSize`:
    /// ``RenderSchedule/bandRows(forTile:reach:encoderWaits:)`` at the farthest any of them
    /// reaches up or down, for writers some of which wait for their encoder's thread
    /// (``BandWriter/waitsForEncoder``) or none. Without `encoderWaits`: the tallest a band may
    /// be, what admission counts.
    public static func bandHeight(forTile tileSize: Int, chains: [FilterChain], image: Rect, encoderWaits: Bool = false) -> Int {
        RenderSchedule.bandRows(forTile: tileSize, reach: haloRows(chains, image: image), encoderWaits: encoderWaits)
    }

    /// The farthest any of `chains` reaches up or down in an image covering `image`.
    static func haloRows(_ chains: [FilterChain], image: Rect) -> Int {
        chains.compactMap { $0.reach(in: image)?.y }.max() ?? 0
    }

    /// What streaming an image covering `image` through `chains` (one per output) in tiles of
    /// `tileSize` holds, for admission (``DecodeMemory/streamed(_:_:)``): the windows and
    /// output bands of ``BandedRender`` at the file's depth, `bandsInFlight` bands rendering at
    /// once (the worker pool's two; one in a process of its own). Nil when a chain does not
    /// stream at that size (``FilterChain/streams(in:)``): the image is decoded whole.
    public static func streaming(_ chains: [FilterChain], tileSize: Int, image: Rect, bandsInFlight: Int = 2)
        -> DecodeMemory.Streaming?
    {
        guard chains.allSatisfy({ $0.streams(in: image) }) else { return nil }
        return DecodeMemory.Streaming(
            bandRows: bandHeight(forTile: tileSize, chains: chains, image: image), haloRows: haloRows(chains, image: image),
            haloColumns: chains.filter { $0.edge == .grow }.compactMap { $0.reach(in: image)?.x }.max() ?? 0,
            buffers: BandedRender.blocks(depth: RenderSchedule.windowsAhead, bandsInFlight: bandsInFlight, chains: chains.count),
            samples: .fileDepth, outputHasAlpha: chains.contains { $0.channels(forSource: 3) == 4 })
    }
}
