import BlurfarmCore
import BlurfarmImageIO
import BlurfarmKernels

/// How tall a streamed image's bands are and what streaming it holds: one answer for every
/// place that streams an image (the coordinator, a worker's whole-image task, `apply`).
extension BandedRender {
    /// The band height for `chains` in tiles of `tileSize`: ``RenderSchedule/bandRows(forTile:reach:encoderWaits:)``
    /// at the farthest any of them reaches up or down, for writers some of which wait for
    /// their encoder's thread (``BandWriter/waitsForEncoder``) or none. Without `encoderWaits`:
    /// the tallest a band may be, what admission counts.
    public static func bandHeight(forTile tileSize: Int, chains: [FilterChain], encoderWaits: Bool = false) -> Int {
        RenderSchedule.bandRows(forTile: tileSize, reach: haloRows(chains), encoderWaits: encoderWaits)
    }

    /// The farthest any of `chains` reaches up or down.
    static func haloRows(_ chains: [FilterChain]) -> Int { chains.compactMap(\.reach?.y).max() ?? 0 }

    /// What streaming an image through `chains` (one per output, each with a ``FilterChain/reach``)
    /// in tiles of `tileSize` holds, for admission (``DecodeMemory/streamed(_:_:)``): the
    /// windows and output bands of ``BandedRender`` at the file's depth, `bandsInFlight`
    /// bands rendering at once (the worker pool's two; one in a process of its own).
    public static func streaming(_ chains: [FilterChain], tileSize: Int, bandsInFlight: Int = 2) -> DecodeMemory.Streaming {
        DecodeMemory.Streaming(
            bandRows: bandHeight(forTile: tileSize, chains: chains), haloRows: haloRows(chains),
            haloColumns: chains.filter { $0.edge == .grow }.compactMap(\.reach?.x).max() ?? 0,
            buffers: BandedRender.blocks(depth: RenderSchedule.windowsAhead, bandsInFlight: bandsInFlight, chains: chains.count),
            samples: .fileDepth, outputHasAlpha: chains.contains { $0.channels(forSource: 3) == 4 })
    }
}
