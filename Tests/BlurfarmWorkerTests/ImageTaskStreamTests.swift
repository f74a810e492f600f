import BlurfarmCore
import BlurfarmEngine
import BlurfarmImageIO
import BlurfarmSharedMemory
import BlurfarmTestSupport
import BlurfarmWire
import BlurfarmWorker
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A whole-image task whose outputs can be streamed is made band by band in the worker
/// (decoded, filtered and encoded in memory as it is read: `ImageTaskRunner+Streamed`), and
/// its bytes and checksums are those of the whole-image path: the input decoded whole,
/// rendered and encoded by the same calls the coordinator makes. What cannot stream (an output
/// verified by decoding it, an image to turn upright) is decoded whole, with the same bytes.
@Suite struct ImageTaskStreamTests {
    static let blur = Chains.specs([("gaussian", ["sigma": .number(3)])])
    static let motion = Chains.specs([("motion", ["radius": .number(5), "angle": .number(20)])])

    static func output(_ path: String, _ filters: [FilterSpec], quality: Int = 90, verify: Bool = false) -> ImageTaskOutput {
        ImageTaskOutput(
            path: path, decoded: 0, filters: filters, edge: .mirror, colour: .gamma, regions: RegionMask(), tileSize: 96,
            encoding: EncodeOptions(quality: quality), verifyDecode: verify)
    }

    /// The worker's answer to `outputs` of `input`, one task through the `Worker` loop over pipes.
    static func answer(
        _ input: String, _ outputs: [ImageTaskOutput], inputName: String? = nil, decode: DecodeRequest = .whole
    ) throws -> ImageResult {
        var toWorker: [Int32] = [0, 0], fromWorker: [Int32] = [0, 0]
        #expect(pipe(&toWorker) == 0 && pipe(&fromWorker) == 0)
        defer { for fd in toWorker + fromWorker { close(fd) } }
        let worker = Worker(
            workerID: 1, pid: getpid(), output: fromWorker[1], runner: TaskRunner(segments: SharedSegmentTable(ownerPID: getpid())))
        let finished = Mutex<WorkerExit?>(nil)
        let loop = toWorker[0]
        let thread = Thread { finished.withLock { $0 = worker.run(input: loop) } }
        thread.start()
        var reader = FrameReader(fd: fromWorker[0])
        _ = try reader.next()  // hello
        _ = try reader.next()  // ready
        let task = ImageTask(
            taskID: 9, imageID: 1, attempt: 1,
            input: TaskInput(path: input, name: inputName ?? input, pixelLimit: 100_000_000, memoryLimit: 1 << 30),
            decode: decode, outputs: outputs)
        func send(_ message: WireMessage) throws {
            let frame = try FrameEncoder.encode(message)
            #expect(frame.withUnsafeBytes { write(toWorker[1], $0.baseAddress, $0.count) } == frame.count)
        }
        try send(.imageTask(task))
        let result = try #require(try reader.nextSkippingHeartbeats()?.imageResult, "no image result")
        try send(.shutdown)
        try eventually("the worker loop's end after the shutdown", interval: .milliseconds(5)) { finished.withLock { $0 } != nil }
        return result
    }

    /// `output` of `input` made by the whole-image path: its bytes and checksum.
    static func wholeImage(_ input: String, _ output: ImageTaskOutput) throws -> (bytes: [UInt8], checksum: UInt64) {
        let image = try ImageReader.read(input)
        let chain = Chains.chain(output.filters, edge: output.edge)
        let pixels = try InProcessRendering(executor: ThreadedTileExecutor(threads: 1)).render(
            image.pixels, sourceBitDepth: image.bitDepth, outputBitDepth: nil, chain: chain, tileSize: output.tileSize,
            ticket: RenderTicket()
        ).pixels
        let encoded = try ImageWriter.encode(
            pixels, for: output.path, sourceBitDepth: image.bitDepth, sourceHadAlpha: image.hasAlpha,
            metadata: image.metadata, options: output.encoding, checkingFolder: false)
        return (encoded.bytes, encoded.checksum)
    }

    static func encoded(_ result: ImageOutputResult) -> EncodedOutput? {
        if case .encoded(let encoded) = result { encoded } else { nil }
    }

    @Test func streamableOutputsAreMadeBandByBandInTheWorkerWithTheWholeImagePathsBytes() throws {
        let input = Corpus.path("batch1080/b03.jpg")
        // Two formats of one blur (one render, two encodes) and a motion blur: one decode.
        let outputs = [
            Self.output("out/a.jpg", Self.blur), Self.output("out/a.png", Self.blur), Self.output("out/m.jpg", Self.motion, quality: 80),
        ]
        let result = try Self.answer(input, outputs)
        #expect(result.taskID == 9 && result.outputs.count == 3)
        for (output, outcome) in zip(outputs, result.outputs) {
            let made = try #require(Self.encoded(outcome), "\(output.path): \(outcome)")
            #expect(made.bands > 1, "\(output.path) was streamed")
            #expect((made.width, made.height) == (1920, 1080))
            let expected = try Self.wholeImage(input, output)
            #expect(made.bytes == expected.bytes, "\(output.path): the whole-image path's bytes")
            #expect(made.checksum == expected.checksum, "\(output.path): the whole-image path's checksum")
        }
        // The second format of the blur renders nothing of its own.
        #expect(Self.encoded(result.outputs[0])!.tiles > 0 && Self.encoded(result.outputs[1])!.tiles == 0)
    }

