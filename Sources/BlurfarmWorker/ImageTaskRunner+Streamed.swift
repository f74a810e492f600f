import BlurfarmCore
import BlurfarmEngine
import BlurfarmImageIO
import BlurfarmKernels
import BlurfarmWire
import Synchronization

/// A whole-image task made band by band in the worker: the input decoded at the file's depth
/// as it is read, each band filtered on this worker's one core (the 8- and 16-bit kernels, the
/// fixed-point gaussian for 8-bit RGB) and encoded in memory as it is finished (``BandReader``,
/// ``BandedRender``, ``BandWriter/inMemory(path:width:height:channels:sourceBitDepth:sourceHadAlpha:metadata:options:)``),
/// the outputs sharing one decode. The bytes are those the coordinator's streamed path writes
/// for the same outputs, and those of the whole-image path (the band-invariance tests).
extension ImageTaskRunner {
    /// The answer to `task` made band by band, or nil when it cannot be: the decode is a
    /// resize, an output is verified by decoding it again, a chain has no filters or does not
    /// stream (``FilterChain/streams``), the outputs' tiles differ, or the input's header rules
    /// it out (a chain reaching too far in it: ``FilterChain/streams(in:)``; an image to turn upright, an output whose alpha is known only at the end, an
    /// output over the pixel limit, regions that do not fit, a decode that fails to open).
    /// `execute` then decodes the image whole, which reports each output's failure.
    func streamed(_ task: ImageTask) -> ImageResult? {
        let clock = ContinuousClock()
        guard task.decode == .whole, let tileSize = task.outputs.first?.tileSize,
            task.outputs.allSatisfy({ !$0.verifyDecode && !$0.filters.isEmpty && $0.tileSize == tileSize })
        else { return nil }
        var chains: [FilterChain] = []
        for output in task.outputs {
            guard
                let chain = try? tasks.makeChain(
                    output.filters, edge: output.edge, colour: output.colour, regions: output.regions, plugins: nil),
                chain.streams
            else { return nil }
            chains.append(chain)
        }
        guard
            let reader = try? BandReader.open(
                task.input.path, streaming: { BandedRender.streaming(chains, tileSize: tileSize, image: $0, bandsInFlight: 1) },
                pixelLimit: task.input.pixelLimit, memoryLimit: task.input.memoryLimit)
        else { return nil }
        let image = Rect(width: reader.width, height: reader.height)
        var writers: [BandWriter] = []
        for (output, chain) in zip(task.outputs, chains) {
            let channels = chain.channels(forSource: reader.channels)
            let outputRect = chain.outputRect(forImage: image)
            guard chain.problem(forImage: image) == nil, chain.regionProblem(forImage: image) == nil,
                outputRect.area <= task.input.pixelLimit,
                BandWriter.canWrite(
                    to: output.path, channels: channels, sourceHadAlpha: reader.hasAlpha, options: output.encoding),
                let writer = try? BandWriter.inMemory(
                    path: output.path, width: outputRect.width, height: outputRect.height, channels: channels,
                    sourceBitDepth: reader.bitDepth, sourceHadAlpha: reader.hasAlpha, metadata: reader.metadata,
                    options: output.encoding)
            else {
                for writer in writers { writer.abandon() }
                return nil
            }
            writers.append(writer)
        }
        let streamed = StreamedOutputs(
            image: image, chains: chains, writers: writers, keys: task.outputs.map { AnyHashable(RenderKey($0)) },
            tileSize: tileSize)
        // The decode, the filters and the encoders all on this thread: the worker is one core's worth.
        let filterTime = Mutex([Duration](repeating: .zero, count: streamed.groups.count))
        let (rendering, groupChains) = (rendering, streamed.banded.chains)
        var outcome = streamed.run(reader: reader, allocator: nil, bandsInFlight: rendering.bandsInFlight, decodeAhead: false) {
            chain, band, window, output, background in
            let start = clock.now
            _ = rendering.submit(
                band, from: window, image: image, into: output, chain: groupChains[chain], tileSize: tileSize,
                ticket: RenderTicket(), background: background)
            filterTime.withLock { $0[chain] += clock.now - start }
            return {}
        }
        let tiles = streamed.tiles
        var room = WireProtocol.inlinePixelCapacity
        var results = [ImageOutputResult?](repeating: nil, count: task.outputs.count)
        for (chain, group) in streamed.groups.enumerated() {
            for (k, member) in group.enumerated() {
                let output = task.outputs[member]
                let writer = writers[member]
                let encoding = Result { () throws(ImageIOError) -> [UInt8] in
                    switch (outcome.failure, outcome.writeFailures[member]) {
                    case (.decode(let error), _), (nil, .some(let error)):
                        writer.abandon()
                        throw error
                    case (.render(let error), _):
                        writer.abandon()  // the in-process rendering does not fail
                        throw ImageIOError(code: .encodeFailed, path: output.path, message: "\(error)")
                    case (nil, nil):
                        let start = clock.now
                        defer { outcome.encodeTimes[member] += clock.now - start }
                        return try writer.finishEncoded()
                    }
                }
                switch encoding {
                case .failure(let error):
                    // A read that failed is the decode's; otherwise the encoder's.
                    let kind: ImageOutputFailure.Kind = error.path == task.input.path ? .decode : .encode
                    results[member] = .failed(failure(kind, error, naming: task))
                case .success(let bytes):
                    if let tooLarge = take(bytes.count, for: output.path, from: &room) {
                        results[member] = .failed(tooLarge)
                        continue
                    }
                    let outputRect = streamed.banded.outputs[chain]
                    let layout = writer.layout
                    // The first output of a group counts the render's tiles and its time.
                    results[member] = .encoded(EncodedOutput(
                        bytes: bytes, width: outputRect.width, height: outputRect.height,
                        bitDepth: layout.format.byteSize == 2 ? 16 : 8, hasAlpha: layout.channels == 4,
                        checksum: outcome.checksums[chain], tiles: k == 0 ? tiles[chain] : 0,
                        bands: streamed.banded.bands(ofChain: chain).count,
                        filterNanoseconds: k == 0 ? filterTime.withLock { $0[chain] }.nanoseconds : 0,
                        encodeNanoseconds: outcome.encodeTimes[member].nanoseconds))
                }
            }
        }
        return ImageResult(
            taskID: task.taskID, decodeNanoseconds: outcome.decodeTime.nanoseconds, outputs: results.map { $0! })
    }
}
