import BlurfarmState
import BlurfarmTestSupport
import Foundation
import Synchronization
import Testing

@testable import BlurfarmCoordinator

/// A run makes, records and reports its plan a batch of inputs at a time
/// (``IncrementalRun/batches(of:)``), and its report's outputs go to the state folder as each
/// batch ends (``ReportedOutputs/Spilling``): issue 47, a run whose memory holds a batch's
/// reports, not the job's.
@Suite struct RunBatchesTests {
    static let manifest =
        "job: batches\ninputs: [photos/*.jpg]\noutputs:\n  - name: a\n    path: out/{stem}-a.png\n  - name: b\n    path: out/{stem}-b.png\n"

    @Test(arguments: 0..<6) func batchesCoverThePlanOnceAndMergeInPlanOrder(seed: UInt64) throws {
        var random = SplitMix(seed: seed)
        let photos = (0..<Int.random(in: 1...30, using: &random)).map { String(format: "p%02d", $0) }
        let (root, plan, records) = try RecipeVersionsTests.plannedJob(photos: photos, Self.manifest)
        defer { try? FileManager.default.removeItem(atPath: root) }
        // A first run records some outputs: the next run finds them up to date.
        let recorded = try Self.firstRun(plan, records) { _ in Bool.random(using: &random) }
        // Checked in one part, and in several at once: the same.
        func checked(inParts parts: Int) throws -> IncrementalRun {
            IncrementalRun(
                plan: try RecipeVersionsTests.plan(manifestAt: plan.manifestPath).get(), records: records, versions: { "v" },
                pixelLimit: 1 << 20, force: false, parts: parts)
        }
        let (run, inParts) = (try checked(inParts: 1), try checked(inParts: Int.random(in: 2...5, using: &random)))
        // The work: every output not recorded, its input with it.
        let expected = plan.inputs.map { $0.outputs.map(\.path).filter { !recorded.contains($0) } }.filter { !$0.isEmpty }
        for checked in [run, inParts] {
            #expect(checked.plan.inputs.map { $0.outputs.map(\.path) } == expected, "seed \(seed)")
            #expect(checked.plan.inputs.map(\.path) == run.plan.inputs.map(\.path), "seed \(seed)")
            #expect((0..<plan.outputCount).map(checked.takenOut.failedEarlier(at:)) == (0..<plan.outputCount).map { recorded.contains(plan.inputs.flatMap(\.outputs)[$0].path) ? false : nil })
        }
        let size = Int.random(in: 1...7, using: &random)
        var work: [PlannedInput] = []
        var reported: [OutputReport] = []
        var published = PublishedOutputs()
        for batch in run.batches(of: size) {
            #expect(batch.around.before == work.count, "seed \(seed)")
            work += batch.work.inputs
            #expect(batch.around.after == run.plan.inputs.count - work.count, "seed \(seed)")
            // The batch's work ends in any order, written or failed.
            let ran = batch.work.inputs.flatMap { input in
                input.outputs.map {
                    OutputReport(
                        input: input.relativePath, output: $0.path, variant: $0.variant.name,
                        status: Bool.random(using: &random) ? .written : .failed)
                }
            }.shuffled(using: &random)
            reported += batch.merged(ran)
            batch.publish(ran, into: &published)
        }
        // Published: each output written or up to date, by its place in the plan, and no other.
        #expect((0..<plan.outputCount).map(published.contains) == reported.map { $0.status == .written || $0.status == .skipped })
        #expect(work.map(\.path) == run.plan.inputs.map(\.path), "every input to make, once, in order (seed \(seed))")
        #expect(work.map { $0.outputs.map(\.path) } == run.plan.inputs.map { $0.outputs.map(\.path) })
        let planned = plan.inputs.flatMap { $0.outputs.map(\.path) }
        #expect(reported.map(\.output) == planned, "every output once, in plan order (seed \(seed))")
        #expect(reported.filter { $0.status == .skipped }.map(\.output) == planned.indices.filter { run.takenOut.failedEarlier(at: $0) != nil }.map { planned[$0] })
    }

