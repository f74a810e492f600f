@testable import BlurfarmCommandSupport
import BlurfarmCore
import BlurfarmFarm
import Testing

/// What `apply --verbose` says of an image (BlurfarmCommandSupport's `SingleImage.Summary.text`), by value.
@Suite struct SingleImageSummaryTests {
    static let gaussian = FilterSpec(name: "gaussian", arguments: ["sigma": .number(8)])

    @Test func aStreamedImageSaysItsBandsAndTheWholeTime() {
        let summary = SingleImage.Summary(
            width: 640, height: 480, tiles: 4, engine: "2 threads", bands: (2, 256), total: .milliseconds(12))
        #expect(
            summary.text(output: "out.jpg", filters: [Self.gaussian], edge: .clamp, colour: .gamma)
                == "out.jpg: 640x480, gaussian sigma=8, edge clamp, colour gamma, 4 tiles on 2 threads, "
                + "streamed in 2 bands of 256 rows; decode, filter and encode 12 ms")
    }

    @Test func anImageNotFilteredSaysDecodeAndEncode() {
        let summary = SingleImage.Summary(
            width: 10, height: 20, tiles: 0, engine: "", bands: nil, decode: .milliseconds(3), encode: .milliseconds(5))
        #expect(summary.text(output: "o.png", filters: [], edge: .clamp, colour: .gamma) == "o.png: 10x20, no filter; decode 3 ms, encode 5 ms")
    }

    @Test func aWholeImageSaysEachStep() {
        let summary = SingleImage.Summary(
            width: 10, height: 20, tiles: 1, engine: "1 thread", bands: nil, decode: .milliseconds(3), filter: .milliseconds(4),
            encode: .milliseconds(5))
        #expect(
            summary.text(output: "o.png", filters: [Self.gaussian], edge: .mirror, colour: .linear)
                == "o.png: 10x20, gaussian sigma=8, edge mirror, colour linear, 1 tile on 1 thread; decode 3 ms, filter 4 ms, encode 5 ms")
    }
}
