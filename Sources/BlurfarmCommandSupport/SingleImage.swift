import BlurfarmFarm
import BlurfarmCoordinator
import BlurfarmCore
import BlurfarmEngine
import BlurfarmImageIO
import BlurfarmKernels

/// One image through a filter chain, as `apply IN OUT` renders it: decoded, filtered tile by
/// tile on an engine (``WorkerChoice``) and encoded, written atomically (or to standard
/// output). Band by band when it can be (``renderStreamed(_:)``), whole otherwise.
public struct SingleImage: Sendable {
    /// The input: a file's path, or `-` for standard input.
    public var input: String
    /// The output: a file's path (its format from its extension), or `-` for standard output.
    public var output: String
    /// The format of standard output (an extension such as `png`); nil for a file.
    public var format: String?
    /// The box the input is shrunk into on load (vips_thumbnail), if any.
    public var resize: (width: Int?, height: Int?, fit: ThumbnailFit, upscale: Bool)?
    public var chain: FilterChain
    public var tileSize: Int
    public var options: EncodeOptions
    /// The most pixels the input may have, and the most bytes its decode may use.
    public var pixelLimit: Int
    public var memoryLimit: Int

    public init(
        input: String, output: String, format: String?, resize: (width: Int?, height: Int?, fit: ThumbnailFit, upscale: Bool)?,
        chain: FilterChain, tileSize: Int, options: EncodeOptions, pixelLimit: Int, memoryLimit: Int
    ) {
        (self.input, self.output, self.format, self.resize) = (input, output, format, resize)
        (self.chain, self.tileSize, self.options) = (chain, tileSize, options)
        (self.pixelLimit, self.memoryLimit) = (pixelLimit, memoryLimit)
    }

    /// What a render did, for `--verbose`.
    public struct Summary: Sendable {
        public var width: Int
        public var height: Int
        /// Tiles rendered; 0 when nothing was filtered (the identity).
        public var tiles: Int
        /// What rendered them, in words ("2 threads").
        public var engine: String
        /// Streamed: the bands and their height; nil for a whole-image render.
        public var bands: (count: Int, height: Int)?
        /// Whole-image renders: each stage; streamed ones overlap, and ``total`` is all of them.
        public var decode: Duration = .zero
        public var filter: Duration = .zero
        public var encode: Duration = .zero
        public var total: Duration = .zero
    }

    /// Why an image could not be rendered; its codecs' errors are ``ImageIOError``s.
    public enum Failure: Error, Sendable, CustomStringConvertible {
        /// The chain's regions do not fit the image (`output: region` with every region outside).
        case regions(input: String, problem: String)
        /// A tile failed to render (a worker died, a plugin failed).
        case render(input: String, RenderFailure)

        public var description: String {
            switch self {
            case .regions(let input, let problem): "\(input): \(problem)"
            case .render(let input, let failure): "\(input): \(failure)"
            }
        }
    }

    /// Renders the image on `choice` (its workers started with `settings`; without filters, a
    /// format conversion, in this process).
    ///
    /// - Throws: ``Failure``, ``ImageIOError``, ``WorkerChoice/Failure``.
    public func render(on choice: WorkerChoice, settings: FarmSettings) throws -> Summary {
        // With filters, the workers start while the image is opened and its first rows decoded.
        let launched = chain.filters.isEmpty ? choice.inProcess() : try choice.launch(settings)
        defer { launched.shutdown() }
        if let summary = try renderStreamed(launched) { return summary }
        let clock = ContinuousClock()
        let decodeStart = clock.now
        let image = input == "-"
            ? try StandardStreams.withInputFile { path throws(ImageIOError) in try decode(path) }
            : try decode(input)
        let decodeTime = clock.now - decodeStart
        if let problem = chain.regionProblem(forImage: image.pixels.rect) { throw Failure.regions(input: input, problem: problem) }
        var summary = Summary(
            width: image.pixels.rect.width, height: image.pixels.rect.height, tiles: 0, engine: choice.words, decode: decodeTime)
        if chain.isIdentity(forSource: image.pixels.channels) {
            summary.encode = try clock.measure { try write(image.pixels, of: image) }
            return summary
        }
        // A chain without filters that is not the identity (it adds alpha) still renders, in
        // this process.
        let rendering = try launched.started()
        let filterStart = clock.now
        let pixels: PixelBuffer
        do throws(RenderFailure) {
            pixels = try rendering.render(
                image.pixels, sourceBitDepth: image.bitDepth, outputBitDepth: options.bitDepth, chain: chain,
                tileSize: tileSize, ticket: RenderTicket()
            ).pixels
        } catch {
            throw Failure.render(input: input, error)
        }
        summary.filter = clock.now - filterStart
        launched.finishing()
        summary.encode = try clock.measure { try write(pixels, of: image) }
        (summary.width, summary.height) = (pixels.rect.width, pixels.rect.height)
        summary.tiles = TileGrid(bounds: pixels.rect, tileSize: tileSize).tiles.count
        return summary
    }

    /// The input at `path` decoded whole, shrunk on load into ``resize``, within the limits.
    private func decode(_ path: String) throws(ImageIOError) -> DecodedImage {
        guard let resize else { return try ImageReader.read(path, pixelLimit: pixelLimit, memoryLimit: memoryLimit) }
        return try ImageReader.thumbnail(
            path, width: resize.width, height: resize.height, fit: resize.fit, upscale: resize.upscale,
            pixelLimit: pixelLimit, memoryLimit: memoryLimit)
    }