    /// A check in parts stopped partway (a job cancelled while its outputs are checked): each
    /// output of the plan is taken out (up to date: recorded) or in the work, once, and the
    /// work is in plan order, whichever parts had checked what.
    @Test(arguments: 0..<6) func aCheckStoppedInPartsLeavesWhatItDidNotCheckInTheWork(seed: UInt64) throws {
        var random = SplitMix(seed: seed)
        let photos = (0..<Int.random(in: 1...30, using: &random)).map { String(format: "p%02d", $0) }
        let (root, plan, records) = try RecipeVersionsTests.plannedJob(photos: photos, Self.manifest)
        defer { try? FileManager.default.removeItem(atPath: root) }
        // Every output of some inputs up to date.
        let chosen = Set(plan.inputs.filter { _ in Bool.random(using: &random) }.flatMap { $0.outputs.map(\.path) })
        let recorded = try Self.firstRun(plan, records, writes: chosen.contains)
        let asks = Mutex(0)
        let stopAfter = Int.random(in: 0...3, using: &random)
        let run = IncrementalRun(
            plan: try RecipeVersionsTests.plan(manifestAt: plan.manifestPath).get(), records: records, versions: { "v" },
            pixelLimit: 1 << 20, force: false, parts: Int.random(in: 2...5, using: &random),
            stopped: { asks.withLock { $0 += 1; return $0 > stopAfter } })
        let planned = plan.inputs.flatMap { $0.outputs.map(\.path) }
        let work = run.plan.inputs.flatMap { $0.outputs.map(\.path) }
        #expect(Set(work).count == work.count, "seed \(seed)")
        for (place, path) in planned.enumerated() {
            let takenOut = run.takenOut.failedEarlier(at: place) != nil
            #expect(takenOut != work.contains(path), "\(path), seed \(seed)")
            #expect(!takenOut || recorded.contains(path), "\(path), seed \(seed)")
        }
        let inWork = Set(run.plan.inputs.map(\.path))
        #expect(run.plan.inputs.map(\.path) == plan.inputs.map(\.path).filter(inWork.contains), "seed \(seed)")
    }

    /// Stopped after two batches of the index's reads, with the work its own list (the first
    /// input is up to date): the inputs not checked are in the work, after those checked.
    @Test func aCheckStoppedAfterItsFirstBatchesKeepsTheRestInTheWork() throws {
        let photos = (0..<(2 * IncrementalRun.lookupBatch + 88)).map { String(format: "p%03d", $0) }
        let (root, plan, records) = try RecipeVersionsTests.plannedJob(photos: photos, Self.manifest)
        defer { try? FileManager.default.removeItem(atPath: root) }
        _ = try Self.firstRun(plan, records) { $0 == plan.inputs[0].outputs[0].path || $0 == plan.inputs[0].outputs[1].path }
        let asks = Mutex(0)
        let run = IncrementalRun(
            plan: try RecipeVersionsTests.plan(manifestAt: plan.manifestPath).get(), records: records, versions: { "v" },
            pixelLimit: 1 << 20, force: false, parts: 1, stopped: { asks.withLock { $0 += 1; return $0 > 2 } })
        #expect(run.plan.inputs.map(\.path) == plan.inputs.dropFirst().map(\.path))
        #expect((0..<plan.outputCount).map { run.takenOut.failedEarlier(at: $0) != nil } == (0..<plan.outputCount).map { $0 < 2 })
    }

    /// A first run of `plan` that writes and records the outputs `writes` takes (asked in plan
    /// order), each input read before; their paths.
    static func firstRun(_ plan: JobPlan, _ records: OutputRecords, writes: (String) -> Bool) throws -> Set<String> {
        let first = IncrementalRun(plan: plan, records: records, versions: { "v" }, pixelLimit: 1 << 20, force: false)
        #expect(first.plan.inputs.map(\.path) == plan.inputs.map(\.path), "a first run makes every input")
        var recorded: Set<String> = []
        for input in first.plan.inputs {
            first.willRead(input)
            for output in input.outputs where writes(output.path) {
                _ = FileManager.default.createFile(atPath: output.path, contents: Data("made".utf8))
                try first.recordWritten(OutputReport(input: input.relativePath, output: output.path, variant: "a", status: .written))
                recorded.insert(output.path)
            }
        }
        return recorded
    }

