import BlurfarmCore
import BlurfarmCoordinator
import BlurfarmKernels
import BlurfarmManifest
import BlurfarmState
import BlurfarmTestSupport
import Foundation
import Testing

/// Planning reads the inputs' kept widths and writes nothing: the plan carries what it read
/// (``JobPlan/inputWidths``), for the run to keep under the job's lock.
@Suite struct InputWidthsPlanningTests {
    @Test func planningWritesNothingAndThePlanCarriesTheWidthsForTheRun() throws {
        let root = try StateFolderTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: "\(root)/in", withIntermediateDirectories: true)
        try LyingFiles.pngBomb(width: 600, height: 400).write(to: URL(fileURLWithPath: "\(root)/in/a.png"))
        let manifest = "\(root)/srcset.job"
        try "job: srcset\ninputs: [in/*.png]\noutputs:\n  - name: w\n    path: out/{stem}-{size}w.webp\n    resize:\n      sizes: [320, 640, 1280]\n"
            .write(toFile: manifest, atomically: true, encoding: .utf8)
        let state = "\(root)/state"
        let loader = JobLoader(configuration: FarmConfiguration(), registry: .builtIn, reads: [], inputWidths: state)

        let plan = try loader.plan(fileAtPath: manifest).get()
        #expect(plan.notEnlarged.count == 2, "640 and 1280 are wider than the 600 px input")
        let folder = JobStateFolder(state: state, jobName: "srcset", manifestPath: manifest).path
        #expect(!FileManager.default.fileExists(atPath: state), "planning made the state folder")

        // What the run does once it holds the lock: the width read from the header is kept.
        let widths = try #require(plan.inputWidths)
        let records = try OutputRecords(folder: folder)
        try widths.save(into: records, forgetting: true)
        let kept = try records.widthsPage(after: nil, limit: 10)
        #expect(kept.map(\.width) == [600] && kept.first?.input.hasSuffix("/in/a.png") == true, "\(kept)")
        // A loader without a state folder plans without kept widths, and carries none.
        let unkept = try JobLoader(configuration: FarmConfiguration(), registry: .builtIn, reads: []).plan(fileAtPath: manifest).get()
        #expect(unkept.inputWidths == nil)
    }
}