    /// Writes `pixels`, rendered from `image`, to the output atomically, or to standard output.
    private func write(_ pixels: PixelBuffer, of image: DecodedImage) throws(ImageIOError) {
        guard let format else {
            return try ImageWriter.write(
                pixels, to: output, sourceBitDepth: image.bitDepth, sourceHadAlpha: image.hasAlpha,
                metadata: image.metadata, options: options)
        }
        try StandardStreams.write(ImageWriter.encode(
            pixels, extension: format, named: "standard output", sourceBitDepth: image.bitDepth,
            sourceHadAlpha: image.hasAlpha, metadata: image.metadata, options: options))
    }

    /// Renders the image band by band when it can be, or returns nil. It can when the chain
    /// ``FilterChain/streams`` (no filters at all, a format conversion, copies the bands); there is no resize
    /// (vips_thumbnail shrinks whole images); the input and the output are files (not standard
    /// input or output); the input needs no turning upright (EXIF orientation 1: rotating needs
    /// the whole image); and the output's alpha and bytes are known before its last row
    /// (``BandWriter/canWrite(to:channels:sourceHadAlpha:options:)``). The input is decoded,
    /// filtered and encoded in horizontal bands that overlap in time (``BandedRender``,
    /// ``BandReader``, ``BandWriter``), so memory holds a few bands at the file's depth, not the
    /// image; the bytes written are those of the whole-image path. The bands render as
    /// `launched` says; its workers may still be starting (the first window is decoded
    /// meanwhile). The input is admitted with the memory streaming it needs
    /// (``DecodeMemory/streamed(_:_:)``, a function of its width, not its height).
    private func renderStreamed(_ launched: WorkerChoice.Launched) throws -> Summary? {
        guard input != "-", format == nil, resize == nil, chain.streams else { return nil }
        let clock = ContinuousClock()
        let start = clock.now
        let streaming = { [chain, tileSize] in BandedRender.streaming([chain], tileSize: tileSize, image: $0) }
        guard
            let reader = try BandReader.open(
                input, streaming: streaming, pixelLimit: pixelLimit,
                memoryLimit: memoryLimit)
        else { return nil }
        let channels = chain.channels(forSource: reader.channels)
        guard BandWriter.canWrite(to: output, channels: channels, sourceHadAlpha: reader.hasAlpha, options: options)
        else { return nil }
        let image = Rect(width: reader.width, height: reader.height)
        let output = chain.outputRect(forImage: image)
        let writer = try BandWriter(
            path: self.output, width: output.width, height: output.height, channels: channels,
            sourceBitDepth: reader.bitDepth, sourceHadAlpha: reader.hasAlpha, metadata: reader.metadata, options: options)
        let streamed = StreamedOutputs(image: image, chains: [chain], writers: [writer], keys: [0], tileSize: tileSize)
        let (input, chain, tileSize) = (input, chain, tileSize)
        let outcome = streamed.run(
            reader: reader, allocator: launched.rendering.allocator, bandsInFlight: launched.rendering.bandsInFlight
        ) { _, band, window, output, background in
            let rendered = try launched.started().submit(
                band, from: window, image: image, into: output, chain: chain, tileSize: tileSize, ticket: RenderTicket(),
                background: background)
            return {
                do throws(RenderFailure) { _ = try rendered.wait() } catch { throw Failure.render(input: input, error) }
            }
        }
        switch (outcome.failure, outcome.writeFailures[0]) {
        case (nil, nil): break
        case (.decode(let error), _), (nil, .some(let error)):
            writer.abandon()
            throw error
        case (.render(let error), _):
            writer.abandon()
            throw error
        }
        launched.finishing()
        try writer.finish()
        let banded = streamed.banded
        return Summary(
            width: output.width, height: output.height, tiles: streamed.tiles[0], engine: launched.choice.words,
            bands: (banded.bands(ofChain: 0).count, banded.bandHeight), total: clock.now - start)
    }
}

extension SingleImage.Summary {
    /// What `apply --verbose` says of the image written to `output` through `filters` under
    /// `edge` and `colour`: its size, the chain, the tiles and what rendered them, the bands
    /// when streamed, and how long each step took, in milliseconds.
    public func text(output: String, filters: [FilterSpec], edge: EdgeRule, colour: ColourMode) -> String {
        func ms(_ duration: Duration) -> Int { Int(duration.milliseconds) }
        let size = "\(output): \(width)x\(height), "
        let chain = filters.map(\.description).joined(separator: " | ")
        if let bands {
            return size + (filters.isEmpty ? "no filter" : chain) + ", "
                + "edge \(edge), colour \(colour), \(counted(tiles, "tile")) on \(engine), "
                + "streamed in \(counted(bands.count, "band")) of \(bands.height) rows; "
                + "decode, filter and encode \(ms(total)) ms"
        } else if tiles == 0 {
            return size + "no filter; decode \(ms(decode)) ms, encode \(ms(encode)) ms"
        }
        return size + "\(chain), edge \(edge), colour \(colour), "
            + "\(counted(tiles, "tile")) on \(engine); decode \(ms(decode)) ms, "
            + "filter \(ms(filter)) ms, encode \(ms(encode)) ms"
    }
}

extension SingleImage {
    /// Checks that `output` (a file, or standard output written in `format`) can be written
    /// with `options`, before anything is decoded.
    /// - Throws: the ``ImageIOError`` when the format cannot be written (no AV1 encoder, an
    ///   option it does not take) or the file's extension names none.
    public static func checkDestination(_ output: String, format: String?, options: EncodeOptions) throws(ImageIOError) {
        if let format {
            _ = try ImageWriter.checkFormat(extension: format, of: "standard output", options: options)
        } else {
            try ImageWriter.checkDestination(output, options: options)
        }
    }
}