    /// Reports of every status, with random details, as a run gathers them.
    static func outputs(_ count: Int, using random: inout SplitMix) -> [OutputReport] {
        (0..<count).map { index in
            let status: OutputReport.Status = [.written, .written, .written, .skipped, .failed, .stopped, .cancelled, .failedEarlier].randomElement(using: &random)!
            let failure: OutputFailure? =
                switch status {
                case .failed: .verification("out/\(index).png: the decoded output is not the rendered image")
                case .stopped: .stopped
                case .cancelled: .cancelled
                case .failedEarlier: .decodedEarlier("in/\(index / 2).jpg: not an image")
                default: nil
                }
            let rendered = status == .written
            var report = OutputReport(
                input: "in/\(index / 2).jpg", output: "out/\(index)-é.png", variant: "v\(index % 3)", status: status,
                tiles: rendered ? Int.random(in: 1...64, using: &random) : 0, pixels: rendered ? Int.random(in: 1...1 << 30, using: &random) : 0,
                bands: rendered ? Int.random(in: 0...9, using: &random) : 0,
                decodeSeconds: rendered ? Double.random(in: 0..<2, using: &random) : 0,
                filterSeconds: rendered ? Double.random(in: 0..<2, using: &random) : 0,
                encodeSeconds: rendered ? Double.random(in: 0..<2, using: &random) : 0,
                checksum: rendered ? String(format: "%016llx", random.next()) : nil, failure: failure)
            // Stopped or cancelled, half of them before they started.
            report.notStarted = (status == .stopped || status == .cancelled) && random.next() % 2 == 0
            return report
        }
    }

    /// The bytes a test's reports hold before they go to disk.
    static let heldBytes = 16 << 10

    static func report(_ reported: ReportedOutputs) -> RunReport {
        let settings = RunSettings(configuration: nil, workers: 2, threads: 2, decodedImages: 2, tile: 512, pixelLimit: 1 << 28, verify: "checksum")
        return RunReport(
            job: "spill", manifest: "spill.job", started: Date(timeIntervalSince1970: 1), finished: Date(timeIntervalSince1970: 2),
            settings: settings, reported: reported)
    }

