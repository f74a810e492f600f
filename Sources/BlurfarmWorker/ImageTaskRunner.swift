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
        let decoded = Result { () throws(ImageIOError) -> [DecodedImage] in
            try ImageReader.decode(task.input, task.decode, pixelLimit: task.pixelLimit, memoryLimit: task.memoryLimit)
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
            // `decoded` is one of the decode's images: the wire refuses any other
            // (ImageTask(from:)), and the reader makes one image per width.
            outputs = task.outputs.map { output in
                make(
                    output, from: images[output.decoded], pixelLimit: task.pixelLimit, task: task, room: &room,
                    renders: &renders)
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

    /// One output rendered and encoded from `image`: rendered once for all the outputs of
    /// one ``RenderKey`` (`renders`), encoded for each.
    private func make(
        _ output: ImageTaskOutput, from image: DecodedImage, pixelLimit: Int, task: ImageTask, room: inout Int,
        renders: inout SharedRenders<RenderKey, PixelBuffer>
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
        if let problem = chain.problem(forImage: image.pixels.rect) { return refused(problem.message) }
        if let problem = chain.regionProblem(forImage: image.pixels.rect) {
            return .failed(ImageOutputFailure(kind: .regions, code: nil, path: output.path, message: problem))
        }
        let outputRect = chain.outputRect(forImage: image.pixels.rect)
        if outputRect.area > pixelLimit {
            return refused(
                "the filters' output would be \(outputRect.width)x\(outputRect.height) pixels, more than the pixel "
                    + "limit of \(pixelLimit)")
        }
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
            guard encoded.bytes.count <= room else {
                return .failed(ImageOutputFailure(
                    kind: .tooLarge, code: nil, path: output.path,
                    message: "\(encoded.bytes.count) bytes do not fit the \(room) left in the answer"))
            }
            room -= encoded.bytes.count
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

    /// `error` as the wire carries it, the input named as the job names it (never by the
    /// coordinator's descriptor the worker opened).
    func failure(_ kind: ImageOutputFailure.Kind, _ error: ImageIOError, naming task: ImageTask) -> ImageOutputFailure {
        let path = error.path == task.input ? task.inputName : error.path
        return ImageOutputFailure(
            kind: kind, code: "\(error.code)", path: path,
            message: error.message.replacing(task.input, with: task.inputName))
    }
}
