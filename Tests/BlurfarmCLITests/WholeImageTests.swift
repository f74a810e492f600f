import BlurfarmTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `blurfarm run --workers N` on a batch: while at least N inputs wait, an input is one task
/// of one worker, which decodes it, renders every output's chain and encodes every output
/// (docs/architecture.md, "Whole images or tiles"); the coordinator writes what it sends
/// back. The bytes are those of the in-process engine and of the streamed path, and a worker
/// killed in the middle of an image is replaced and the image tried again, nothing left
/// behind.
@Suite struct WholeImageTests {
    /// Six 1080p photos.
    static let batch = (0..<6).map { "batch1080/b0\($0).jpg" }

    /// A blur (which the streamed path can make), a thumbnail and a motion blur of each input;
    /// `fault` is put after the blur's gaussian.
    static func manifest(fault: KeyValuePairs<String, String>? = nil) -> String {
        let faultStage = fault.map { arguments in
            "\n      - fault:" + arguments.map { "\n          \($0.key): \($0.value)" }.joined()
        } ?? ""
        return """
            job: whole
            inputs: [photos/**/*.jpg]
            outputs:
              - name: blur
                path: out/{stem}-blur.jpg
                filters:
                  - gaussian:
                      sigma: 8\(faultStage)
              - name: thumb
                path: out/{stem}-thumb.webp
                resize:
                  width: 320
              - name: motion
                path: out/{stem}-motion.png
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

    @Test func aBatchGoesToTheWorkersImageByImageAndWritesTheBytesOfTheStreamedPath() throws {
        let folder = try JobCommandTests.makeJob(Self.manifest(), photos: Self.batch)
        defer { try? FileManager.default.removeItem(at: folder) }
        let job = folder.appendingPathComponent("job.job").path

        // In process: the blurs stream band by band.
        let inProcess = folder.appendingPathComponent("in-process.json")
        let reference = try Blurfarm.run(["run", job, "--workers", "0", "--report", inProcess.path, "--quiet"])
        #expect(reference.status == 0, "\(reference.stderr)")
        let expected = try WorkerPoolTests.outputs(folder)
        #expect(expected.count == 18)
        let streamed = try Self.bands(inProcess).filter { $0.key.hasSuffix("-blur.jpg") }
        #expect(streamed.count == 6 && streamed.values.allSatisfy { $0 > 0 }, "\(streamed)")
        try FileManager.default.removeItem(at: folder.appendingPathComponent("out"))

        // Two workers: the first five inputs (two or more waiting) are whole-image tasks,
        // whose blurs are not streamed; the last, alone, streams across both workers.
        let pooled = folder.appendingPathComponent("pool.json")
        let run = try Blurfarm.run(["run", job, "--workers", "2", "--report", pooled.path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("whole: 18 written, 0 failed"), "\(run.stdout)")
        let files = try WorkerPoolTests.outputs(folder)
        #expect(files.keys.sorted() == expected.keys.sorted())
        for (name, data) in expected { #expect(files[name] == data, "\(name) differs from the in-process engine's") }
        let blurs = try Self.bands(pooled).filter { $0.key.hasSuffix("-blur.jpg") }
        #expect(blurs.values.filter { $0 == 0 }.count == 5 && blurs.values.filter { $0 > 0 }.count == 1, "\(blurs)")
    }

    @Test func aWorkerKilledInTheMiddleOfAnImageIsReplacedAndTheImageTriedAgainWithNothingLeftBehind() throws {
        let marker = FileManager.default.temporaryDirectory.appendingPathComponent("stall-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: marker) }
        let folder = try JobCommandTests.makeJob(
            Self.manifest(fault: WorkerPoolTests.stall(marker)), photos: Self.batch)
        defer { try? FileManager.default.removeItem(at: folder) }
        let job = folder.appendingPathComponent("job.job").path
        let config = try WorkerPoolTests.untimedConfiguration(in: folder, wholeImages: true)
        let report = folder.appendingPathComponent("report.json")

        let coordinator = try Coordinator(
            ["run", job, "--config", config, "--workers", "2", "--tile", "64", "--report", report.path],
            environment: Blurfarm.faultInjection)
        let stalled = try coordinator.waitForMarker(marker)
        #expect(coordinator.children.contains(stalled), "the marker names a worker of this coordinator")
        kill(stalled, SIGKILL)
        let status = coordinator.waitForExit(timeout: 120)
        #expect(status == 0, "\(coordinator.stderr())")
        #expect(!Processes.isAlive(stalled), "the killed worker \(stalled) is gone")

        // The killed image was a whole-image task (its blur not streamed), tried once more.
        let reported = try WorkerPoolTests.reportedOutputs(report)
        let retried = reported.filter { ($0.value["retries"] as? Int ?? 0) > 0 }
        #expect(retried.count == 2, "the blur and the motion blur, one decode: \(retried.keys.sorted())")
        #expect(retried.values.allSatisfy { $0["retries"] as? Int == 1 && $0["status"] as? String == "written" })
        let retriedBlur = try #require(retried.first { $0.key.hasSuffix("-blur.jpg") })
        #expect(retriedBlur.value["bands"] as? Int == 0)
        // Nothing left behind: no temporary file beside the outputs.
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("out").path)
        #expect(names.count == 18 && !names.contains { $0.hasPrefix(".") }, "\(names.sorted())")

        let files = try WorkerPoolTests.outputs(folder)
        try FileManager.default.removeItem(at: folder.appendingPathComponent("out"))
        let reference = try WorkerPoolTests.reference(job, folder, environment: Blurfarm.faultInjection)
        for (name, data) in reference { #expect(files[name] == data, "\(name) differs from the clean run") }
    }
}
