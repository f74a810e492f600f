import BlurfarmState
import Foundation
import Testing

@testable import BlurfarmCoordinator

/// An input is fingerprinted as it is first read (``IncrementalRun/willRead(_:)``), not when
/// the job is checked: its outputs are recorded with the bytes as they were before any read of
/// this run, and the run holds the fingerprints of the inputs in flight only (hashed at the
/// check, a first run of 100,000 inputs held 300,000 of them, 94 MB).
@Suite struct InputFingerprintTests {
    static let manifest =
        "job: fingerprints\ninputs: [photos/*.jpg]\noutputs:\n  - name: a\n    path: out/{stem}-a.png\n  - name: b\n    path: out/{stem}-b.png\n"

    @Test func anInputIsRecordedAsItWasFirstReadAndForgottenOnceItsOutputsAreRecorded() throws {
        let (root, plan, records) = try RecipeVersionsTests.plannedJob(photos: ["p", "q"], Self.manifest)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let run = IncrementalRun(plan: plan, records: records, versions: { "v" }, pixelLimit: 1 << 20, force: false)
        #expect(run.reading.withLock { $0.isEmpty }, "the check hashes nothing for the work")
        let input = run.plan.inputs[0]
        let firstRead = try FileFingerprint.take(input.path)
        run.willRead(input)
        // Changed after its first read (a search), before its second (the decode): the
        // record claims the bytes first read, so the next run makes it again.
        try Data("changed meanwhile".utf8).write(to: URL(fileURLWithPath: input.path))
        run.willRead(input)
        #expect(run.reading.withLock { $0.count } == 2, "one entry for each output of the input read")
        for output in input.outputs {
            _ = FileManager.default.createFile(atPath: output.path, contents: Data("made".utf8))
            try run.recordWritten(OutputReport(input: input.relativePath, output: output.path, variant: "a", status: .written))
            #expect(records.record(for: run.absolute(output.path))?.inputFile.hash == firstRead.hash)
        }
        #expect(run.reading.withLock { $0.isEmpty }, "forgotten once its outputs are recorded")
        let again = IncrementalRun(plan: plan, records: records, versions: { "v" }, pixelLimit: 1 << 20, force: false)
        #expect(again.plan.inputs.map(\.path).contains(input.path), "its bytes changed since they were recorded")
    }

    @Test func anOutputOfAnInputNeverReadIsNotRecorded() throws {
        let (root, plan, records) = try RecipeVersionsTests.plannedJob(photos: ["p"], Self.manifest)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let run = IncrementalRun(plan: plan, records: records, versions: { "v" }, pixelLimit: 1 << 20, force: false)
        let output = run.plan.inputs[0].outputs[0]
        _ = FileManager.default.createFile(atPath: output.path, contents: Data("made".utf8))
        try run.recordWritten(OutputReport(input: "photos/p.jpg", output: output.path, variant: "a", status: .written))
        #expect(records.record(for: run.absolute(output.path)) == nil)
    }

    @Test func readersOfOneInputAtOnceShareOneFingerprint() throws {
        let (root, plan, records) = try RecipeVersionsTests.plannedJob(photos: ["p"], Self.manifest)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let run = IncrementalRun(plan: plan, records: records, versions: { "v" }, pixelLimit: 1 << 20, force: false)
        let input = run.plan.inputs[0]
        DispatchQueue.concurrentPerform(iterations: 8) { _ in run.willRead(input) }
        let entries = run.reading.withLock { Array($0.values) }
        #expect(entries.count == 2 && entries.allSatisfy { $0 === entries[0] })
    }
}
