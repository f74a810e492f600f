import BlurfarmTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `blurfarm run --workers N` on a batch: for an input of the batch's full rounds of N, the outputs of an
/// input that the streamed path cannot make (here a thumbnail and a resized motion blur, one
/// decode) are one task of one worker, which decodes the input, renders their chains and
/// encodes them (docs/pool.md, "Whole images or tiles"); the coordinator writes what
/// it sends back. The bytes are those of the in-process engine, and a worker killed in the
/// middle of an image is replaced and the image tried again, nothing left behind. The stalled
/// worker is ``StallingWorker`` (the `fault` plugin cannot stall an image task: a chain with a
/// plugin never goes to a worker whole).
@Suite(.tags(.process), .blocking) struct WholeImageTests {
    /// Six 1080p photos.
    static let batch = (0..<6).map { "batch1080/b0\($0).jpg" }

    /// A blur (which the streamed path makes), and a thumbnail and a motion blur of the same
    /// 320-pixel decode.
    static func manifest() -> String {
        """
            job: whole
            inputs: [photos/**/*.jpg]
            outputs:
              - name: blur
                path: out/{stem}-blur.jpg
                filters:
                  - gaussian:
                      sigma: 8
              - name: thumb
                path: out/{stem}-thumb.webp
                resize:
                  width: 320
              - name: motion
                path: out/{stem}-motion.png
                resize:
                  width: 320
                filters:
                  - motion:
                      radius: 6
                      angle: 30
                edge: grow

            """
    }

    /// The bands each output's report gives (0 when it was not streamed), by output path.
    static func bands(_ report: URL) throws -> [String: Int] {
        try WorkerPoolTests.reportedOutputs(report).mapValues { $0["bands"] as? Int ?? -1 }
    }

    /// Runs `manifest` over `photos` in process, then with 2 workers under each of `configs`,
    /// and checks that every run writes the in-process engine's `count` files, byte for byte;
    /// `each` sees each run's report.
    static func expectTheInProcessBytes(
        _ manifest: String, photos: [String], count: Int, configs: [String], each: (URL) throws -> Void = { _ in }
    ) throws {
        let folder = try JobCommandTests.makeJob(manifest, photos: photos)
        defer { try? FileManager.default.removeItem(at: folder) }
        let job = folder.appendingPathComponent("job.job").path
        let reference = try Blurfarm.run(["run", job, "--workers", "0", "--quiet"])
        #expect(reference.status == 0, "\(reference.stderr)")
        let expected = try WorkerPoolTests.outputs(folder)
        #expect(expected.count == count)
        try FileManager.default.removeItem(at: folder.appendingPathComponent("out"))
        for config in configs {
            let conf = folder.appendingPathComponent("farm.conf")
            try (config + "\nstate: state\n").write(to: conf, atomically: true, encoding: .utf8)
            let report = folder.appendingPathComponent("pool.json")
            let run = try Blurfarm.run(["run", job, "--config", conf.path, "--workers", "2", "--force", "--report", report.path])
            #expect(run.status == 0, "\(config): \(run.stderr)")
            #expect(run.stdout.contains("whole: \(count) written, 0 failed"), "\(run.stdout)")
            let files = try WorkerPoolTests.outputs(folder)
            #expect(files.keys.sorted() == expected.keys.sorted())
            for (name, data) in expected { #expect(files[name] == data, "\(name) differs from the in-process engine's (\(config))") }
            try each(report)
            try FileManager.default.removeItem(at: folder.appendingPathComponent("out"))
        }
    }

    @Test func aBatchGoesToTheWorkersImageByImageAndWritesTheBytesOfTheInProcessEngine() throws {
        try Self.expectTheInProcessBytes(
            Self.manifest(), photos: Self.batch, count: 18, configs: ["whole-image-pixels: 0", "whole-image-pixels: 2073600"]
        ) { report in
            // The blurs stream band by band either way.
            let blurs = try Self.bands(report).filter { $0.key.hasSuffix("-blur.jpg") }
            #expect(blurs.count == 6 && blurs.values.allSatisfy { $0 > 0 }, "\(blurs)")
        }
    }

    /// Outputs that are all at most half the input's width (thumbnails, a resized blur) go
    /// whole to a worker even for the last inputs, fewer than the workers: their decode is the work, and made here it
    /// would run on one core all the same (after starting libvips in the coordinator). The
    /// bytes are the in-process engine's.
    @Test func resizedOutputsGoWholeToTheLastImageWithTheBytesOfTheInProcessEngine() throws {
        // The manifest's outputs but the full-size blur.
        let lines = Self.manifest().components(separatedBy: "\n")
        let (blur, thumb) = (lines.firstIndex { $0.hasSuffix("name: blur") }!, lines.firstIndex { $0.hasSuffix("name: thumb") }!)
        let manifest = (lines[..<blur] + lines[thumb...]).joined(separator: "\n")
        #expect(!manifest.contains("blur.jpg") && manifest.contains("thumb.webp"))
        try Self.expectTheInProcessBytes(
            manifest, photos: Array(Self.batch.prefix(2)), count: 4, configs: ["whole-image-pixels: 2073600"])
    }

    @Test func aWorkerKilledInTheMiddleOfAnImageIsReplacedAndTheImageTriedAgainWithNothingLeftBehind() throws {
        let stall = try StalledBatch()
        defer { stall.remove() }
        let stalled = try stall.coordinator.waitForMarker(stall.marker)
        #expect(stall.coordinator.children.contains(stalled), "the marker names a worker of this coordinator")
        kill(stalled, SIGKILL)
        let status = stall.coordinator.waitForExit(timeout: 120)
        #expect(status == 0, "\(stall.coordinator.stderr())")
        #expect(!Processes.isAlive(stalled), "the killed worker \(stalled) is gone")

        // The killed task was one image's: its two outputs of one decode were tried again
        // (a tile's retry would count for its own output alone).
        let reported = try WorkerPoolTests.reportedOutputs(stall.report)
        let retried = reported.filter { ($0.value["retries"] as? Int ?? 0) > 0 }
        #expect(retried.count == 2, "the thumbnail and the motion blur, one decode: \(retried.keys.sorted())")
        #expect(retried.values.allSatisfy { $0["retries"] as? Int == 1 && $0["status"] as? String == "written" })
        let stems = Set(retried.keys.map { ($0 as NSString).lastPathComponent.split(separator: "-").first ?? "" })
        #expect(stems.count == 1 && retried.keys.contains { $0.hasSuffix("-thumb.webp") }, "\(retried.keys.sorted())")
        // Nothing left behind: no temporary file beside the outputs.
        let names = try FileManager.default.contentsOfDirectory(atPath: stall.folder.appendingPathComponent("out").path)
        #expect(names.count == 18 && !names.contains { $0.hasPrefix(".") }, "\(names.sorted())")

        let files = try WorkerPoolTests.outputs(stall.folder)
        try FileManager.default.removeItem(at: stall.folder.appendingPathComponent("out"))
        let reference = try WorkerPoolTests.reference(stall.job, stall.folder)
        for (name, data) in reference { #expect(files[name] == data, "\(name) differs from the clean run") }
    }

    /// SIGTERM while a worker holds an image task (stalled on its first attempt): the run
    /// stops at once (143), its workers gone; the stalled image's outputs are reported
    /// `stopped`, none is on disk, no temporary file is left; the next run makes exactly what
    /// is missing, the bytes of a clean run.
    @Test func aStopWhileAWorkerHoldsAnImageReportsItsOutputsStoppedAndTheNextRunFinishesTheJob() throws {
        let stall = try StalledBatch()
        defer { stall.remove() }
        _ = try stall.coordinator.waitForMarker(stall.marker)
        let reported = try WorkerPoolTests.stopAndCheck(stall.coordinator, folder: stall.folder, report: stall.report)
        // Every output written or stopped; those not started counted, not listed.
        let counts = try IncrementalRunTests.Report(path: stall.report.path).counts
        #expect(counts["written"]! + counts["stopped"]! == 18 && reported.count < 18, "\(counts), \(reported.count) listed")
        // The stalled task was one image's thumbnail and motion blur, one decode: both stopped,
        // and listed: they were started.
        let stopped = reported.filter { $0.value["status"] as? String == "stopped" }.keys
        let stalled = stopped.filter { $0.hasSuffix("-thumb.webp") || $0.hasSuffix("-motion.png") }
        let stems = Set(stalled.map { ($0 as NSString).lastPathComponent.split(separator: "-").first ?? "" })
        #expect(stalled.count >= 2 && stems.contains { stem in
            stalled.contains { $0.hasSuffix("\(stem)-thumb.webp") } && stalled.contains { $0.hasSuffix("\(stem)-motion.png") }
        }, "\(stopped.sorted())")
        let failed = reported.filter { $0.value["status"] as? String == "failed" }
        #expect(failed.isEmpty, "\(failed)")

        // The marker is there now, so no worker stalls: the next run makes what is missing.
        let next = try Blurfarm.run(
            ["run", stall.job, "--config", stall.config, "--workers", "2", "--quiet"], environment: stall.worker.environment)
        #expect(next.status == 0, "\(next.stderr)")
        let finished = try WorkerPoolTests.outputs(stall.folder)
        #expect(finished.count == 18)
        try FileManager.default.removeItem(at: stall.folder.appendingPathComponent("out"))
        let reference = try WorkerPoolTests.reference(stall.job, stall.folder)
        for (name, data) in reference { #expect(finished[name] == data, "\(name) differs from a clean run") }
    }
}

/// The batch of ``WholeImageTests`` run by a coordinator with two workers and the image tasks
/// on, its workers ``StallingWorker``s, whose `motion` stalls its first image task: the test
/// waits for `marker`.
private struct StalledBatch {
    let worker = StallingWorker()
    var marker: URL { worker.marker }
    let folder: URL
    let job: String
    let config: String
    let report: URL
    let coordinator: Coordinator

    init() throws {
        folder = try JobCommandTests.makeJob(WholeImageTests.manifest(), photos: WholeImageTests.batch)
        job = folder.appendingPathComponent("job.job").path
        config = try WorkerPoolTests.untimedConfiguration(in: folder, wholeImages: true)
        report = folder.appendingPathComponent("report.json")
        coordinator = try Coordinator(
            ["run", job, "--config", config, "--workers", "2", "--tile", "64", "--report", report.path],
            environment: worker.environment)
    }

    func remove() {
        worker.remove()
        try? FileManager.default.removeItem(at: folder)
    }
}
