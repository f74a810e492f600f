import BlurfarmCore
import BlurfarmEngine
import BlurfarmImageIO
import BlurfarmKernels
import BlurfarmWire

/// Runs whole-image tasks (``ImageTask``): decodes the input once, renders each output's
/// chain here on one thread, encodes each output in memory, and answers with the encoded
/// bytes or, per output, why it was not made. The decode, the render and the encode are the
/// coordinator's own (``ImageReader/decode(_:_:pixelLimit:memoryLimit:allocator:confinement:)``,
/// ``ImageRendering/render(_:sourceBitDepth:outputBitDepth:chain:tileSize:ticket:)``,
/// ``ImageWriter``), so an output has the same bytes whichever process made it. Messages name
/// the files as the job names them. Nothing a task says makes it trap: built-in filters only
/// (the coordinator sends chains with plugins tile by tile, where a plugin's failure is a
/// tile's), checked as tile tasks are.
struct ImageTaskRunner: Sendable {
    let tasks: TaskRunner
    /// One thread: the worker is one core's worth of work; the pool runs one worker a core.
    let rendering = InProcessRendering(executor: ThreadedTileExecutor(threads: 1))

    /// The answer to `task`: one result per output, in order.
    func execute(_ task: ImageTask) -> ImageResult {
        // Band by band when it can be: the file's samples, one decode shared as it is read.
        if let result = streamed(task) { return result }
        let clock = ContinuousClock()
        let start = clock.now
        // A thumbnail's images at the file's depth (made Float32 only for an output that needs it).
        let decoded = Result { () throws(ImageIOError) -> [DecodedInput] in
            if let samples = try ImageReader.decodeSamples(
                task.input.path, task.decode, pixelLimit: task.input.pixelLimit, memoryLimit: task.input.memoryLimit)
            {
                return samples.map(DecodedInput.init(samples:))
            }
            return try ImageReader.decode(
                task.input.path, task.decode, pixelLimit: task.input.pixelLimit, memoryLimit: task.input.memoryLimit)
                .map(DecodedInput.init(floats:))
        }
        let decodeTime = clock.now - start
        let outputs: [ImageOutputResult]
        switch decoded {
        case .failure(let error):
            let failure = failure(.decode, error, naming: task)
            outputs = task.outputs.map { _ in .failed(failure) }
        case .success(let images):
            // The encoded files share one frame; what does not fit is made by the coordinator.
            var room = WireProtocol.inlinePixelCapacity
            // Outputs that differ only in their encoding (the formats of a variant) share one render.
            var renders = SharedRenders<RenderKey, PixelBuffer>(keys: task.outputs.map(RenderKey.init))
            var sampleRenders = SharedRenders<SampleRenderKey, AnyPixels>(
                keys: task.outputs.map { SampleRenderKey($0, images[$0.decoded].samples) })
            // `decoded` is one of the decode's images: the wire refuses any other
            // (ImageTask(from:)), and the reader makes one image per width.
            outputs = task.outputs.map { output in
                make(
                    output, from: images[output.decoded], pixelLimit: task.input.pixelLimit, task: task, room: &room,
                    renders: &renders, sampleRenders: &sampleRenders)
            }
        }
        return ImageResult(taskID: task.taskID, decodeNanoseconds: decodeTime.nanoseconds, outputs: outputs)
    }

    /// What makes two outputs' pixels equal: the decoded image and everything of the render.
    struct RenderKey: Hashable {
        let decoded: Int
        let filters: [FilterSpec]
        let edge: EdgeRule
        let colour: ColourMode
        let regions: RegionMask
        let tileSize: Int
        let bitDepth: Int?

        init(_ output: ImageTaskOutput) {
            (decoded, filters, edge, colour, regions) = (output.decoded, output.filters, output.edge, output.colour, output.regions)
            (tileSize, bitDepth) = (output.tileSize, output.encoding.bitDepth)
        }
    }

    /// What makes two outputs' samples equal, as the streamed path groups outputs
    /// (``StreamedOutputs``): their pixels' ``RenderKey``, the samples the encoder takes
    /// (``BandWriter/layout(path:sourceBitDepth:sourceHadAlpha:options:)``) and the colour a
    /// translucent pixel is composited over when the file has no alpha (it is in the samples).
    struct SampleRenderKey: Hashable {
        let render: RenderKey
        let layout: SampleLayout?
        let background: SIMD3<Float>

        init(_ output: ImageTaskOutput, _ samples: DecodedSamples?) {
            render = RenderKey(output)
            layout = samples.flatMap { image in
                BandWriter.layout(
                    path: output.path, sourceBitDepth: image.bitDepth, sourceHadAlpha: image.hasAlpha,
                    options: output.encoding)
            }
            background = output.encoding.background
        }
    }

