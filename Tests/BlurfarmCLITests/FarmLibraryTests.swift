@testable import BlurfarmCommandSupport
import BlurfarmFarm
import BlurfarmCoordinator
import BlurfarmCore
import BlurfarmKernels
import BlurfarmManifest
import BlurfarmTestSupport
import Foundation
import Synchronization
import Testing

/// The engine as a library, with no CLI in the way: jobs planned and submitted to one
/// ``Farm``, its events consumed, one job cancelled while the other goes on.
@Suite(.serialized, .tags(.process), .blocking) struct FarmLibraryTests {
    /// `count` small real photos (corpus frames shrunk by libvips) in `folder/photos`.
    static func photos(_ count: Int, in folder: URL) throws {
        let photos = folder.appendingPathComponent("photos")
        try FileManager.default.createDirectory(at: photos, withIntermediateDirectories: true)
        for index in 0..<count {
            let source = Fixtures.corpus(String(format: "batch1080/b%02d.jpg", index))
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/vips")
            process.arguments = ["resize", source, photos.appendingPathComponent("p\(index).jpg").path, "0.3"]
            try process.run()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
        }
    }

    /// Writes manifest `name.job` in `folder`: every photo through `filter` to `out-name/`.
    static func manifest(_ name: String, filter: String, in folder: URL) throws -> String {
        let path = folder.appendingPathComponent("\(name).job").path
        try """
            job: \(name)
            inputs: [photos/*.jpg]
            tile: 96
            outputs:
              - name: out
                path: out-\(name)/{stem}.png
                filters:
                  - \(filter)

            """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func plan(_ manifest: String, registry: FilterRegistry) throws -> JobPlan {
        let job = try JobDecoder.decode(fileAtPath: manifest, filters: registry.descriptors).get()
        return try JobPlanner.plan(job, manifestPath: manifest, defaultTile: 512).get()
    }

    static func files(in folder: URL) -> [String: Data] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return Dictionary(uniqueKeysWithValues: names.map {
            ($0, (try? Data(contentsOf: folder.appendingPathComponent($0))) ?? Data())
        })
    }

    @Test func twoJobsShareOnePoolAndOneIsCancelledHalfWayWithoutTouchingTheOther() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try Self.photos(20, in: folder)
        let blur = try Self.manifest("blur", filter: "gaussian:\n          sigma: 4", in: folder)
        let motion = try Self.manifest("motion", filter: "motion:\n          radius: 12\n          angle: 30", in: folder)
        // The blur job alone, by the CLI: what the farm must write, byte for byte.
        let alone = try Blurfarm.run(["run", blur, "--workers", "2"])
        #expect(alone.status == 0, "\(alone.stderr)")
        let expected = Self.files(in: folder.appendingPathComponent("out-blur"))
        #expect(expected.count == 20)
        try FileManager.default.removeItem(at: folder.appendingPathComponent("out-blur"))

        let registry = FilterRegistry.builtIn
        // Tile by tile: the motion job is cancelled one tile into an image.
        var configuration = FarmConfiguration(decodedImages: 1)
        configuration.wholeImagePixels = 0
        let farm = Farm(FarmSettings(
            workers: 2, threads: 1, workerExecutable: BuiltExecutable.worker.path,
            configuration: configuration, stateFolder: folder.appendingPathComponent("state").path,
            recipeVersions: { "farm library test" }))
        defer { farm.shutdown() }
        let motionDone = Atomic<Int>(0)
        let pidsAtCancel = Mutex<[Int32]>([])
        let seen = Mutex<[FarmEvent]>([])
        let cancelled = Mutex<FarmJobID?>(nil)
        /// The output whose first tile was done when the job was cancelled.
        let cutShort = Mutex<String?>(nil)
        farm.onEvent { event in
            seen.withLock { $0.append(event) }
            let motion = cancelled.withLock { $0 }
            switch event {
            case .workerStarted:
                // A callback may ask the farm about its workers, even while the pool starts.
                _ = farm.workers
            case .outputFinished(let id, _) where id == motion:
                motionDone.add(1, ordering: .relaxed)
            case .tilesDone(let id, let output, 1, let total) where id == motion && total > 8:
                // Half way through the motion job, one tile into an image: cancelled, from the
                // event callback.
                guard motionDone.load(ordering: .relaxed) >= 10, cutShort.withLock({ $0 }) == nil else { return }
                cutShort.withLock { $0 = output }
                pidsAtCancel.withLock { $0 = farm.workers.map(\.pid) }
                farm.cancel(id)
            default: break
            }
        }
        let blurJob = farm.submit(FarmJob(plan: try Self.plan(blur, registry: registry), registry: registry))
        let motionJob = cancelled.withLock { id in
            let submitted = farm.submit(FarmJob(plan: try! Self.plan(motion, registry: registry), registry: registry))
            id = submitted
            return submitted
        }
        let blurOutcome = try #require(farm.wait(blurJob))
        let motionOutcome = try #require(farm.wait(motionJob))

        // The blur job: every output written, the same bytes as the lone run.
        #expect(blurOutcome.failures == 0 && blurOutcome.report.written == 20)
        #expect(Self.files(in: folder.appendingPathComponent("out-blur")) == expected)
        // The motion job: each output written (and then there) or cancelled (and absent), some
        // of each, and no temporary file left.
        let statuses = motionOutcome.report.outputs.map(\.status)
        #expect(statuses.allSatisfy { $0 == .written || $0 == .cancelled }, "\(statuses)")
        #expect(statuses.contains(.written) && statuses.contains(.cancelled), "\(statuses)")
        let written = Self.files(in: folder.appendingPathComponent("out-motion"))
        for output in motionOutcome.report.outputs {
            let name = (output.output as NSString).lastPathComponent
            #expect((written[name] != nil) == (output.status == .written), "\(name): \(output.status)")
            if output.status == .cancelled { #expect(output.failure == .cancelled) }
        }
        #expect(written.keys.allSatisfy { !$0.hasPrefix(".") }, "\(written.keys.sorted())")
        // The image being rendered at the cancel left the pool at once: its tiles were not all
        // rendered, and it is not written.
        let interrupted = try #require(cutShort.withLock { $0 })
        #expect(motionOutcome.report.outputs.first { $0.output == interrupted }?.status == .cancelled)
        let events = seen.withLock { $0 }
        #expect(!events.contains {
            if case .tilesDone(motionJob, interrupted, let done, let total) = $0 { done == total } else { false }
        })
        // The pool kept its workers: the same processes before the cancel and after both jobs.
        let before = pidsAtCancel.withLock { $0 }
        #expect(before.count == 2)
        #expect(farm.workers.map(\.pid) == before)
        // The events: each job accepted and finished once; tiles reported for the outputs.
        let accepted = events.compactMap { if case .jobAccepted(let id, _, let outputs, _, _) = $0 { (id, outputs) } else { nil } }
        #expect(accepted.map(\.0).sorted() == [blurJob, motionJob] && accepted.allSatisfy { $0.1 == 20 })
        let finished = events.compactMap { if case .jobFinished(let id, _) = $0 { id } else { nil } }
        #expect(finished.sorted() == [blurJob, motionJob])
        #expect(events.contains { if case .tilesDone(blurJob, _, let done, let total) = $0 { done == total } else { false } })
        #expect(events.contains { if case .workerStarted = $0 { true } else { false } })
    }

    /// `count` photos of 8 × 6 in `folder`'s `photos`, random from `seed`, and the manifest of
    /// job `two` making a plain PNG and a σ1 blur of each; its path.
    static func smallPhotos(_ count: Int, seed: UInt64, in folder: URL) throws -> String {
        let photos = folder.appendingPathComponent("photos")
        try FileManager.default.createDirectory(at: photos, withIntermediateDirectories: true)
        var random = SplitMix(seed: seed)
        for index in 0..<count {
            try IncrementalRunTests.ppm(width: 8, height: 6, using: &random)
                .write(to: photos.appendingPathComponent(String(format: "p%04d.ppm", index)))
        }
        let manifest = folder.appendingPathComponent("two.job").path
        try """
            job: two
            inputs: [photos/*.ppm]
            outputs:
              - name: plain
                path: out/plain/{stem}.png
              - name: blur
                path: out/blur/{stem}.png
                filters:
                  - gaussian:
                      sigma: 1

            """.write(toFile: manifest, atomically: true, encoding: .utf8)
        return manifest
    }

    /// A job of more inputs than a batch (``IncrementalRun/reportBatch``): each batch is told
    /// finished after every output of its inputs, so that `run`'s progress line, fed the job's
    /// events, counts every input once and holds no more than a batch's paths.
    @Test func eachBatchIsToldFinishedAfterItsOutputs() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let count = IncrementalRun.reportBatch + 9
        let manifest = try Self.smallPhotos(count, seed: 11, in: folder)
        let farm = Farm(FarmSettings(
            workers: 0, threads: 2, workerExecutable: BuiltExecutable.worker.path, configuration: FarmConfiguration(),
            stateFolder: folder.appendingPathComponent("state").path, recipeVersions: { "farm library test" }))
        defer { farm.shutdown() }
        let seen = Mutex<[FarmEvent]>([])
        farm.onEvent { event in seen.withLock { $0.append(event) } }
        let id = farm.submit(FarmJob(plan: try Self.plan(manifest, registry: .builtIn), registry: .builtIn))
        #expect(try #require(farm.wait(id)).report.written == 2 * count)
        let events = seen.withLock { $0 }
        // The outputs finished before each batch's end are those of its inputs, whole.
        var batches: [Set<String>] = [[]]
        var outputs: [[String]] = [[]]
        for event in events {
            switch event {
            case .outputFinished(id, let report):
                batches[batches.count - 1].insert(report.input)
                outputs[outputs.count - 1].append(report.output)
            case .batchFinished(id):
                batches.append(Set<String>())
                outputs.append([])
            default: break
            }
        }
        #expect(batches.map(\.count) == [IncrementalRun.reportBatch, 9, 0])
        #expect(outputs.map(\.count) == [2 * IncrementalRun.reportBatch, 18, 0])
        #expect(batches[0].isDisjoint(with: batches[1]))
        // `run`'s narrator, fed the events in order, as `run` feeds it.
        var narrator = RunNarrator(quiet: false, verbose: false, alwaysSummary: false, showsProgress: true)
        var held = 0
        var shown = ""
        for event in events {
            if case .progress(let line)? = narrator.lines(for: event).last { shown = line }
            held = max(held, narrator.progress?.inputs.count ?? 0)
        }
        #expect(held == IncrementalRun.reportBatch)
        #expect(shown.hasPrefix("two: \(count)/\(count) images, \(2 * count)/\(2 * count) outputs, "), "\(shown)")
    }

    /// A job cancelled in its first batch: the outputs it had started and cut short are listed
    /// in its report (cancelled), those it never started counted and not listed; the batches
    /// after the cancel are counted whole (one event each), none of their outputs told or
    /// reported one by one: a first run of a million photos stopped 16 s in went through its
    /// 2,970,000 outputs one at a time for half a minute, and wrote a report of 1.3 GB.
    @Test func aJobEndedEarlyCountsTheOutputsItDidNotStartAndListsThoseItDid() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let count = 3 * IncrementalRun.reportBatch + 5
        let manifest = try Self.smallPhotos(count, seed: 12, in: folder)
        let state = folder.appendingPathComponent("state").path
        let farm = Farm(FarmSettings(
            workers: 0, threads: 2, workerExecutable: BuiltExecutable.worker.path, configuration: FarmConfiguration(),
            stateFolder: state, recipeVersions: { "farm library test" }))
        defer { farm.shutdown() }
        let seen = Mutex<[FarmEvent]>([])
        farm.onEvent { event in
            seen.withLock { $0.append(event) }
            // Cancelled at its fifth output written, from the event callback.
            if case .outputFinished(let id, let report) = event, report.status == .written,
                seen.withLock({ $0.count { if case .outputFinished(_, let r) = $0 { r.status == .written } else { false } } }) == 5
            {
                farm.cancel(id)
            }
        }
        let id = farm.submit(FarmJob(plan: try Self.plan(manifest, registry: .builtIn), registry: .builtIn))
        let report = try #require(farm.wait(id)).report
        let events = seen.withLock { $0 }
        #expect(report.failed == 0 && report.written >= 5 && report.written < 2 * IncrementalRun.reportBatch)
        #expect(report.written + report.cancelled == 2 * count, "\(report.counts)")
        // Listed: those written, and those cancelled once started; the others counted.
        var started: Set<String> = []
        for case .outputStarted(id, let output, _) in events { started.insert(output) }
        let listed = report.outputs
        #expect(listed.count { $0.status == .written } == report.written)
        #expect(listed.filter { $0.status == .cancelled }.allSatisfy { started.contains($0.output) }, "\(listed.filter { $0.status == .cancelled })")
        #expect(listed.count < report.written + 2 * 2, "\(listed.count) listed of \(report.written) written")
        // Told: the first batch's outputs one by one, the three batches after it counted whole.
        var batches = 0, toldAfterFirst = 0
        var notStarted: [Int] = []
        for event in events {
            switch event {
            case .batchFinished(id): batches += 1
            case .outputFinished(id, _) where batches > 0: toldAfterFirst += 1
            case .outputsNotStarted(id, let status, let outputs):
                #expect(status == .cancelled && batches > 0)
                notStarted.append(outputs)
            default: break
            }
        }
        #expect(batches == 4 && toldAfterFirst == 0)
        #expect(notStarted == [2 * IncrementalRun.reportBatch, 2 * IncrementalRun.reportBatch, 2 * 5])
        // The report in the state folder says the same: the counts of all, the list of those listed.
        let files = try FileManager.default.contentsOfDirectory(atPath: state + "/reports")
        let written = try RunReport.decode(RunReport.self, from: Data(contentsOf: URL(fileURLWithPath: state + "/reports/" + #require(files.first))))
        #expect(files.count == 1 && written.counts == report.counts && written.outputs == listed.map {
            try! RunReport.decode(OutputReport.self, from: RunReport.json($0))
        })
    }

    /// A farm rendering in this process, its state in `folder`, and the plan of a job blurring
    /// two photos there.
    static func blurring(in folder: URL) throws -> (Farm, JobPlan) {
        try Self.photos(2, in: folder)
        let blur = try Self.manifest("blur", filter: "gaussian:\n          sigma: 2", in: folder)
        let farm = Farm(FarmSettings(
            workers: 0, threads: 2, workerExecutable: BuiltExecutable.worker.path, configuration: FarmConfiguration(),
            stateFolder: folder.appendingPathComponent("state").path, recipeVersions: { "farm library test" }))
        return (farm, try Self.plan(blur, registry: .builtIn))
    }

    @Test func theEventsArriveOnAnAsyncStreamToo() async throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (farm, plan) = try Self.blurring(in: folder)
        let events = farm.events()
        let id = farm.submit(FarmJob(plan: plan, registry: .builtIn))
        var outputs = 0
        for await event in events {
            if case .outputFinished(id, let report) = event, report.status == .written { outputs += 1 }
            if case .jobFinished(id, let outcome) = event {
                #expect(outcome.report.written == 2)
                break
            }
        }
        #expect(outputs == 2)
        #expect(await farm.finished(id)?.failures == 0)
    }

    /// A job submitted without keeping its outcome (the service's: its events tell it) is
    /// forgotten once it has told its end: the farm of a service lives on, and kept every job's
    /// report, each holding its unnamed file in the state folder open (48 MB a job of 100,000
    /// outputs, until the server restarted).
    @Test func aJobWhoseOutcomeIsNotKeptIsForgottenOnceItHasToldItsEnd() async throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (farm, plan) = try Self.blurring(in: folder)
        let events = farm.events()
        let forgotten = farm.submit(FarmJob(plan: plan, registry: .builtIn), keepsOutcome: false)
        for await event in events {
            if case .jobFinished(forgotten, let outcome) = event {
                #expect(outcome.report.written == 2)
                break
            }
        }
        #expect(await farm.finished(forgotten) == nil)
        let kept = farm.submit(FarmJob(plan: plan, registry: .builtIn, force: true))
        #expect(await farm.finished(kept)?.report.written == 2)
    }
}
