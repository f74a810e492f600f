import BlurfarmCore
import BlurfarmEngine
import BlurfarmKernels
import BlurfarmSharedMemory
import BlurfarmTestSupport
import BlurfarmWire
import Foundation
import Testing

/// A worker process renders every tile of an image, from shared memory or inline pixels; the
/// stitched output is bit-identical to the in-process `Renderer`, and every result's checksum
/// is the checksum of its tile of the output.
@Suite(.tags(.process), .blocking) struct WorkerRenderTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let width: Int, height: Int, channels: Int, tileSize: Int
        let edge: EdgeRule
        let colour: ColourMode
        let filters: [FilterSpec]
        var testDescription: String {
            "\(width)x\(height)x\(channels) tiles \(tileSize) \(edge) \(colour): "
                + filters.map(\.description).joined(separator: " | ")
        }
    }

    static let cases: [Case] = {
        let gaussian = Chains.specs([("gaussian", ["sigma": .number(2.5)])])
        let motion = Chains.specs([("motion", ["radius": .number(6), "angle": .number(30), "samples": .integer(6)])])
        let both = Chains.specs([
            ("gaussian", ["sigma": .number(1.5)]),
            ("motion", ["radius": .number(5), "angle": .number(-120)]),
        ])
        return [
            Case(width: 61, height: 47, channels: 3, tileSize: 16, edge: .clamp, colour: .gamma, filters: gaussian),
            Case(width: 61, height: 47, channels: 4, tileSize: 16, edge: .clamp, colour: .gamma, filters: both),
            Case(width: 53, height: 40, channels: 3, tileSize: 13, edge: .mirror, colour: .linear, filters: motion),
            Case(width: 53, height: 40, channels: 4, tileSize: 20, edge: .transparent, colour: .gamma, filters: both),
            Case(width: 37, height: 29, channels: 3, tileSize: 11, edge: .grow, colour: .gamma, filters: both),
            Case(width: 37, height: 29, channels: 4, tileSize: 9, edge: .grow, colour: .linear, filters: gaussian),
            Case(width: 40, height: 33, channels: 3, tileSize: 7, edge: .transparent, colour: .gamma, filters: motion),
        ]
    }()

    /// The source image, the chain, and the untiled in-process output.
    struct Expected {
        let source: PixelBuffer
        let chain: FilterChain
        let rendered: PixelBuffer
        let tiles: [Rect]

        init(_ c: Case, source: PixelBuffer, seed: UInt64) {
            Pixels.randomize(source, seed: seed)
            self.source = source
            chain = Chains.chain(c.filters, edge: c.edge, colour: c.colour)
            rendered = Renderer(chain: chain, tileSize: 0, executor: ThreadedTileExecutor(threads: 1)).render(source)
            tiles = TileGrid(bounds: chain.outputRect(forImage: source.rect), tileSize: c.tileSize).tiles
        }
    }

    @Test(arguments: cases)
    func sharedSegmentsStitchBitIdentical(_ c: Case) throws {
        let image = Rect(x: 0, y: 0, width: c.width, height: c.height)
        let sourceSegment = try SharedSegment.create(byteCount: image.area * c.channels * 4)
        let expected = Expected(c, source: PixelBuffer(rect: image, storage: sourceSegment.storage, channels: c.channels), seed: 7)
        let outputRect = expected.chain.outputRect(forImage: image)
        let outChannels = expected.chain.channels(forSource: c.channels)
        let outputSegment = try SharedSegment.create(byteCount: outputRect.area * outChannels * 4)
        let output = PixelBuffer(rect: outputRect, storage: outputSegment.storage, channels: outChannels)
        #expect(expected.rendered.rect == outputRect && expected.rendered.channels == outChannels)

        let worker = try WorkerProcessHandle(workerID: 11)
        _ = try worker.handshake()
        for (index, tile) in expected.tiles.enumerated() {
            let region = expected.chain.sourceRegion(for: tile, image: image)
            let source = SharedRegion(
                segment: sourceSegment.id, file: sourceSegment.identity, byteOffset: (region.y * image.width + region.x) * c.channels * 4,
                rect: region, channels: c.channels, rowStride: image.width * c.channels)
            let target = SharedRegion(
                segment: outputSegment.id, file: outputSegment.identity,
                byteOffset: ((tile.y - outputRect.y) * outputRect.width + tile.x - outputRect.x) * outChannels * 4,
                rect: tile, channels: outChannels, rowStride: outputRect.width * outChannels)
            let task = TaskMessage(
                taskID: UInt64(100 + index), imageID: 1, attempt: 1, tile: tile, image: image, filters: c.filters,
                edge: c.edge, colour: c.colour, pixels: .shared(source: source, output: target))
            try worker.send(.task(task))
            let reply = try worker.reader.nextSkippingHeartbeats()
            let result = try #require(reply?.taskResult, "tile \(tile): expected a result, got \(String(describing: reply))")
            #expect(result.taskID == task.taskID && result.output == nil)
            #expect(result.checksum == PixelChecksum.of(output, in: tile), "checksum of tile \(tile)")
            #expect(try worker.reader.nextSkippingHeartbeats() == .ready)
        }
        try worker.send(.shutdown)
        #expect(try worker.waitForExit().status == 0)
        let difference = output.firstDifference(from: expected.rendered)
        #expect(difference == nil, "first differing pixel: \(String(describing: difference))")
        #expect(output.isBitIdentical(to: expected.rendered))
    }

    @Test(arguments: cases)
    func inlinePixelsStitchBitIdentical(_ c: Case) throws {
        let image = Rect(x: 0, y: 0, width: c.width, height: c.height)
        let expected = Expected(c, source: PixelBuffer(rect: image, channels: c.channels), seed: 8)
        let outputRect = expected.chain.outputRect(forImage: image)
        let output = PixelBuffer(rect: outputRect, channels: expected.chain.channels(forSource: c.channels))

        let worker = try WorkerProcessHandle(workerID: 12)
        _ = try worker.handshake()
        for (index, tile) in expected.tiles.enumerated() {
            let region = expected.chain.sourceRegion(for: tile, image: image)
            let task = TaskMessage(
                taskID: UInt64(200 + index), imageID: 2, attempt: 1, tile: tile, image: image, filters: c.filters,
                edge: c.edge, colour: c.colour, pixels: .inline(source: InlinePixels(expected.source.view(region))))
            try worker.send(.task(task))
            let reply = try worker.reader.nextSkippingHeartbeats()
            let result = try #require(reply?.taskResult, "tile \(tile): expected a result, got \(String(describing: reply))")
            let pixels = try #require(result.output, "tile \(tile): a result without pixels: \(result)")
            #expect(result.taskID == task.taskID && pixels.rect == tile && pixels.channels == output.channels)
            output.copy(tile, from: pixels.makeBuffer())
            #expect(result.checksum == PixelChecksum.of(output, in: tile), "checksum of tile \(tile)")
            #expect(try worker.reader.nextSkippingHeartbeats() == .ready)
        }
        try worker.closeInput()
        #expect(try worker.waitForExit().status == 0)
        let difference = output.firstDifference(from: expected.rendered)
        #expect(difference == nil, "first differing pixel: \(String(describing: difference))")
        #expect(output.isBitIdentical(to: expected.rendered))
    }
}
