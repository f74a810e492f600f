import BlurfarmCore
import BlurfarmEngine
import BlurfarmImageIO
import BlurfarmKernels
import BlurfarmManifest
import Foundation

/// `apply` band by band: the input is decoded, filtered and encoded in horizontal bands that
/// overlap in time (``BandedRender``, ``BandReader``, ``BandWriter``), so memory holds a few
/// bands, not the image. The bytes written are those of the whole-image path.
extension Apply {
    /// The most output rows in a band: with a larger tile, the band cuts the tiles short. A
    /// window of a 16051-pixel-wide RGB image is then 128 + 2 × 24 rows at sigma 8, about
    /// 34 MB (bands of 512 rows took 2.6 times the peak memory and no less time:
    /// `docs/performance.md`).
    static let maximumBandHeight = 128

    /// Windows decoded ahead of the one being rendered (``BandedRender/depth``).
    static let ringDepth = 2

    /// Renders the image band by band when it can be, and says whether it did. It can when the
    /// chain has filters, all built in (a plugin's region of interest may depend on where a
    /// tile lies, and plugins run in worker processes); the in-process engine renders
    /// (`--workers 0` or `--threads`: the worker pool takes whole images); there is no
    /// `--resize` (vips_thumbnail shrinks whole images); the input and the output are files
    /// (not standard input or output); the input needs no turning
    /// upright (EXIF orientation 1: rotating needs the whole image); and the output's alpha and
    /// bytes are known before its last row (``BandWriter/canWrite(to:channels:sourceHadAlpha:options:)``).
    /// Otherwise `apply` decodes the whole image. The input is admitted within `limits`, the
    /// memory being what streaming it needs (``DecodeMemory/streamed(_:_:)``, a function of
    /// its width, not its height).
    func renderStreamed(
        chain: FilterChain, specs: [FilterSpec], tile: Int, options: EncodeOptions, limits: AdmissionLimits
    ) throws -> Bool {
        // The in-process engine, as `Engine` chooses it (a configuration's `workers` is at least 1).
        let inProcess = workers == 0 || (workers == nil && threads != nil)
        guard input != "-", format == nil, resize == nil, !chain.filters.isEmpty, let reach = chain.reach, inProcess
        else { return false }
        let clock = ContinuousClock()
        let start = clock.now
        let bandHeight = tile > 0 ? min(tile, Self.maximumBandHeight) : Self.maximumBandHeight
        let streaming = DecodeMemory.Streaming(
            bandRows: bandHeight, haloRows: reach.y, haloColumns: edge == .grow ? reach.x : 0, ringDepth: Self.ringDepth,
            samples: .bytes(MemoryLayout<Float>.stride), outputHasAlpha: chain.channels(forSource: 3) == 4)
        guard
            let reader = try BandReader.open(
                input, streaming: streaming, pixelLimit: limits.pixels, memoryLimit: limits.memory)
        else { return false }
        let channels = chain.channels(forSource: reader.channels)
        guard BandWriter.canWrite(to: output, channels: channels, sourceHadAlpha: reader.hasAlpha, options: options)
        else { return false }
        let threads = self.threads ?? ProcessInfo.processInfo.activeProcessorCount
        let banded = BandedRender(
            renderer: Renderer(chain: chain, tileSize: tile, executor: ThreadedTileExecutor(threads: threads)),
            image: Rect(width: reader.width, height: reader.height), bandHeight: bandHeight, depth: Self.ringDepth)
        let writer = try BandWriter(
            path: output, width: banded.output.width, height: banded.output.height, channels: channels,
            sourceBitDepth: reader.bitDepth, sourceHadAlpha: reader.hasAlpha, metadata: reader.metadata,
            options: options)
        do {
            try banded.run(sourceChannels: reader.channels) { band in try reader.read(into: band) } write: { band in
                try writer.append(band)
            }
        } catch {
            writer.abandon()
            throw error
        }
        try writer.finish()
        if verbose {
            let bands = banded.bands
            let tiles = bands.reduce(0) { $0 + TileGrid(bounds: $1, tileSize: tile).count }  // as BandedRender cuts them
            say(
                "\(output): \(banded.output.width)x\(banded.output.height), \(specs.map(\.description).joined(separator: " | ")), "
                    + "edge \(edge), colour \(colour), \(counted(tiles, "tile")) on \(counted(threads, "thread")), "
                    + "streamed in \(counted(bands.count, "band")) of \(banded.bandHeight) rows; "
                    + "decode, filter and encode \((clock.now - start).milliseconds) ms")
        }
        return true
    }
}