    @Test func whatCannotStreamIsDecodedWholeWithTheSameBytes() throws {
        let photo = Corpus.path("batch1080/b04.jpg")
        let upright = Corpus.path("special/exif-orientation-6.jpg")
        for (input, outputs) in [
            (photo, [Self.output("out/v.jpg", Self.blur, verify: true)]),
            (upright, [Self.output("out/u.jpg", Self.blur)]),
        ] {
            let result = try Self.answer(input, outputs)
            let made = try #require(Self.encoded(result.outputs[0]), "\(result.outputs[0])")
            #expect(made.bands == 0, "\(input) was decoded whole")
            #expect(made.bytes == (try Self.wholeImage(input, outputs[0])).bytes)
        }
    }

    /// A thumbnail's outputs, made in the worker from its samples at the file's depth
    /// (`ImageTaskRunner.fromSamples`) where they can be and from `Float32` pixels otherwise,
    /// have the bytes and checksums of the `Float32` path in process, output by output: a
    /// format conversion alone; one blur under `transparent` (4 channels) to JPEG over two
    /// backgrounds (the same pixels, not the same samples: each its own render); the same to
    /// PNG (alpha known only at the end: `Float32`); a blur verified by decoding it (`Float32`)
    /// beside the same blur not verified (samples), the two sharing a render key.
    @Test func aThumbnailsOutputsFromItsSamplesHaveTheBytesOfTheFloatPath() throws {
        let input = Corpus.path("photos/mate-Aqua.jpg")
        let decode = DecodeRequest.thumbnails(widths: [160, 320], upscale: false, sharpen: nil)
        func output(
            _ path: String, _ decoded: Int, _ filters: [FilterSpec], edge: EdgeRule = .mirror,
            background: SIMD3<Float> = SIMD3(1, 1, 1), verify: Bool = false
        ) -> ImageTaskOutput {
            ImageTaskOutput(
                path: path, decoded: decoded, filters: filters, edge: edge, colour: .gamma, regions: RegionMask(),
                tileSize: 96, encoding: EncodeOptions(quality: 85, background: background), verifyDecode: verify)
        }
        let outputs = [
            output("out/plain.jpg", 1, []),
            output("out/black.jpg", 1, Self.blur, edge: .transparent, background: SIMD3(0, 0, 0)),
            output("out/white.jpg", 1, Self.blur, edge: .transparent),
            output("out/alpha.png", 1, Self.blur, edge: .transparent),
            output("out/checked.jpg", 0, Self.blur, verify: true),
            output("out/unchecked.jpg", 0, Self.blur),
        ]
        let result = try Self.answer(input, outputs, decode: decode)
        let images = try ImageReader.decode(input, decode)
        for (output, made) in zip(outputs, result.outputs) {
            let encoded = try #require(Self.encoded(made), "\(output.path): \(made)")
            let image = images[output.decoded]
            let chain = Chains.chain(output.filters, edge: output.edge)
            let pixels = try InProcessRendering(executor: ThreadedTileExecutor(threads: 1)).render(
                image.pixels, sourceBitDepth: image.bitDepth, outputBitDepth: nil, chain: chain,
                tileSize: output.tileSize, ticket: RenderTicket()
            ).pixels
            let expected = try ImageWriter.encode(
                pixels, for: output.path, sourceBitDepth: image.bitDepth, sourceHadAlpha: image.hasAlpha,
                metadata: image.metadata, options: output.encoding, checkingFolder: false)
            #expect(encoded.bytes == expected.bytes, "\(output.path)")
            #expect(encoded.checksum == expected.checksum, "\(output.path)")
            #expect(encoded.hasAlpha == expected.hasAlpha && encoded.bitDepth == expected.bitDepth, "\(output.path)")
        }
        let black = try #require(Self.encoded(result.outputs[1])), white = try #require(Self.encoded(result.outputs[2]))
        #expect(black.bytes != white.bytes, "the backgrounds show at the transparent edge")
    }

    /// A JPEG cut in the middle of its data (its end marker put back, so that it opens and
    /// fails only as its rows are read): the output's failure is the decode's, naming the
    /// input as the job names it, not the worker's path.
    @Test func aDecodeThatFailsIsTheOutputsFailureNamingTheInput() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("blurfarm-cut-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let cut = folder.appendingPathComponent("cut.jpg").path
        try LyingFiles.truncatedWithEndMarker(Corpus.path("batch1080/b04.jpg"), keeping: 0.5).write(to: URL(fileURLWithPath: cut))
        let result = try Self.answer(cut, [Self.output("out/t.jpg", Self.blur)], inputName: "in/cut.jpg")
        guard case .failed(let failure) = try #require(result.outputs.first) else {
            Issue.record("a cut JPEG was encoded")
            return
        }
        #expect(failure.kind == .decode)
        #expect(failure.path == "in/cut.jpg", "\(failure)")
        #expect(!failure.message.contains(cut), "\(failure)")
    }
}
