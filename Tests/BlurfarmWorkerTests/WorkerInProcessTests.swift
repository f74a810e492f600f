import BlurfarmCore
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

/// The library's `Worker` driven in this process through pipes: the same conversation as the
/// process, and segments of this process mapped again through /proc/self's pid.
@Suite struct WorkerInProcessTests {
    @Test func aSharedTaskOverPipesWritesTheTileAndAnswers() throws {
        var toWorker: [Int32] = [0, 0], fromWorker: [Int32] = [0, 0]
        #expect(pipe(&toWorker) == 0 && pipe(&fromWorker) == 0)
        defer { for fd in toWorker + fromWorker { close(fd) } }

        let image = Rect(x: 0, y: 0, width: 20, height: 12)
        let segment = try SharedSegment.create(byteCount: image.area * 3 * 4 * 2)
        let source = PixelBuffer(rect: image, storage: segment.storage, channels: 3)
        Pixels.randomize(source, seed: 5)
        let output = PixelBuffer(rect: image, storage: segment.storage, offset: image.area * 3, channels: 3)
        let specs = Chains.specs([("gaussian", ["sigma": .number(2)])])
        let tile = Rect(x: 5, y: 3, width: 9, height: 6)

        let worker = Worker(
            workerID: 42, pid: getpid(), output: fromWorker[1],
            runner: TaskRunner(segments: SharedSegmentTable(ownerPID: getpid())))
        let input = toWorker[0]
        let finished = Mutex<WorkerExit?>(nil)
        let thread = Thread { finished.withLock { $0 = worker.run(input: input) } }
        thread.start()

        var reader = FrameReader(fd: fromWorker[0])
        #expect(try reader.next() == .hello(Hello(workerID: 42, pid: getpid())))
        #expect(try reader.next() == .ready)
        let task = TaskMessage(
            taskID: 5, imageID: 1, attempt: 1, tile: tile, image: image, filters: specs, edge: .mirror, colour: .gamma,
            pixels: .shared(
                source: SharedRegion(segment: segment.id, file: segment.identity, byteOffset: 0, rect: image, channels: 3, rowStride: 60),
                output: SharedRegion(
                    segment: segment.id, file: segment.identity, byteOffset: image.area * 12 + (3 * 20 + 5) * 12, rect: tile, channels: 3,
                    rowStride: 60)))
        let frame = try FrameEncoder.encode(.task(task))
        #expect(frame.withUnsafeBytes { write(toWorker[1], $0.baseAddress, $0.count) } == frame.count)
        let result = try #require(try reader.nextSkippingHeartbeats()?.taskResult, "no result")
        #expect(try reader.nextSkippingHeartbeats() == .ready)

        let expected = PixelBuffer(rect: tile, channels: 3)
        try Chains.chain(specs, edge: .mirror).render(tile: tile, source: source, into: expected)
        #expect(output.view(tile).isBitIdentical(to: expected))
        #expect(result.checksum == PixelChecksum.of(expected, in: tile))
        // Outside the tile the output region is untouched (zero).
        #expect(output[4, 3] == SIMD4(0, 0, 0, 1) && output[14, 8] == SIMD4(0, 0, 0, 1))

        let shutdown = try FrameEncoder.encode(.shutdown)
        #expect(shutdown.withUnsafeBytes { write(toWorker[1], $0.baseAddress, $0.count) } == shutdown.count)
        try eventually("the worker loop's end after the shutdown", interval: .milliseconds(5)) { finished.withLock { $0 } != nil }
        #expect(finished.withLock { $0 } == .shutdown)
    }
}
