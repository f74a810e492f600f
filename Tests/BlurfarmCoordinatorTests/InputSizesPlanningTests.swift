import BlurfarmCore
import BlurfarmCoordinator
import BlurfarmKernels
import BlurfarmManifest
import BlurfarmState
import BlurfarmTestSupport
import Foundation
import Testing

/// Planning reads the inputs' kept widths and writes nothing: the plan carries what it read
/// (``JobPlan/inputSizes``), for the run to keep under the job's lock.
@Suite struct InputSizesPlanningTests {
    /// A folder with PNG headers `in/NAME.png` of `images`' sizes and a job `srcset.job` of one
    /// variant with `sizes`; its state folder, and a loader that keeps the sizes there.
    static func job(
        _ images: [String: (Int, Int)], sizes: String
    ) throws -> (root: String, manifest: String, state: String, loader: JobLoader) {
        let root = try StateFolderTests.temporaryFolder()
        try FileManager.default.createDirectory(atPath: "\(root)/in", withIntermediateDirectories: true)
        for (name, (width, height)) in images {
            try LyingFiles.pngBomb(width: width, height: height).write(to: URL(fileURLWithPath: "\(root)/in/\(name).png"))
        }
        let manifest = "\(root)/srcset.job"
        try "job: srcset\ninputs: [in/*.png]\noutputs:\n  - name: w\n    path: out/{stem}-{size}w.webp\n    resize:\n      sizes: \(sizes)\n"
            .write(toFile: manifest, atomically: true, encoding: .utf8)
        let state = "\(root)/state"
        return (root, manifest, state, JobLoader(configuration: FarmConfiguration(), registry: .builtIn, reads: [], inputSizes: state))
    }

    @Test func planningWritesNothingAndThePlanCarriesTheWidthsForTheRun() throws {
        let (root, manifest, state, loader) = try Self.job(["a": (600, 400)], sizes: "[320, 640, 1280]")
        defer { try? FileManager.default.removeItem(atPath: root) }

        let plan = try loader.plan(fileAtPath: manifest).get()
        #expect(plan.inputs.notEnlargedCount == 2, "640 and 1280 are wider than the 600 px input")
        let folder = JobStateFolder(state: state, jobName: "srcset", manifestPath: manifest).path
        #expect(!FileManager.default.fileExists(atPath: state), "planning made the state folder")

        // What the run does once it holds the lock: the width read from the header is kept.
        let widths = try #require(plan.inputSizes)
        let records = try OutputRecords(folder: folder)
        try widths.save(into: records, forgetting: true)
        let kept = try records.sizesPage(after: nil, limit: 10)
        #expect(kept.map(\.width) == [600] && kept.first?.input.hasSuffix("/in/a.png") == true, "\(kept)")
        // A loader without a state folder plans without kept widths, and carries none.
        let unkept = try JobLoader(configuration: FarmConfiguration(), registry: .builtIn, reads: []).plan(fileAtPath: manifest).get()
        #expect(unkept.inputSizes == nil)
    }
    /// A shard's split weighs each input by its size kept in the job's records, reading its
    /// header only where the input changed: the weights are the headers' (every host finds
    /// the same), and a shard's part carries the sizes for its run to keep.
    @Test func aShardsWeightsComeFromTheKeptSizesWhileTheInputsAreUnchanged() throws {
        let (root, manifest, state, loader) = try Self.job(["a": (600, 400), "b": (300, 200)], sizes: "[320, 640]")
        defer { try? FileManager.default.removeItem(atPath: root) }
        func byHeaders(_ plan: JobPlan) -> [Int] {
            plan.inputs.map { JobShards.weight(of: $0, header: try? JobShards.headerSize($0.path)) }
        }

        let plan = try loader.plan(fileAtPath: manifest).get()
        #expect(plan.weights() == byHeaders(plan) && byHeaders(plan).allSatisfy { $0 > 1 })
        let records = try OutputRecords(folder: JobStateFolder(state: state, jobName: "srcset", manifestPath: manifest).path)
        try #require(plan.inputSizes).save(into: records, forgetting: true)
        var planted = try #require(try records.sizesPage(after: nil, limit: 10).first { $0.input.hasSuffix("/in/a.png") })
        (planted.width, planted.height) = (6000, 4000)
        var batches = [[planted]]
        try records.keepSizes { batches.popLast() }

        let believed = try loader.plan(fileAtPath: manifest).get()
        let a = try #require(believed.inputs.firstIndex { $0.path.hasSuffix("a.png") })
        var expected = byHeaders(believed)
        expected[a] = JobShards.weight(of: believed.inputs[a], header: (6000, 4000))
        #expect(believed.weights() == expected, "the kept size was not the one weighed")
        #expect(believed.shard(try #require(JobShard(index: 0, count: 2))).inputSizes != nil)

        try LyingFiles.pngBomb(width: 600, height: 400).write(to: URL(fileURLWithPath: "\(root)/in/a.png"))
        let rewritten = try loader.plan(fileAtPath: manifest).get()
        #expect(rewritten.weights() == byHeaders(rewritten))
    }
}