    /// One output rendered and encoded from `image`: rendered once for all the outputs of
    /// one ``RenderKey`` (`renders`), encoded for each; from the image's samples where it has
    /// them and the output can be made so (``fromSamples(_:chain:image:outputRect:task:room:renders:)``).
    private func make(
        _ output: ImageTaskOutput, from input: DecodedInput, pixelLimit: Int, task: ImageTask, room: inout Int,
        renders: inout SharedRenders<RenderKey, PixelBuffer>, sampleRenders: inout SharedRenders<SampleRenderKey, AnyPixels>
    ) -> ImageOutputResult {
        func refused(_ message: String) -> ImageOutputResult {
            .failed(ImageOutputFailure(kind: .plugin, code: nil, path: output.path, message: message))
        }
        let chain: FilterChain
        do throws(TaskRunner.Problem) {
            chain = try tasks.makeChain(
                output.filters, edge: output.edge, colour: output.colour, regions: output.regions, plugins: nil)
        } catch {
            return refused(error.message)
        }
        if let problem = chain.problem(forImage: input.rect) { return refused(problem.message) }
        if let problem = chain.regionProblem(forImage: input.rect) {
            return .failed(ImageOutputFailure(kind: .regions, code: nil, path: output.path, message: problem))
        }
        let outputRect = chain.outputRect(forImage: input.rect)
        if outputRect.area > pixelLimit {
            return refused(
                "the filters' output would be \(outputRect.width)x\(outputRect.height) pixels, more than the pixel "
                    + "limit of \(pixelLimit)")
        }
        // Each output is counted by both render trackers: it is done in the one it takes, with
        // no render in the other.
        if let samples = input.samples,
            let made = fromSamples(
                output, chain: chain, image: samples, outputRect: outputRect, task: task, room: &room,
                renders: &sampleRenders)
        {
            renders.done(RenderKey(output), render: nil)
            return made
        }
        sampleRenders.done(SampleRenderKey(output, input.samples), render: nil)
        let image = input.floats
        let options = output.encoding
        let clock = ContinuousClock()
        var start = clock.now
        // A chain that keeps the channels and changes nothing (a thumbnail) is the decoded
        // image itself.
        let identity = chain.isIdentity(forSource: image.pixels.channels)
        let key = RenderKey(output)
        let shared = renders.render(for: key)
        let pixels: PixelBuffer
        do throws(RenderFailure) {
            if identity {
                pixels = image.pixels
            } else if let shared {
                pixels = shared
            } else {
                pixels = try rendering.render(
                    image.pixels, sourceBitDepth: image.bitDepth, outputBitDepth: options.bitDepth, chain: chain,
                    tileSize: output.tileSize, ticket: RenderTicket()
                ).pixels
            }
        } catch {
            renders.done(key, render: nil)
            return refused(error.description)  // the in-process renderer cannot fail
        }
        renders.done(key, render: identity ? nil : pixels)
        let filterTime = clock.now - start
        start = clock.now
        do throws(ImageIOError) {
            let encoded = try ImageWriter.encode(
                pixels, for: output.path, sourceBitDepth: image.bitDepth, sourceHadAlpha: image.hasAlpha,
                metadata: image.metadata, options: options, checkingFolder: false)
            if let tooLarge = take(encoded.bytes.count, for: output.path, from: &room) { return .failed(tooLarge) }
            if output.verifyDecode, let mismatch = try encoded.mismatch(against: pixels) {
                return .failed(ImageOutputFailure(
                    kind: .verification, code: nil, path: output.path, message: "verification failed: \(mismatch)"))
            }
            return .encoded(EncodedOutput(
                bytes: encoded.bytes, width: pixels.rect.width, height: pixels.rect.height, bitDepth: encoded.bitDepth,
                hasAlpha: encoded.hasAlpha, checksum: encoded.checksum,
                tiles: identity || shared != nil ? 0 : TileGrid(bounds: outputRect, tileSize: output.tileSize).tiles.count, bands: 0,
                filterNanoseconds: filterTime.nanoseconds, encodeNanoseconds: (clock.now - start).nanoseconds))
        } catch {
            return .failed(failure(.encode, error, naming: task))
        }
    }

