import BlurfarmState
import BlurfarmCore
import BlurfarmEngine
import BlurfarmImageIO
import BlurfarmKernels
import BlurfarmManifest
import Foundation
import Synchronization

/// The streamed path of ``JobRunner``: the outputs of an input that can be made band by band
/// share one sequential decode, and each band's tiles go to the rendering (the worker pool) as
/// soon as its rows are decoded, while the finished rows of the bands before are encoded
/// (``BandedRender``, ``BandReader``, ``BandWriter``). Memory holds a few bands of each image
/// at the file's depth, whatever its height; the bytes written are those of the whole-image
/// path.
extension JobRunner {
    /// Whether `output` can be streamed, as far as the plan tells (its input's header tells the
    /// rest: ``BandReader/open(_:pixelLimit:memoryLimit:)``, ``BandWriter/canWrite(to:channels:sourceHadAlpha:options:)``):
    /// it is decoded at full size (no resize: a thumbnail is made whole), its chain has filters,
    /// all built in (a plugin's region of interest may depend on where a tile lies; how far the
    /// others reach in the image its header tells: ``FilterChain/streams(in:)``), and it is
    /// verified by checksums only (`decode` and `untiled` compare the whole image).
    public static func canStream(_ output: PlannedOutput, verify: VerifyMode, registry: FilterRegistry) -> Bool {
        verify == .checksum && output.decodeResize == nil && !output.variant.filters.isEmpty
            && chain(of: output, registry: registry).streams
    }

    /// The variant's filter chain, its filters made by `registry`.
    public static func chain(of output: PlannedOutput, registry: FilterRegistry) -> FilterChain {
        FilterChain(
            filters: output.variant.filters.map { registry.makeFilter($0) }, edge: output.variant.edge,
            colour: output.variant.colour, regions: output.variant.regions)
    }

    /// The variant's filter chain.
    func chain(of output: PlannedOutput) -> FilterChain { Self.chain(of: output, registry: registry) }

    /// The encoder's options for the variant.
    func encodeOptions(of variant: VariantSpec) -> EncodeOptions {
        EncodeOptions(
            quality: variant.quality, lossless: variant.lossless, metadata: variant.metadata,
            background: variant.background.rgb, progressive: variant.progressive, subsampling: variant.subsampling,
            effort: variant.effort, optimizeCoding: variant.optimizeCoding)
    }

