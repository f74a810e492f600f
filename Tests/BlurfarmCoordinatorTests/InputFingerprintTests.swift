import BlurfarmKernels
import BlurfarmManifest
import BlurfarmState
import Foundation
import Synchronization
import Testing

@testable import BlurfarmCoordinator

/// An input is fingerprinted as it is first read (``IncrementalRun/willRead(_:)``), not when
/// the job is checked: its outputs are recorded with the bytes as they were before any read of
/// this run, and the run holds the fingerprints of the inputs in flight only (hashed at the
/// check, a first run of 10,000 inputs held 30,000 of them, 9.5 MB).
@Suite struct InputFingerprintTests {
    static let manifest =
        "job: fingerprints\ninputs: [photos/*.jpg]\noutputs:\n  - name: a\n    path: out/{stem}-a.png\n  - name: b\n    path: out/{stem}-b.png\n"

    @Test func anInputIsRecordedAsItWasFirstReadAndForgottenOnceItsOutputsAreRecorded() throws {
        let (root, plan, records) = try RecipeVersionsTests.plannedJob(photos: ["p", "q"], Self.manifest)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let run = IncrementalRun(plan: plan, records: records, versions: { "v" }, pixelLimit: 1 << 20, force: false)
        #expect(run.reading.withLock { $0.isEmpty }, "the check hashes nothing for the work")
        let (input, unchanged) = (run.plan.inputs[0], run.plan.inputs[1])
        let firstRead = try FileFingerprint.take(unchanged.path)
        run.willRead(input)
        run.willRead(unchanged)
        // Changed after its first read (a search), before its second (the decode): its outputs
        // may be of the bytes as they are now, so they are not recorded as made of those first
        // read (up to date, were the file to go back to them), and the next run makes them again.
        try Data("changed meanwhile".utf8).write(to: URL(fileURLWithPath: input.path))
        run.willRead(input)
        #expect(run.reading.withLock { $0.count } == 4, "one entry for each output of the inputs read")
        for (read, recorded) in [(input, false), (unchanged, true)] {
            for output in read.outputs {
                _ = FileManager.default.createFile(atPath: output.path, contents: Data("made".utf8))
                try run.recordWritten(OutputReport(input: read.relativePath, output: output.path, variant: "a", status: .written))
                let record = records.record(for: run.absolute(output.path))
                #expect(recorded ? record?.inputFile.hash == firstRead.hash : record == nil, "\(output.path)")
            }
        }
        #expect(run.reading.withLock { $0.isEmpty }, "forgotten once its outputs are recorded")
        // The next run plans again, as every run does.
        let replanned = try RecipeVersionsTests.plan(manifestAt: plan.manifestPath).get()
        let again = IncrementalRun(plan: replanned, records: records, versions: { "v" }, pixelLimit: 1 << 20, force: false)
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

/// The up-to-date check that follows a plan compares what the plan's `stat` saw of each file
/// (``SeenStamp``) with its record before it asks `stat` again: a no-change run states each
/// file once, as it plans.
@Suite struct SeenStampTests {
    static let stamp = FileStamp(size: 10, modified: 1, changed: 2, inode: 3, device: 4)
    static let recorded = FileFingerprint(stamp: stamp, hash: String(repeating: "a", count: 32))

    @Test func aFileSeenWithItsRecordedStampIsNotStatedAgain() {
        // Nothing is at the path now: only what the plan saw can say it is there, unchanged.
        var probe = IncrementalRun.FileProbe(path: "/nonexistent-\(UUID().uuidString)", seen: SeenStamp(Self.stamp))
        let (exists, unchanged) = (probe.exists(), probe.isUnchanged(as: Self.recorded))
        let (current, same) = (probe.current(trusting: Self.recorded), probe.hasStamp(Self.stamp))
        #expect(exists && unchanged && same)
        #expect(current == Self.recorded)
    }

    @Test func aFileSeenWithAnotherStampOrNotSeenIsStated() {
        var other = Self.stamp
        other.modified += 1
        for seen in [SeenStamp(other), .unseen] {
            var probe = IncrementalRun.FileProbe(path: "/nonexistent-\(UUID().uuidString)", seen: seen)
            let (unchanged, current, same) = (
                probe.isUnchanged(as: Self.recorded), probe.current(trusting: Self.recorded), probe.hasStamp(Self.stamp)
            )
            #expect(!unchanged && !same, "the file is asked, and is not there")
            #expect(current == nil)
        }
        #expect(SeenStamp(other).matches(Self.stamp) == false && SeenStamp.unseen.matches(Self.stamp) == nil)
    }

    @Test func aFileThePlanFoundAbsentIsMissingWithoutAsking() throws {
        // A file there now: only what the plan saw says nothing is.
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("absent-\(UUID().uuidString)").path
        _ = FileManager.default.createFile(atPath: path, contents: Data("x".utf8))
        defer { try? FileManager.default.removeItem(atPath: path) }
        var absent = IncrementalRun.FileProbe(path: path, seen: .absent)
        var unseen = IncrementalRun.FileProbe(path: path, seen: .unseen)
        #expect(!absent.exists() && unseen.exists())
        #expect(!SeenStamp.absent.isFile && SeenStamp.absent.matches(Self.stamp) == nil)
        #expect(SeenStamp(Self.stamp).isFile && !SeenStamp(Self.stamp).isAbsent && !SeenStamp.unseen.isAbsent)
    }

    /// A plan's outputs as it saw them: absent when their folder is not there or nothing is at
    /// their path; a link that leads nowhere is something (the check asks, and a run replaces
    /// it), and a file is seen with its stamp.
    @Test func aPlanFindsAnOutputAbsentOnlyWhenNothingIsThere() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("seen-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        for folder in ["in", "there", "linked", "written"] {
            try FileManager.default.createDirectory(atPath: "\(root)/\(folder)", withIntermediateDirectories: true)
        }
        _ = FileManager.default.createFile(atPath: root + "/in/a.png", contents: Data("a".utf8))
        try FileManager.default.createSymbolicLink(atPath: root + "/linked/a.png", withDestinationPath: "nowhere.png")
        _ = FileManager.default.createFile(atPath: root + "/written/a.png", contents: Data("b".utf8))
        let manifest = root + "/seen.job"
        try ("job: seen\ninputs: [in/*.png]\noutputs:\n" + ["nofolder", "there", "linked", "written"].map {
            "  - name: \($0)\n    path: \($0)/{stem}.png\n"
        }.joined()).write(toFile: manifest, atomically: true, encoding: .utf8)
        let spec = try JobDecoder.decode(fileAtPath: manifest, filters: FilterRegistry.builtIn.descriptors).get()
        let plan = try JobPlanner.plan(spec, manifestPath: manifest, defaultTile: 512).get()
        let seen = Dictionary(uniqueKeysWithValues: try #require(plan.inputs.first).outputs.map { ($0.variant.name, $0.seen) })
        #expect(seen["nofolder"] == .absent && seen["there"] == .absent)
        #expect(seen["linked"] == .unseen)
        #expect(seen["written"]?.isFile == true)
        // What a run decides of each: the link is there, not recorded.
        let statuses = IncrementalRun.status(
            of: plan, records: .whole(.init()), versions: "v", pixelLimit: 1 << 30)
        let states = Dictionary(uniqueKeysWithValues: statuses.map { ($0.variant ?? "", $0.state) })
        #expect(states == ["nofolder": .missing, "there": .missing, "linked": .notRecorded, "written": .notRecorded])
    }

    /// A plan states no output in a folder it found not there: the folder is remembered so for
    /// the plan, and an output that appears there while it plans (made here between its two
    /// inputs, from the plan's poll of `stopped`) is seen absent, as its folder was, not stated.
    /// A first run of a million photos stated each of its 3,000,000 outputs in vain.
    @Test func aPlanStatesNoOutputInAFolderItFoundNotThere() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("seen-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/in", withIntermediateDirectories: true)
        for name in ["a", "b"] { _ = FileManager.default.createFile(atPath: root + "/in/\(name).png", contents: Data(name.utf8)) }
        let manifest = root + "/seen.job"
        try "job: seen\ninputs: [in/*.png]\noutputs:\n  - name: v\n    path: out/{stem}.png\n"
            .write(toFile: manifest, atomically: true, encoding: .utf8)
        let spec = try JobDecoder.decode(fileAtPath: manifest, filters: FilterRegistry.builtIn.descriptors).get()
        // The polls of a plan (the walk's, then one an input): the last comes before the last input.
        let polls = Mutex(0)
        _ = try JobPlanner.plan(spec, manifestPath: manifest, defaultTile: 512, stopped: { polls.withLock { $0 += 1 }; return false }).get()
        let last = polls.withLock { $0 }
        polls.withLock { $0 = 0 }
        let plan = try JobPlanner.plan(spec, manifestPath: manifest, defaultTile: 512, stopped: {
            if polls.withLock({ $0 += 1; return $0 }) == last {
                try? FileManager.default.createDirectory(atPath: root + "/out", withIntermediateDirectories: true)
                _ = FileManager.default.createFile(atPath: root + "/out/b.png", contents: Data("b".utf8))
            }
            return false
        }).get()
        #expect(FileManager.default.fileExists(atPath: root + "/out/b.png"))
        #expect(plan.inputs.map(\.relativePath) == ["in/a.png", "in/b.png"])
        #expect(plan.inputs.map { $0.outputs.map(\.seen) } == [[.absent], [.absent]])
    }
}