    /// One output made from `image`'s samples as the streamed path makes an image's
    /// (``ImageTaskRunner/streamed(_:)``): rendered tile by tile from the samples into those the
    /// encoder takes (``BandWriter/layout``), once for all the outputs of one
    /// ``SampleRenderKey`` (`renders`), and encoded in memory (``BandWriter/inMemory(path:width:height:channels:sourceBitDepth:sourceHadAlpha:metadata:options:)``):
    /// the bytes of the `Float32` path. Nil where the output cannot be made so (the image has
    /// alpha, the output is verified by decoding it again, its chain does not stream in it, its
    /// encoder refuses the options, or a thumbnail's samples are not the encoder's):
    /// `make` then makes it from the `Float32` pixels, and reports any failure.
    private func fromSamples(
        _ output: ImageTaskOutput, chain: FilterChain, image: DecodedSamples, outputRect: Rect, task: ImageTask,
        room: inout Int, renders: inout SharedRenders<SampleRenderKey, AnyPixels>
    ) -> ImageOutputResult? {
        let source = image.samples
        let identity = chain.isIdentity(forSource: source.channels)
        let channels = chain.channels(forSource: source.channels)
        let key = SampleRenderKey(output, image)
        // Opaque samples only: each is its Float32 value (v / 255 or v / 65535) and back, exactly;
        // the Float32 pixels of a translucent one hold its colour premultiplied, which the
        // encoder's samples round differently than the file's.
        // A chain that reaches too far in the image to stream (a redaction's box over most of
        // it) would convert most of it for each tile: the `Float32` path converts it once.
        guard source.channels == 3, !output.verifyDecode, identity || chain.streams(in: source.rect), let layout = key.layout,
            !identity || layout == source.layout,
            BandWriter.canWrite(to: output.path, channels: channels, sourceHadAlpha: image.hasAlpha, options: output.encoding),
            let writer = try? BandWriter.inMemory(
                path: output.path, width: outputRect.width, height: outputRect.height, channels: channels,
                sourceBitDepth: image.bitDepth, sourceHadAlpha: image.hasAlpha, metadata: image.metadata,
                options: output.encoding)
        else { return nil }
        let clock = ContinuousClock()
        var start = clock.now
        let shared = renders.render(for: key)
        let pixels: AnyPixels
        if identity {
            pixels = source
        } else if let shared {
            pixels = shared
        } else {
            pixels = AnyPixels.uninitialized(outputRect, layout)
            _ = rendering.submit(
                outputRect, from: source, image: source.rect, into: pixels, chain: chain, tileSize: output.tileSize,
                ticket: RenderTicket(), background: writer.background)  // the in-process rendering does not fail
        }
        renders.done(key, render: identity ? nil : pixels)
        let filterTime = clock.now - start
        start = clock.now
        let bytes: [UInt8]
        do throws(ImageIOError) {
            try writer.append(pixels)
            bytes = try writer.finishEncoded()
        } catch {
            writer.abandon()
            return .failed(failure(.encode, error, naming: task))
        }
        let encodeTime = clock.now - start
        if let tooLarge = take(bytes.count, for: output.path, from: &room) { return .failed(tooLarge) }
        return .encoded(EncodedOutput(
            bytes: bytes, width: outputRect.width, height: outputRect.height,
            bitDepth: writer.layout.format.byteSize == 2 ? 16 : 8, hasAlpha: writer.layout.channels == 4,
            checksum: PixelChecksum.of(pixels, in: outputRect),
            tiles: identity || shared != nil ? 0 : TileGrid(bounds: outputRect, tileSize: output.tileSize).tiles.count,
            bands: 0, filterNanoseconds: filterTime.nanoseconds, encodeNanoseconds: encodeTime.nanoseconds))
    }

    /// Takes `count` encoded bytes of the output to `path` from the `room` left in the answer's
    /// frame; or, when they do not fit, leaves it and gives the output's `tooLarge` failure.
    func take(_ count: Int, for path: String, from room: inout Int) -> ImageOutputFailure? {
        guard count <= room else {
            return ImageOutputFailure(
                kind: .tooLarge, code: nil, path: path, message: "\(count) bytes do not fit the \(room) left in the answer")
        }
        room -= count
        return nil
    }

    /// `error` as the wire carries it, the input named as the job names it (never by the
    /// coordinator's descriptor the worker opened).
    func failure(_ kind: ImageOutputFailure.Kind, _ error: ImageIOError, naming task: ImageTask) -> ImageOutputFailure {
        let path = error.path == task.input.path ? task.input.name : error.path
        return ImageOutputFailure(
            kind: kind, code: "\(error.code)", path: path,
            message: error.message.replacing(task.input.path, with: task.input.name))
    }
}

/// One of a task's decoded images: its samples when the reader kept them
/// (``ImageReader/decodeSamples(_:_:pixelLimit:memoryLimit:confinement:)``), and its `Float32`
/// pixels, made from those the first time an output needs them.
final class DecodedInput {
    let samples: DecodedSamples?
    private var made: DecodedImage?

    init(samples: DecodedSamples) {
        self.samples = samples
    }

    init(floats: DecodedImage) {
        samples = nil
        made = floats
    }

    /// The image's rectangle.
    var rect: Rect { samples?.samples.rect ?? made!.pixels.rect }

    /// The image as premultiplied `Float32`.
    var floats: DecodedImage {
        if let made { return made }
        let floats = samples!.floats
        made = floats
        return floats
    }
}
