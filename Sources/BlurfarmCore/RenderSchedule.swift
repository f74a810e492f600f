/// The named tunables of rendering, in one place, apart from the algorithms (as Halide's
/// `apps/blur` keeps its schedule apart from its definition): how large the pieces of work
/// are, from a tile down to a kernel's strip of rows. None of them changes a byte of any output:
/// every piece computes each value by the same arithmetic in the same order (tile, band and
/// strip invariance: `BandInvarianceTests`, `PoolBandInvarianceTests`, the kernels' schedule
/// tests). They change speed and memory only; each says what chose its value. Inlinable, so
/// that the kernels' loops see constants.
public enum RenderSchedule {
    // MARK: The farm's pieces

    /// A tile's side when neither the manifest nor the configuration gives one (`tile:`): 512 ×
    /// 512 pixels (4 MiB of Float32 RGBA). In the worker pool on a 4K image the filter stage
    /// runs 1.6 times faster with a second worker at 512 against 1.5 times at 256 (fewer tasks,
    /// fewer round trips; docs/performance-history.md), and in process and on the 1080p batch
    /// 512 is as fast as 256. Still small enough to spread an image over the workers (32 tiles
    /// in 4K).
    @inlinable public static var tileSize: Int { 512 }

    /// The largest tile side a manifest, the configuration or `--tile` may give: 65,536
    /// pixels, a tile of 4 billion. A tile is never larger than its image (0 asks for one tile
    /// an image, whatever its size); a side near `Int.max` overflowed as the filters' reach was
    /// added to it, and one of 2^32 or more as the worker protocol carried it in 32 bits.
    @inlinable public static var largestTileSize: Int { 1 << 16 }

    /// The tile side of the in-memory kernel benchmarks (`blurfarm bench engine`): the fastest
    /// there on a 4K image (a tile's strip of rows stays in L2).
    @inlinable public static var benchmarkTileSize: Int { 256 }

    /// The fewest output rows in a streamed band (the tile's height allowing; more for a
    /// chain that reaches far: ``bandRows(forTile:reach:encoderWaits:)``): a window of a 16051-pixel-wide
    /// 8-bit RGB image at sigma 8 is then 192 + 2 × 24 rows, about 11.6 MB (docs/performance-history.md).
    @inlinable public static var minimumBandRows: Int { 128 }

    /// A band is at least this many times the rows its chains reach, so that the rows its halo
    /// adds, computed by the rows pass and thrown away, stay a quarter of its own: at sigma 32
    /// (reach 96) a band of 128 rows made the rows pass compute 320 rows for 128; one of 768,
    /// 960 (docs/performance-history.md: the sigma 32 batch 0.79x). Not for bands whose encoder takes
    /// the rows as it encodes them (``bandRows(forTile:reach:encoderWaits:)``).
    @inlinable public static var bandReachMultiple: Int { 8 }

    /// The most rows in a band, however far the chains reach.
    @inlinable public static var maximumBandRows: Int { 1024 }

    /// The farthest up and down a chain may read for an image to be streamed whatever its size
    /// (a taller image streams while the reach is at most half its height:
    /// `FilterChain.streams(in:)`). A window holds its band and the reach above and below (never
    /// more than the image), and a streamed render holds about eight windows
    /// (`BandedRender.blocks`): 8-bit windows then hold less than the whole image's `Float32`
    /// pixels and their render's output (32 bytes a pixel). Farther (a redaction whose box covers
    /// most of the image, or a region-less one: the whole image), every tile would convert most
    /// of the image to `Float32` for its box: such an image is decoded whole instead. A face
    /// grown 1.3 times for redaction is 1,400 rows in a 16 MP photo where it is 600 pixels
    /// across (`bench faces`); every built-in blur up to sigma 341 reaches less than 1024.
    @inlinable public static var maximumStreamedReach: Int { 1024 }

    /// The rows of a streamed band when tiles are `tileSize` pixels (0: one tile) and the
    /// chains reach `reach` rows up and down: never taller than a tile. When `encoderWaits`
    /// (a band is handed to a libvips saver whose thread takes its rows as it encodes them:
    /// PNG, TIFF, a JPEG keeping its metadata, every 16-bit file), the band is not made taller
    /// for the reach:
    /// the next band renders while one encodes, and a tall band makes the first render and
    /// the last encode, which nothing overlaps, longer (a 16-bit 4K PNG at sigma 32, one
    /// thread: 0.93x the time and 0.6x the memory of bands of 512 rows; docs/performance.md).
    @inlinable public static func bandRows(forTile tileSize: Int, reach: Int = 0, encoderWaits: Bool = false) -> Int {
        let wanted = min(max(minimumBandRows, encoderWaits ? 0 : bandReachMultiple * reach), maximumBandRows)
        return tileSize > 0 ? min(tileSize, wanted) : wanted
    }

    /// Source windows decoded ahead of the ones rendering (`BandedRender.depth`).
    @inlinable public static var windowsAhead: Int { 2 }

    /// The rows an encoder's saver thread may be handed at once (a band of more waits for the
    /// first to be taken).
    @inlinable public static var encoderRingRows: Int { 256 }

    // MARK: The kernels' pieces

    /// Rows per strip of the Float32 gaussian's fast schedule: the strip's intermediate rows
    /// stay in L2.
    @inlinable public static var floatStripRows: Int { 16 }

    /// Pixels the Float32 kernels compute together in registers (eight SIMD4 accumulators).
    @inlinable public static var floatBlockPixels: Int { 8 }

    /// Output rows per strip of the 8- and 16-bit kernels: the columns pass makes them block by
    /// block from a ring of `sampleStripRows + 2R` rows-pass rows, so each block of the ring is
    /// read from cache once per strip rather than once per output row.
    @inlinable public static var sampleStripRows: Int { 32 }

    /// Floats per column block of the 16-bit columns pass (eight 8-lane vectors): the block's
    /// `sampleStripRows + 2R` rows (57 KB at sigma 32) stay in cache while the strip's rows are
    /// made.
    @inlinable public static var sampleBlockFloats: Int { 64 }

    /// Bytes of rows-pass rows the samples' fast schedule keeps per slab of columns: about half
    /// of L2.
    @inlinable public static var sampleRingBytes: Int { 256 << 10 }

    /// Samples per column block of the fixed-point columns pass: the block's
    /// `sampleStripRows + 2R` ring rows (41 KB at sigma 8) stay in L1 or close while the strip's
    /// output rows are made (in a stand-alone harness, 128 took 14–15 % longer at sigma 2 and 8,
    /// 4096 1 % and 10 %; with 32-bit sums at sigma 32, 32 to 1024 within 15 %, 256 the fastest).
    @inlinable public static var fixedPointBlockSamples: Int { 256 }
}
