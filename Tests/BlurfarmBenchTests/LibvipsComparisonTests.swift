import BlurfarmBench
import BlurfarmTestSupport
import Foundation
import Testing

/// Each figure beside libvips 8.18 at a tiny size and one run: the typed rows hold times that
/// are there, ratios that are blurfarm / baseline, and the libvips the venv loads. Never a
/// timed assertion: the values are checked for sense, not speed.
@Suite(
    .enabled(if: BenchFixture.hasVenv, "no .venv-bench with libvips 8.18: run scripts/setup.sh"), .serialized, .tags(.process))
struct LibvipsComparisonTests {
    /// A row's times are positive, its ratio is blurfarm / baseline, its runs are the runs made.
    func expectSane(_ row: Comparison, runs: Int = 1, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(row.blurfarmSeconds > 0 && row.baselineSeconds > 0, "\(row)", sourceLocation: sourceLocation)
        #expect(abs(row.ratio - row.blurfarmSeconds / row.baselineSeconds) < 1e-9, "\(row)", sourceLocation: sourceLocation)
        #expect(row.blurfarmRuns.count == runs, "\(row)", sourceLocation: sourceLocation)
        #expect(row.blurfarmRuns.allSatisfy { $0 > 0 }, "\(row)", sourceLocation: sourceLocation)
    }

    @Test func theLanesLoadLibvips818() throws {
        let version = try BenchFixture.comparison().libvipsVersion()
        #expect(version.hasPrefix("8.18."), "\(version)")
    }

    @Test func theBatchHasItsLibvipsCodecFloorAndCronRowsPerSigma() throws {
        let rows = try BenchFixture.comparison().batch()
        #expect(rows.map(\.figure) == [.batch, .codecFloor, .cron])
        for row in rows { expectSane(row) }
        let batch = try #require(rows.first)
        #expect(batch.label == "sigma 8, 2 images")
        #expect(batch.baseline.contains("libvips 8.18") && batch.baseline.contains("2 processes"), "\(batch.baseline)")
        // The cron row compares the rerun with the very first run the batch row reports.
        #expect(rows[2].baselineRuns == batch.blurfarmRuns)
    }

    @Test func theOneImageRunsAtTwoThreadsAndAtOne() throws {
        let rows = try BenchFixture.comparison().image()
        #expect(rows.map(\.figure) == [.image, .imageOneThread])
        for row in rows { expectSane(row) }
        #expect(rows[0].baseline.hasSuffix("concurrency 2") && rows[1].baseline.hasSuffix("concurrency 1"))
    }

    @Test func theServedImageIsSubmittedToAWarmServiceAtEachSigmaByTheCommandAndByAClientThatStays() async throws {
        var settings = BenchFixture.tiny
        settings.sigmas = [2, 8]
        let chosen = settings
        // On a thread of its own, as a command's `run` is: its client that stays is awaited
        // on the calling thread, which must not be the concurrency pool's.
        let rows = try await withCheckedThrowingContinuation { (done: CheckedContinuation<[Comparison], any Error>) in
            Thread { done.resume(with: Result { try BenchFixture.comparison(chosen).serve() }) }.start()
        }
        #expect(rows.map(\.figure) == [.serve, .serve, .serveWarmClient, .serveWarmClient])
        #expect(rows.map(\.label) == ["sigma 2", "sigma 8", "sigma 2", "sigma 8"])
        for row in rows { expectSane(row) }
        // Both ways are timed beside the same libvips runs, alternating.
        #expect(rows[0].baselineRuns == rows[2].baselineRuns && rows[1].baselineRuns == rows[3].baselineRuns)
    }

    @Test func theBigImageIsGeneratedOnceAndBothPeaksAreMeasured() throws {
        let bench = try BenchFixture.comparison()
        let rows = try bench.big()
        let row = try #require(rows.first)
        expectSane(row)
        #expect(row.label.hasPrefix("1500x1100"))
        #expect((row.blurfarmPeakBytes ?? 0) > 0 && (row.baselinePeakBytes ?? 0) > 0, "\(row)")
        let cached = try requireLocations().cache + "/big-1500x1100.jpg"
        #expect(FileManager.default.fileExists(atPath: cached))
    }

    @Test func theWebJobMakesTheSameOutputsOnBothSides() throws {
        let rows = try BenchFixture.comparison().web()
        let row = try #require(rows.first)
        expectSane(row)
        #expect(row.figure == .web && row.label.hasPrefix("2 photos"))
        #expect((row.blurfarmPeakBytes ?? 0) > 0)
        #expect(row.baseline.contains("thumbnail"))
    }

    @Test func theKernelsHaveARowPerBandCountAndSigma() throws {
        var settings = BenchFixture.tiny
        settings.includeOpenCV = false
        let rows = try BenchFixture.comparison(settings).kernels()
        #expect(rows.map(\.label) == ["RGB sigma 2, 1280x1024", "RGBA sigma 2, 1280x1024"])
        for row in rows {
            expectSane(row)
            #expect(row.figure == .kernel && row.baseline.contains("gaussblur"))
        }
    }

    @Test func threeRunsAlternateAndTheMedianIsTheMiddleOne() throws {
        var settings = BenchFixture.tiny
        settings.runs = 3
        settings.includeOpenCV = false
        let rows = try BenchFixture.comparison(settings).kernels()
        for row in rows {
            expectSane(row, runs: 3)
            #expect(row.baselineRuns.count == 3)
            #expect(row.blurfarmSeconds == row.blurfarmRuns.sorted()[1])
            #expect(row.baselineSeconds == row.baselineRuns.sorted()[1])
        }
    }
}

/// What the benchmarks say when something they need is missing.
@Suite struct BenchLookupTests {
    @Test func theLookupFindsTheScriptsAndTheCorpusFromTheExecutable() throws {
        let locations = try BenchLocations.find(executable: BenchFixture.executable)
        #expect(FileManager.default.fileExists(atPath: locations.scripts + "/vips818-bench.py"))
        #expect(FileManager.default.fileExists(atPath: locations.corpus + "/batch1080"))
        #expect(locations.python.hasSuffix(".venv-bench/bin/python"))
    }

    @Test(.tags(.process)) func aMissingVenvIsAnErrorThatSaysToRunSetup() throws {
        let scripts = try requireLocations().scripts
        #expect {
            _ = try VipsLane(python: "/nonexistent/bin/python", script: scripts + "/vips818-bench.py")
        } throws: { error in
            (error as? BenchError)?.message.contains("scripts/setup.sh") == true
        }
    }

    @Test func aMissingCorpusFileIsAnErrorNamingIt() throws {
        var locations = try requireLocations()
        locations.corpus = "/nonexistent/corpus"
        let bench = LibvipsComparison(executable: BenchFixture.executable, locations: locations, settings: BenchFixture.tiny)
        #expect {
            _ = try bench.batch()
        } throws: { error in
            (error as? BenchError)?.message.contains("/nonexistent/corpus/batch1080") == true
        }
    }
}
