import BlurfarmCore
import BlurfarmCoordinator
import BlurfarmEngine
import BlurfarmImageIO
import BlurfarmKernels
import BlurfarmManifest
import Foundation

/// `apply` band by band: the input is decoded, filtered and encoded in horizontal bands that
/// overlap in time (``BandedRender``, ``BandReader``, ``BandWriter``), so memory holds a few
/// bands at the file's depth, not the image. The bytes written are those of the whole-image path.
extension Apply {
    /// Renders the image band by band when it can be, and says whether it did. It can when the
    /// chain's filters are all built in (a plugin's region of interest may depend on where a
    /// tile lies; no filters at all, a format conversion, copies the bands); there is no `--resize` (vips_thumbnail shrinks whole images); the input and
    /// the output are files (not standard input or output); the input needs no turning
    /// upright (EXIF orientation 1: rotating needs the whole image); and the output's alpha and
    /// bytes are known before its last row (``BandWriter/canWrite(to:channels:sourceHadAlpha:options:)``).
    /// Otherwise `apply` decodes the whole image. The bands render in the worker pool or in
    /// this process, as `launched` says; its workers may still be starting (the first window is
    /// decoded meanwhile). The input is admitted within `limits`, the memory being
    /// what streaming it needs (``DecodeMemory/streamed(_:_:)``, a function of its width, not
    /// its height).
    func renderStreamed(
        chain: FilterChain, specs: [FilterSpec], tile: Int, options: EncodeOptions, limits: AdmissionLimits,
        launched: Engine.Launched
    ) throws -> Bool {
        guard input != "-", format == nil, resize == nil, chain.reach != nil, chain.regions.extent == .image,
            chain.filters.allSatisfy({ $0.origin == .builtIn })
        else { return false }
        let clock = ContinuousClock()
        let start = clock.now
        guard
            let reader = try BandReader.open(
                input, streaming: JobRunner.streaming([chain], tileSize: tile), pixelLimit: limits.pixels,
                memoryLimit: limits.memory)
        else { return false }
        let channels = chain.channels(forSource: reader.channels)
        guard BandWriter.canWrite(to: output, channels: channels, sourceHadAlpha: reader.hasAlpha, options: options)
        else { return false }
        let image = Rect(width: reader.width, height: reader.height)
        let banded = BandedRender(
            chains: [chain], tileSize: tile, image: image, bandHeight: JobRunner.bandHeight(forTile: tile, chains: [chain]),
            depth: JobRunner.ringDepth)
        let writer = try BandWriter(
            path: output, width: banded.output.width, height: banded.output.height, channels: channels,
            sourceBitDepth: reader.bitDepth, sourceHadAlpha: reader.hasAlpha, metadata: reader.metadata,
            options: options)
        do {
            try banded.run(
                source: reader.layout,
                outputs: [writer.layout],
                allocator: launched.rendering.allocator, bandsInFlight: launched.rendering.bandsInFlight
            ) { band in
                try reader.read(into: band)
            } render: { _, band, window, output in
                let rendered = try launched.started().submit(
                    band, from: window, image: image, into: output, chain: chain, tileSize: tile, ticket: RenderTicket(),
                    background: writer.background)
                return {
                    do throws(RenderFailure) { _ = try rendered.wait() } catch { throw CommandError("\(input): \(error)") }
                }
            } write: { _, band in
                try writer.append(band)
            }
        } catch {
            writer.abandon()
            throw error
        }
        launched.finishing()
        try writer.finish()
        if verbose {
            let bands = banded.bands
            let tiles = bands.reduce(0) { $0 + banded.tiles(of: $1).count }
            let engineWords = launched.engine.words
            say(
                "\(output): \(banded.output.width)x\(banded.output.height), "
                    + (specs.isEmpty ? "no filter" : specs.map(\.description).joined(separator: " | ")) + ", "
                    + "edge \(edge), colour \(colour), \(counted(tiles, "tile")) on \(engineWords), "
                    + "streamed in \(counted(bands.count, "band")) of \(banded.bandHeight) rows; "
                    + "decode, filter and encode \((clock.now - start).milliseconds) ms")
        }
        return true
    }
}