    @Test(arguments: 0..<6) func aReportSpilledToTheStateFolderIsTheReportHeld(seed: UInt64) throws {
        var random = SplitMix(seed: seed)
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("spill-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: state) }
        // From none to many times the bytes held (16 KB here, for a light test): held, then on disk.
        let outputs = Self.outputs([0, 1, 30, 100, 300, 900][Int(seed)], using: &random)
        let spilling = ReportedOutputs.Spilling(state: state, heldBytes: Self.heldBytes)
        var next = 0
        // Batches of whole inputs (two outputs each), as a run adds them.
        while next < outputs.count {
            let end = min(outputs.count, next + 2 * Int.random(in: 1...50, using: &random))
            spilling.add(outputs[next..<end])
            next = end
        }
        let (spilled, held) = (Self.report(spilling.finish()), Self.report(.of(outputs)))
        guard case .spilled(let stored) = spilled.reported else {
            Issue.record("a run's outputs are gathered encoded")
            return
        }
        // On disk once the entries of the outputs the run tried pass the bytes held (those
        // failed earlier are held as values, those up to date or not started counted).
        let tried = { (output: OutputReport) in output.status != .skipped && output.status != .failedEarlier && !output.notStarted }
        let listed = outputs.filter { $0.status != .skipped && !$0.notStarted }
        let encoded = try outputs.reduce(0) { bytes, output in bytes + (tried(output) ? 4 + (try RunReport.json(output).count) : 0) }
        #expect(stored.isOnDisk == (encoded >= Self.heldBytes), "\(encoded) bytes, seed \(seed)")
        print("seed \(seed): \(outputs.count) outputs, \(encoded) bytes encoded, on disk: \(stored.isOnDisk)")
        // The report file, byte for byte, whatever held the outputs.
        #expect(try RunReport.json(spilled) == RunReport.json(held), "seed \(seed)")
        var written: [UInt8] = []
        try RunReport.writeJSON([spilled], list: false) { written += $0 }
        #expect(Data(written) == (try RunReport.json(held)))
        #expect(spilled.counts == held.counts, "seed \(seed)")
        #expect(spilled.skipped == outputs.count { $0.status == .skipped }, "seed \(seed)")
        // Read back: those the run tried as a report file gives them (cancelled and stopped
        // exactly as they were), those failed earlier as they were, those up to date or not
        // started not at all, but counted.
        let expected = try listed.map {
            tried($0) ? try RunReport.decode(OutputReport.self, from: RunReport.json($0)) : $0
        }
        #expect(spilled.outputs == expected, "seed \(seed)")
        let heldAsValues = { (reports: [OutputReport]) in reports.filter { !tried($0) }.map(\.failure) }
        #expect(heldAsValues(spilled.outputs) == heldAsValues(listed))
        let stoppedOrCancelled = { (reports: [OutputReport]) in
            reports.filter { $0.status == .stopped || $0.status == .cancelled }.map(\.failure)
        }
        #expect(stoppedOrCancelled(spilled.outputs) == stoppedOrCancelled(listed))
        #expect(spilled.stopped == outputs.count { $0.status == .stopped } && spilled.cancelled == outputs.count { $0.status == .cancelled })
    }

    /// A no-change run's outputs, all up to date, are counted and nothing else: none is kept,
    /// in memory or in the state folder, and the report lists none (`outputs` empty, `counts`
    /// giving them); read back, it counts them still.
    @Test func outputsUpToDateAreCountedNotKept() throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("spill-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: state) }
        let outputs = (0..<3000).map { index in
            OutputReport(input: "in/\(index / 3)-\u{F7E9}.jpg", output: "/out/v\(index % 3)/\(index / 3)é.png", variant: "v\(index % 3)", status: .skipped)
        }
        let spilling = ReportedOutputs.Spilling(state: state, heldBytes: Self.heldBytes)
        for first in stride(from: 0, to: outputs.count, by: 300) { spilling.add(outputs[first..<first + 300]) }
        let spilled = Self.report(spilling.finish())
        guard case .spilled(let stored) = spilled.reported else {
            Issue.record("a run's outputs are gathered encoded")
            return
        }
        #expect(!stored.isOnDisk && stored.places.isEmpty)
        #expect(spilled.outputs.isEmpty && spilled.skipped == 3000 && spilled.decoded == 0)
        let json = try RunReport.json(spilled)
        #expect(json == (try RunReport.json(Self.report(.of(outputs)))))
        let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        #expect((object["outputs"] as? [Any])?.isEmpty == true)
        #expect((object["counts"] as? [String: Any])?["skipped"] as? Int == 3000)
        let read = try RunReport.decode(RunReport.self, from: json)
        #expect(read.skipped == 3000 && read.outputs.isEmpty && read == spilled)
    }

    @Test func withoutAStateFolderTheOutputsStayInMemory() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("not-a-folder-\(UUID().uuidString)").path
        _ = FileManager.default.createFile(atPath: file, contents: Data())
        defer { try? FileManager.default.removeItem(atPath: file) }
        var random = SplitMix(seed: 7)
        // Far more than the bytes held: they would go to the file.
        let outputs = Self.outputs(900, using: &random)
        let spilling = ReportedOutputs.Spilling(state: file + "/state", heldBytes: Self.heldBytes)
        spilling.add(outputs[...])
        let spilled = Self.report(spilling.finish())
        guard case .spilled(let stored) = spilled.reported else {
            Issue.record("a run's outputs are gathered encoded")
            return
        }
        #expect(!stored.isOnDisk)
        #expect(try RunReport.json(spilled) == RunReport.json(Self.report(.of(outputs))))
    }
}