    /// Streams the outputs of `input` at `indices` (each ``canStream(_:verify:)``) from one
    /// decode, and returns the reports of those it streamed, by index. Outputs its header rules
    /// out (an image to turn upright; an output whose alpha is known only at the end) are left
    /// out, for the whole-image path. A decode that fails fails every output it feeds, and
    /// leaves none of them written.
    func stream(
        _ input: PlannedInput, indices: [Int], tileSize: Int, control: JobControl,
        events: @escaping @Sendable (Event) -> Void
    ) -> [Int: OutputReport] {
        let clock = ContinuousClock()
        var reports: [Int: OutputReport] = [:]
        func failed(_ index: Int, _ failure: OutputFailure, decode: Double = 0, retries: Int = 0) {
            reports[index] = OutputReport.failed(input.outputs[index], of: input, failure, decode: decode, retries: retries)
        }
        let opened = clock.now
        let reader: BandReader
        do throws(ImageIOError) {
            // One chain for each group of outputs that will share a render (the same render,
            // into the same kind of samples: ``VariantSpec/renderKey``).
            struct Group: Hashable {
                let render: VariantSpec.RenderKey, alpha: Bool, sixteenBit: Bool, background: RGBAColour
            }
            var distinct = Set<Group>()
            let renders = indices.filter { index in
                let output = input.outputs[index]
                let format = ImageFormat(extension: PathName.pathExtension(of: output.path))
                return distinct.insert(Group(
                    render: output.variant.renderKey,
                    alpha: format?.storesAlpha == true, sixteenBit: format?.stores16Bit == true,
                    background: output.variant.background)).inserted
            }
            let chains = renders.map { chain(of: input.outputs[$0]) }
            let streaming = { (image: Rect) in BandedRender.streaming(chains, tileSize: tileSize, image: image) }
            guard
                let made = try BandReader.open(
                    input.path, streaming: streaming, pixelLimit: pixelLimit, memoryLimit: memoryLimit / decodedImages,
                    confinement: confinement)
            else { return [:] }
            reader = made
        } catch {
            let seconds = (clock.now - opened).seconds
            for index in indices { failed(index, .decode(error), decode: seconds) }
            return reports
        }
        let image = Rect(width: reader.width, height: reader.height)
        // The outputs streamed, each with its chain and writer.
        var streamed: [(index: Int, chain: FilterChain, writer: BandWriter, commit: OutputCommit)] = []
        for index in indices {
            let output = input.outputs[index]
            let chain = chain(of: output)
            let channels = chain.channels(forSource: reader.channels)
            let options = encodeOptions(of: output.variant)
            guard BandWriter.canWrite(to: output.path, channels: channels, sourceHadAlpha: reader.hasAlpha, options: options)
            else { continue }
            let outputRect = chain.outputRect(forImage: image)
            if outputRect.area > pixelLimit {
                failed(index, .plugin(
                    "the filters' output would be \(outputRect.width)x\(outputRect.height) pixels, more than the pixel "
                        + "limit of \(pixelLimit)"))
                continue
            }
            let commit: OutputCommit
            do throws(OutputFailure) {
                commit = try OutputCommit(output, of: input, confinement: confinement)
            } catch {
                failed(index, error)
                continue
            }
            // A writer that cannot start (its output refused, no thread for its saver) leaves
            // the output to the whole-image path, which says why or writes it.
            guard
                let writer = try? BandWriter(
                    path: output.path, width: outputRect.width, height: outputRect.height, channels: channels,
                    sourceBitDepth: reader.bitDepth, sourceHadAlpha: reader.hasAlpha, metadata: reader.metadata,
                    options: options, temporaryFiles: control.temporaryFiles, confinement: confinement,
                    placing: commit.placing)
            else { continue }
            streamed.append((index, chain, writer, commit))
        }
        guard !streamed.isEmpty else { return reports }
        let outputs = StreamedOutputs(
            image: image, chains: streamed.map(\.chain), writers: streamed.map(\.writer),
            keys: streamed.map { AnyHashable(input.outputs[$0.index].variant.renderKey) }, tileSize: tileSize)
        let (banded, members) = (outputs.banded, outputs.groups)
        let tiles = outputs.tiles
        let copied = members.indices.map { chain in
            banded.bands(ofChain: chain).reduce(0) { $0 + banded.chains[chain].copiedTiles(banded.tiles(of: $1), image: image) }
        }
        // The first output of a chain counts its tiles; the others render none of their own.
        for (chain, group) in members.enumerated() {
            for (k, member) in group.enumerated() {
                events(.outputStarted(input.outputs[streamed[member].index], tiles: k == 0 ? tiles[chain] : 0))
            }
        }

        // What each chain's bands took, as they go.
        let progress = StreamProgress(outputs: members.count)
        let rendering = self.rendering
        let leaders = members.map { input.outputs[streamed[$0[0]].index] }
        var outcome = outputs.run(
            reader: reader, allocator: rendering.allocator, bandsInFlight: rendering.bandsInFlight
        ) { chain, band, window, output, background in
            // A pause holds no output already started: its bands go on (docs/api.md).
            if let ended = control.ended { throw StreamFailure.ended(ended) }
            let number = (band.y - banded.outputs[chain].y) / banded.bandHeight
            let ticket = control.ticket { done, _ in
                let total = progress.tilesDone(chain, band: number, done: done)
                events(.tilesDone(leaders[chain], done: total, total: tiles[chain]))
            }
            let start = ContinuousClock.now
            let rendered = rendering.submit(
                band, from: window, image: image, into: output, chain: banded.chains[chain], tileSize: tileSize,
                ticket: ticket, background: background)
            return {
                do throws(RenderFailure) {
                    let done = try rendered.wait()
                    progress.rendered(chain, retries: done.retries, from: start, to: done.at)
                } catch {
                    throw StreamFailure.render(error)
                }
            }
        }
        let decodeSeconds = outcome.decodeTime.seconds
        for (chain, group) in members.enumerated() {
            // The render's tiles, retries and time go to the first output of the chain written.
            let leader = group.first { outcome.writeFailures[$0] == nil } ?? group[0]
            for member in group {
                let entry = streamed[member]
                let output = input.outputs[entry.index]
                var failure = outcome.writeFailures[member].map(OutputFailure.write)
                switch outcome.failure {
                case nil: break
                case .decode(let error): failure = failure ?? .decode(error)
                case .render(StreamFailure.render(let error)): failure = failure ?? .render(output: output.path, error)
                case .render(StreamFailure.ended(let ended)): failure = failure ?? ended
                case .render(let error): preconditionFailure("a streamed render throws a StreamFailure only: \(error)")
                }
                // Every row was handed to the saver: the file is whole, and written even when
                // the job ended meanwhile (the saver may already have put it in place).
                let start = clock.now
                if failure == nil {
                    do throws(OutputFailure) {
                        try entry.commit.write(unless: nil) { () throws(ImageIOError) in try entry.writer.finish() }
                    } catch {
                        failure = error
                    }
                } else {
                    entry.writer.abandon()
                }
                outcome.encodeTimes[member] += clock.now - start
                let leads = member == leader
                var (retries, filterSeconds) = leads ? progress.totals(chain) : (0, 0)
                if leads, case .render(StreamFailure.render(let error)) = outcome.failure { retries += error.retries }
                if let failure {
                    reports[entry.index] = entry.commit.failed(failure, decode: decodeSeconds, retries: retries)
                    continue
                }
                reports[entry.index] = entry.commit.written(OutputCommit.Written(
                    width: banded.outputs[chain].width, height: banded.outputs[chain].height, tiles: leads ? tiles[chain] : 0,
                    tilesCopied: leads ? copied[chain] : 0, bands: banded.bands(ofChain: chain).count,
                    decodeSeconds: decodeSeconds, filterSeconds: filterSeconds, encodeSeconds: outcome.encodeTimes[member].seconds,
                    retries: retries, checksum: outcome.checksums[chain]))
            }
        }
        return reports
    }
}

