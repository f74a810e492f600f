import BlurfarmBench
import BlurfarmTestSupport
import Foundation
import Testing

/// The benchmarks beside the linked libvips, OpenCV and Debian's vips command, at a tiny size.
@Suite struct BaselineBenchTests {
    @Test func theEngineBenchHasAGaussianRowPerBandCountAndTheMotionRows() throws {
        let rows = try EngineBench(
            image: Corpus.path("photos/mate-GreenMeadow.jpg"), runs: 1, sigmas: [2], includeFloat: false
        ).run()
        #expect(rows.map(\.filter) == ["gaussian sigma=2", "gaussian sigma=2", "motion radius=20 angle=30", "motion radius=20 angle=30"])
        #expect(rows.map(\.bands) == [3, 4, 3, 4])
        for row in rows {
            #expect(row.blurfarmSeconds > 0 && row.libvipsSeconds > 0)
            #expect(abs(row.ratio - row.libvipsSeconds / row.blurfarmSeconds) < 1e-9)
        }
    }

    @Test func theFileDepthBenchHasARowPerBandCount() throws {
        let result = try FileDepthBench(
            image: Corpus.path("photos/mate-GreenMeadow.jpg"), runs: 1, sigmas: [2], locations: try requireLocations(),
            includeOpenCV: false
        ).run()
        #expect(result.rows.map(\.bands) == [3, 4])
        for row in result.rows {
            #expect(row.blurfarmSeconds > 0 && row.libvipsSeconds > 0 && row.opencvSeconds == nil)
            #expect(abs(row.libvipsRatio - row.libvipsSeconds / row.blurfarmSeconds) < 1e-9)
        }
    }

    @Test func theManifestBenchParsesTheGeneratedManifest() {
        let result = ManifestBench(bytes: 20_000, runs: 1).run()
        #expect(result.bytes >= 20_000 / 2)
        #expect(result.parseSeconds > 0 && result.decodeSeconds >= 0)
    }

    /// The row of `blurfarm run`: the coordinator's and a worker's resident peaks and the peak of
    /// their proportional set sizes together, each above zero; together they hold no more than
    /// the two peaks added (a page shared by both counts once in the proportional sum, twice in
    /// the two resident sizes).
    @Test(.tags(.process)) func theFarmRowHasTheCoordinatorTheWorkerAndTheirProportionalPeakTogether() throws {
        let result = try FarmBench(
            paths: [Corpus.path("special/bench-3840x2160.jpg")], workers: [1], runs: 1, vips: false,
            executable: BenchFixture.executable
        ).run()
        let row = try #require(result.rows.first)
        #expect(result.rows.count == 1 && row.command == "blurfarm run --workers 1")
        let coordinator = try #require(row.coordinatorPeak), worker = try #require(row.workerPeak)
        let together = try #require(row.togetherPeak)
        #expect(coordinator > 0 && worker > 0 && together > 0)
        #expect(together <= coordinator + worker + 1_000_000, "\(together) bytes together, \(coordinator) + \(worker) apart")
        #expect(row.seconds > 0 && (row.rerunSeconds ?? 0) > 0 && row.ratio == nil)
    }

    /// The scale benchmark at a tiny size: its library made once (each photo its own bytes, in
    /// 20 folders), the first run writing three outputs an input beside the libvips lanes making
    /// as many, a no-change run, `find`, a run making one output again.
    @Test(.tags(.process)) func theScaleRowHasTheFirstAndTheNoChangeRunBesideFind() throws {
        let locations = try requireLocations()
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("blurfarm-scale-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: cache) }
        let bench = ScaleBench(
            locations: BenchLocations(
                scripts: locations.scripts, corpus: locations.corpus, python: locations.python,
                opencvPython: locations.opencvPython, cache: cache),
            sizes: [30], runs: 1, executable: BenchFixture.executable)
        let rows = try bench.run()
        let row = try #require(rows.first)
        #expect(rows.count == 1 && row.inputs == 30 && row.outputs == 90)
        #expect(row.firstSeconds > 0 && row.noChangeSeconds > 0 && row.findSeconds > 0 && row.oneMadeSeconds > 0)
        #expect(row.firstPeak > 0 && row.noChangePeak > 0)
        #expect(row.libvipsSeconds > 0 && row.libvips.hasPrefix("libvips 8.18"))
        let pictures = try FileManager.default.subpathsOfDirectory(atPath: cache + "/scale-30").filter { $0.hasSuffix(".png") }
        #expect(pictures.count == 30 && Set(pictures.map { ($0 as NSString).deletingLastPathComponent }).count == 20)
        let bytes = Set(try pictures.map { try Data(contentsOf: URL(fileURLWithPath: cache + "/scale-30/" + $0)) })
        #expect(bytes.count == 30, "two generated photos are the same")
        let text = bench.text(rows, version: "test")
        #expect(text.contains("no-change / find") && text.contains("one made s") && text.contains("first / libvips"))
    }
}
