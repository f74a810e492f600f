import BlurfarmState
import BlurfarmTestSupport
import Foundation
import Testing

@testable import BlurfarmCoordinator

/// The orphans' rule asks the plan's paths by their hashes and places (``PlannedPaths``), not
/// sets of the paths: what it answers must be what the sets answered, by every path's bytes.
@Suite struct PlannedPathsTests {
    /// A plan of inputs with two variants each, among them two names that are one string to
    /// Swift and two files to the kernel (`é`, and `e` with a combining accent): every planned
    /// output is written and every input read, and any other path (a planned one a byte
    /// longer or shorter, in another folder, of a removed variant, the other spelling of an
    /// accent) neither, as sets of the absolute paths' bytes say.
    @Test func itAnswersWhatSetsOfThePathsAnswer() throws {
        let names = (0..<60).map { "p\($0)" } + ["\u{E9}", "e\u{301}"]
        let (root, plan, _) = try RecipeVersionsTests.plannedJob(
            photos: names,
            """
            job: paths
            inputs: [photos/*.jpg]
            outputs:
              - name: copy
                path: out/{stem}.png
              - name: small
                path: out/small/{stem}.webp

            """)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let folders = RealPath.Folders()
        let paths = PlannedPaths(plan, folders: folders)
        let outputs = plan.inputs.flatMap(\.outputs).map { IncrementalRun.absolute($0.path, using: folders) }
        let inputs = plan.inputs.map { IncrementalRun.absolute($0.path, using: folders) }
        #expect(outputs.count == 2 * names.count && inputs.count == names.count)
        let (writtenSet, readSet) = (Set(outputs.map(RealPath.Identity.Bytes.init)), Set(inputs.map(RealPath.Identity.Bytes.init)))
        var generator = SplitMix(seed: 2026)
        let asked = outputs + inputs
            + outputs.map { $0 + "x" } + outputs.map { String($0.dropLast()) }
            + outputs.map { $0.replacingOccurrences(of: "/out/", with: "/other/") }
            + names.map { "\(root)/job/out/big/\($0).png" }
            + ["\(root)/job/out/\u{E9}.png", "\(root)/job/out/e\u{301}.png", "\(root)/job/out/\u{E9}\u{301}.png"]
        for path in asked.shuffled(using: &generator) {
            let bytes = RealPath.Identity.Bytes(path)
            #expect(paths.writes(path) == writtenSet.contains(bytes), "\(Array(path.utf8))")
            #expect(paths.reads(path) == readSet.contains(bytes), "\(Array(path.utf8))")
            #expect(paths.holds(path) == (writtenSet.contains(bytes) || readSet.contains(bytes)))
        }
        // Both accents' outputs are planned, each its own file.
        #expect(paths.writes("\(root)/job/out/\u{E9}.png") && paths.writes("\(root)/job/out/e\u{301}.png"))
    }

    /// A run's orphans are none, without walking the recorded paths, only when every output
    /// recorded as its check began was found as a planned output's record; with an orphan
    /// among them, or a planned output recorded under an input no longer planned, the paths
    /// are walked, and the answer is the rule's (``IncrementalRun/orphans(in:kept:)``).
    @Test func theOrphansAreNoneWithoutAWalkOnlyWhenEveryRecordIsAPlannedOutputs() throws {
        let (root, plan, records) = try RecipeVersionsTests.plannedJob(
            photos: (0..<12).map { "p\($0)" } + ["\u{E9}", "e\u{301}"],
            "job: orphans\ninputs: [photos/*.jpg]\noutputs:\n  - name: copy\n    path: out/{stem}.png\n  - name: small\n    path: out/small/{stem}.webp\n")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let stamp = FileStamp(size: 1, modified: 1, changed: 2, inode: 3, device: 4)
        func record(_ output: String, _ input: String) -> OutputRecord {
            OutputRecord(
                output: output, input: input, recipe: "r", inputFile: FileFingerprint(stamp: stamp, hash: "a"),
                outputFile: FileFingerprint(stamp: stamp, hash: "b"), written: Date(timeIntervalSince1970: 1))
        }
        for input in plan.inputs {
            for output in input.outputs { try records.add(record(IncrementalRun.absolute(output.path), IncrementalRun.absolute(input.path))) }
        }
        /// The run's orphans, whether it found them without walking, and the rule's.
        func orphans(parts: Int) -> (run: [String], counted: Bool, rule: [String]) {
            let run = IncrementalRun(plan: plan, records: records, versions: { "v" }, pixelLimit: 1 << 30, force: false, parts: parts)
            return (run.orphans().map(\.output), run.recordedBefore == run.recordedPlanned,
                    IncrementalRun.orphans(in: records, kept: run.plannedPaths).map(\.output))
        }
        for parts in [1, 3] {
            #expect(orphans(parts: parts) == ([], true, []))
        }
        // An orphan: found by walking.
        let gone = "\(root)/job/out/gone.png"
        try records.add(record(gone, "\(root)/job/photos/gone.jpg"))
        #expect(orphans(parts: 2) == ([gone], false, [gone]))
        try records.remove(output: gone)
        // A planned output recorded under an input no longer planned: not found by the
        // lookups, so walked; no orphan, its path being planned.
        try records.add(record(IncrementalRun.absolute(plan.inputs[0].outputs[0].path), "\(root)/job/photos/old.jpg"))
        #expect(orphans(parts: 1) == ([], false, []))
        let run = IncrementalRun(plan: plan, records: records, versions: { "v" }, pixelLimit: 1 << 30, force: false, orphansAsked: false)
        #expect(run.recordedBefore == nil && run.orphans().isEmpty)
    }

    /// The first record that matches, as a map refused for an unreadable folder asks it
    /// (``IncrementalRun/firstRecord(page:where:)``): found page by page in the table's order
    /// (by input, then output), on the first page or a later one, and none when none matches.
    @Test func theFirstRecordThatMatchesIsFoundPageByPage() throws {
        let (root, plan, records) = try RecipeVersionsTests.plannedJob(
            photos: ["p"], "job: first\ninputs: [photos/*.jpg]\noutputs:\n  - name: copy\n    path: out/{stem}.png\n")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let stamp = FileStamp(size: 1, modified: 1, changed: 2, inode: 3, device: 4)
        for k in [7, 3, 11, 0, 5, 9, 1] {
            try records.add(OutputRecord(
                output: "/out/\(k)", input: String(format: "/in/%02d", k), recipe: "r", inputFile: FileFingerprint(stamp: stamp, hash: "a"),
                outputFile: FileFingerprint(stamp: stamp, hash: "b"), written: Date(timeIntervalSince1970: 1)))
        }
        let run = IncrementalRun(plan: plan, records: records, versions: { "v" }, pixelLimit: 1 << 30, force: false)
        for page in [1, 2, 3, 100] {
            #expect(run.firstRecord(page: page) { _ in true }?.input == "/in/00")
            #expect(run.firstRecord(page: page) { $0.input >= "/in/04" }?.input == "/in/05")
            #expect(run.firstRecord(page: page) { $0.output == "/out/11" }?.input == "/in/11")
            #expect(run.firstRecord(page: page) { $0.output == "/out/4" } == nil)
        }
    }
}