/// Why a streamed image's rendering stopped: a band failed, or its job ended.
private enum StreamFailure: Error {
    case render(RenderFailure)
    case ended(OutputFailure)
}

/// The tiles done, retries and filter time of each output of a streamed image, added up from
/// its bands (several render at once, from several threads). The filter time is the time some
/// band of the output was rendering: the union of the bands' times, which overlap.
private final class StreamProgress: Sendable {
    private struct Output {
        /// Tiles done of the bands that are rendering or rendered, by band number.
        var tiles: [Int: Int] = [:]
        var retries = 0
        var renderings: [Range<ContinuousClock.Instant>] = []
    }
    private let outputs: Mutex<[Output]>

    init(outputs: Int) { self.outputs = Mutex(Array(repeating: Output(), count: outputs)) }

    /// Records `done` tiles of band `band` of output `chain`; returns the output's tiles done.
    func tilesDone(_ chain: Int, band: Int, done: Int) -> Int {
        outputs.withLock { outputs in
            outputs[chain].tiles[band] = done
            return outputs[chain].tiles.values.reduce(0, +)
        }
    }

    /// Records a band of output `chain` rendered with `retries` retried tiles from `start` to `end`.
    func rendered(_ chain: Int, retries: Int, from start: ContinuousClock.Instant, to end: ContinuousClock.Instant) {
        outputs.withLock { outputs in
            outputs[chain].retries += retries
            outputs[chain].renderings.append(start..<max(start, end))
        }
    }

    /// Output `chain`'s retried tiles, and the seconds some band of it was rendering.
    func totals(_ chain: Int) -> (retries: Int, seconds: Double) {
        outputs.withLock { outputs in
            var busy = Duration.zero
            var reached: ContinuousClock.Instant?
            for span in outputs[chain].renderings.sorted(by: { $0.lowerBound < $1.lowerBound }) {
                let from = reached.map { max($0, span.lowerBound) } ?? span.lowerBound
                if span.upperBound > from { busy += span.upperBound - from }
                reached = reached.map { max($0, span.upperBound) } ?? span.upperBound
            }
            return (outputs[chain].retries, busy.seconds)
        }
    }
}
