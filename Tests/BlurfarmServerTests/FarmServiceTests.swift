import BlurfarmState
import BlurfarmAPI
import BlurfarmManifest
import BlurfarmTestSupport
@testable import BlurfarmServer
import Foundation
import GRDB
import Testing

/// The service over a scripted farm: what it stores, what it asks of the farm, and what it
/// does with the farm's events.
@Suite(.timeLimit(.minutes(2))) struct FarmServiceTests {
    @Test func aSubmittedJobIsStoredAndHandedToTheFarm() async throws {
        let fixture = try ServerFixture()
        defer { fixture.remove() }
        try await fixture.service.start()
        let job = try await fixture.submit(priority: 70)
        #expect(job.state == .active)
        #expect(job.name == "served")
        #expect(job.outputsTotal == 2)
        #expect(job.manifest == fixture.root + "/submitted.job")
        #expect(fixture.jobFarm.submitted.map(\.id) == [job.id!])
        #expect(fixture.jobFarm.submitted.first?.priority == 70)
        #expect(fixture.jobFarm.submitted.first?.plan.outputCount == 2)
    }

    /// A job that goes to the farm as it is submitted takes the plan its submission was
    /// checked with (a million outputs planned once, not twice); one that waited in the queue is
    /// planned again when its turn comes, as its files are then.
    @Test func aJobTakenAtOnceIsPlannedOnceAndOneThatWaitedAgain() async throws {
        let fixture = try ServerFixture()
        defer { fixture.remove() }
        try await fixture.service.start()
        let first = try await fixture.submit().id!
        #expect(fixture.jobFarm.submitted.map(\.id) == [first])
        #expect(fixture.service.plansTotal == 1, "checked, then handed to the farm as it was")
        // The farm has the job of this manifest: the same job submitted again waits for it.
        let second = try await fixture.submit().id!
        #expect(try await fixture.service.job(second).state == .queued)
        #expect(fixture.service.plansTotal == 2)
        fixture.jobFarm.emit(.finished(job: first, failed: 0, cancelled: false))
        _ = try await fixture.wait(for: second) { $0.inFarm }
        try await fixture.settled()
        #expect(fixture.jobFarm.submitted.map(\.id) == [first, second])
        #expect(fixture.service.plansTotal == 3, "planned again when its turn came")
    }

    @Test func theFarmsEventsCarryAJobToCompletedWithItsOutputs() async throws {
        let fixture = try ServerFixture()
        defer { fixture.remove() }
        try await fixture.service.start()
        let id = try await fixture.submit().id!
        let output = fixture.root + "/out/plasma-Kite.png"
        fixture.jobFarm.emit(.accepted(job: id, outputs: 2, upToDate: 1))
        fixture.jobFarm.emit(.outputStarted(job: id, output: output, tiles: 4))
        fixture.jobFarm.emit(.tilesDone(job: id, output: output, done: 1, total: 4))
        fixture.jobFarm.emit(.outputFinished(job: id, OutputOutcome(
            status: .written, output: output, pixels: 1_000_000, tiles: 4, seconds: 0.5, retries: 0,
            checksum: "abc", errorKind: nil, error: nil)))
        fixture.jobFarm.emit(.finished(job: id, failed: 0, cancelled: false))
        let job = try await fixture.wait(for: id) { $0.state == .completed }
        #expect(job.state == .completed)
        #expect(job.outputsUpToDate == 1 && job.outputsWritten == 1 && job.outputsDone == 2)
        #expect(job.tilesDone == 1 && job.tilesTotal == 4)
        let outputs = try await fixture.service.outputs(of: id).outputs
        #expect(outputs.map(\.output) == [output])
        #expect(outputs.first?.state == .written && outputs.first?.checksum == "abc")
        #expect(JobView(job).progress.fraction == 1)
    }

    /// An output's row is written whole when it starts and when it ends, the end keeping the
    /// start's time (``QueueStore``'s one prepared statement for every row).
    @Test func anOutputsEndKeepsItsStartAndAnOutputEndedUnstartedHasNone() async throws {
        let fixture = try ServerFixture()
        defer { fixture.remove() }
        try await fixture.service.start()
        let id = try await fixture.submit().id!
        let (started, unstarted) = (fixture.root + "/out/started.png", fixture.root + "/out/unstarted.png")
        fixture.jobFarm.emit(.accepted(job: id, outputs: 2, upToDate: 0))
        fixture.jobFarm.emit(.outputStarted(job: id, output: started, tiles: 4))
        try await eventually("the output's start to be stored") { () async throws -> Bool in
            try await fixture.service.outputs(of: id).outputs.first { $0.output == started }?.startedAt != nil
        }
        let start = try #require(try await fixture.service.outputs(of: id).outputs.first { $0.output == started }?.startedAt)
        for output in [started, unstarted] {
            fixture.jobFarm.emit(.outputFinished(job: id, OutputOutcome(
                status: .written, output: output, pixels: 64, tiles: 4, seconds: 0.5, retries: 1, checksum: "c0ffee",
                errorKind: nil, error: nil)))
        }
        fixture.jobFarm.emit(.finished(job: id, failed: 0, cancelled: false))
        _ = try await fixture.wait(for: id) { $0.state == .completed }
        let rows = try await fixture.service.outputs(of: id).outputs
        #expect(rows.map(\.output) == [started, unstarted])
        #expect(rows.allSatisfy { $0.state == .written && $0.tiles == 4 && $0.retries == 1 && $0.checksum == "c0ffee" && $0.finishedAt != nil })
        #expect(rows[0].startedAt == start && rows[1].startedAt == nil, "\(rows)")
    }

    @Test func aFailedOutputKeepsItsErrorAndTheJobFails() async throws {
        let fixture = try ServerFixture()
        defer { fixture.remove() }
        try await fixture.service.start()
        let id = try await fixture.submit().id!
        let output = fixture.root + "/out/mate-FreshFlower.png"
        fixture.jobFarm.emit(.accepted(job: id, outputs: 2, upToDate: 0))
        fixture.jobFarm.emit(.outputFinished(job: id, OutputOutcome(
            status: .failed, output: output, pixels: 0, tiles: 0, seconds: 0.1, retries: 0, checksum: nil,
            errorKind: "decode", error: "in/mate-FreshFlower.jpg: truncated")))
        fixture.jobFarm.emit(.finished(job: id, failed: 1, cancelled: false))
        let job = try await fixture.wait(for: id) { $0.state == .failed }
        #expect(job.state == .failed && job.outputsFailed == 1)
        let outputs = try await fixture.service.outputs(of: id).outputs
        #expect(outputs.first?.errorKind == "decode")
        #expect(outputs.first?.error == "in/mate-FreshFlower.jpg: truncated")

        let retried = try await fixture.service.request(.retryRequested, job: id)
        #expect(retried.state == .active)
        try await fixture.settled()
        #expect(fixture.jobFarm.submitted.last?.retryFailed == true)
    }

    /// A job's problems fill its `error` up to 20 lines, each cut at 1,000 bytes, then one line
    /// counts the rest: every event repeats the job, so thousands of problems (an input left
    /// out each) must not make every event, and the log, grow with them.
    @Test func aJobsErrorKeepsItsFirstProblemsAndCountsTheRest() async throws {
        let fixture = try ServerFixture()
        defer { fixture.remove() }
        try await fixture.service.start()
        let id = try await fixture.submit().id!
        let long = String(repeating: "x", count: 5000)
        for index in 1...2000 { fixture.jobFarm.emit(.problem(job: id, index == 3 ? long : "input \(index) is left out", refusal: nil)) }
        fixture.jobFarm.emit(.finished(job: id, failed: 0, cancelled: false))
        let job = try await fixture.wait(for: id) { $0.state.isFinished }
        let lines = (job.error ?? "").split(separator: "\n").map(String.init)
        #expect(lines.count == 21)
        #expect(lines.first == "input 1 is left out" && lines[19] == "input 20 is left out")
        #expect(lines[2] == String(repeating: "x", count: 1000) + "…")
        #expect(lines.last == "… and 1980 more problems")
    }

    @Test func cancelPauseAndResumeReachTheFarm() async throws {
        let fixture = try ServerFixture()
        defer { fixture.remove() }
        try await fixture.service.start()
        let id = try await fixture.submit().id!
        #expect(try await fixture.service.request(.pauseRequested, job: id).state == .paused)
        #expect(try await fixture.service.request(.resumeRequested, job: id).state == .active)
        #expect(try await fixture.service.request(.cancelRequested, job: id).state == .cancelling)
        #expect(fixture.jobFarm.calls == ["submit \(id)", "pause \(id)", "resume \(id)", "cancel \(id)"])
        fixture.jobFarm.emit(.finished(job: id, failed: 0, cancelled: true))
        #expect(try await fixture.wait(for: id) { $0.state == .cancelled }.state == .cancelled)
        await #expect(throws: ServiceError.self) { try await fixture.service.request(.pauseRequested, job: id) }
    }

    /// Outputs cancelled before they started are counted, without a row each: the outputs a
    /// job lists are those started (docs/api.md), and a million-output job cancelled early
    /// stored a row for each (17 s before it was `cancelled`).
    @Test func outputsCancelledBeforeTheyStartAreCountedWithoutRows() async throws {
        let fixture = try ServerFixture()
        defer { fixture.remove() }
        try await fixture.service.start()
        let id = try await fixture.submit().id!
        let output = fixture.root + "/out/plasma-Kite.png"
        fixture.jobFarm.emit(.accepted(job: id, outputs: 12, upToDate: 0))
        fixture.jobFarm.emit(.outputStarted(job: id, output: output, tiles: 4))
        #expect(try await fixture.service.request(.cancelRequested, job: id).state == .cancelling)
        fixture.jobFarm.emit(.outputFinished(job: id, OutputOutcome(
            status: .cancelled, output: output, pixels: 0, tiles: 1, seconds: 0.1, retries: 0, checksum: nil,
            errorKind: nil, error: nil)))
        fixture.jobFarm.emit(.outputsCancelled(job: id, count: 11))
        fixture.jobFarm.emit(.finished(job: id, failed: 0, cancelled: true))
        let job = try await fixture.wait(for: id) { $0.state == .cancelled }
        #expect(job.outputsCancelled == 12)
        #expect(job.outputsWritten == 0 && job.outputsFailed == 0)
        let rows = try await fixture.service.outputs(of: id).outputs
        #expect(rows.map(\.output) == [output])
        #expect(rows.first?.state == .cancelled)
    }

    /// A job cancelled in the queue never reaches the farm: each of its outputs is counted as
    /// cancelled before it started, as in a job the farm cancelled (written, failed and
    /// cancelled add up to its outputs).
    @Test func aJobCancelledInTheQueueCountsEachOutputCancelled() async throws {
        let fixture = try ServerFixture()
        defer { fixture.remove() }
        try await fixture.service.start()
        _ = try await fixture.submit()
        let queued = try await fixture.submit()
        #expect(queued.state == .queued && queued.outputsTotal == 2)
        let cancelled = try await fixture.service.request(.cancelRequested, job: queued.id!)
        #expect(cancelled.state == .cancelled)
        #expect(cancelled.outputsCancelled == 2 && cancelled.outputsWritten == 0 && cancelled.outputsFailed == 0)
        #expect(try await fixture.service.outputs(of: queued.id!).outputs.isEmpty)
    }

    /// Tiles come by the hundred a second: their counts are stored and published together
    /// (at most every progress interval), not one transaction and one event each; the last
    /// ones are stored without waiting for another event.
    @Test func tilesRenderedAreStoredAndPublishedTogether() async throws {
        let fixture = try ServerFixture(progressInterval: .milliseconds(200))
        defer { fixture.remove() }
        try await fixture.service.start()
        let id = try await fixture.submit().id!
        let output = fixture.root + "/out/plasma-Kite.png"
        fixture.jobFarm.emit(.accepted(job: id, outputs: 2, upToDate: 0))
        fixture.jobFarm.emit(.outputStarted(job: id, output: output, tiles: 100))
        try await fixture.wait(for: id) { $0.tilesTotal == 100 }
        let events = fixture.service.hub.subscribe()
        let lastLogged = try fixture.store.lastEventID()
        for done in 1...100 { fixture.jobFarm.emit(.tilesDone(job: id, output: output, done: done, total: 100)) }
        let job = try await fixture.wait(for: id) { $0.tilesDone == 100 }
        fixture.service.hub.finish()
        var progress = 0
        for await event in events where event.kind == .progress { progress += 1 }
        #expect(job.tilesDone == 100)
        #expect(try await fixture.service.outputs(of: id).outputs.first?.tilesDone == 100)
        #expect((1...10).contains(progress), "\(progress) progress events for 100 tiles")
        #expect(try fixture.store.lastEventID() == lastLogged)  // progress is not kept in the log
    }

    /// Outputs that fail at once (inputs that are not images) end by the thousand a second:
    /// their ends are stored and published together, a transaction and an `output` event for
    /// each ``FarmService/outputBatch`` of them (or each progress interval, or before the
    /// job's next other change), not one each; every one is stored with its job's counts.
    /// One each, 200,000 took over a minute to store, and their job's cancel waited behind
    /// them.
    @Test func outputsEndedAtOnceAreStoredTogetherEveryOne() async throws {
        // An interval longer than the test: only the batch and the job's end store them.
        let fixture = try ServerFixture(progressInterval: .seconds(600))
        defer { fixture.remove() }
        try await fixture.service.start()
        let id = try await fixture.submit().id!
        let count = 2 * FarmService.outputBatch + 500
        fixture.jobFarm.emit(.accepted(job: id, outputs: count, upToDate: 0))
        _ = try await fixture.wait(for: id) { $0.outputsTotal == count }
        let lastLogged = try fixture.store.lastEventID()
        for index in 0..<count {
            fixture.jobFarm.emit(.outputFinished(job: id, OutputOutcome(
                status: .failed, output: fixture.root + "/out/\(index).png", pixels: 0, tiles: 0, seconds: 0, retries: 0,
                checksum: nil, errorKind: "decode", error: "in/\(index).jpg: not an image")))
        }
        fixture.jobFarm.emit(.finished(job: id, failed: count, cancelled: false))
        let job = try await fixture.wait(for: id) { $0.state == .failed }
        #expect(job.outputsFailed == count)
        let outputs = try await fixture.service.outputs(of: id).outputs
        #expect(outputs.count == count && outputs.allSatisfy { $0.state == .failed && $0.errorKind == "decode" })
        // Three `output` events (two full batches, then the rest before the job's end), and
        // the job's end.
        let logged = try fixture.store.events(after: lastLogged)
        #expect(logged.filter { $0.kind == .output }.count == 3, "\(logged.map(\.kind))")
        #expect(logged.count < 10, "\(logged.count) events for \(count) outputs")
    }

    /// Outputs start by the thousand a second too (small photos): in a running job their
    /// starts are stored with the ends (each progress interval, each ``FarmService/outputBatch``,
    /// or before the job's next other change), a transaction and an `output` event for many;
    /// one each made a served job of 64 x 48 photos 1.6x `run`'s time. In a job the farm holds
    /// (paused) an output that starts is stored at once: a client that sees none rendering
    /// there sees every output the farm still renders.
    @Test func outputsStartedAreStoredTogetherUnlessTheFarmHoldsTheJob() async throws {
        // An interval longer than the test: only the job's changes and a held job store them.
        let fixture = try ServerFixture(progressInterval: .seconds(600))
        defer { fixture.remove() }
        try await fixture.service.start()
        let id = try await fixture.submit().id!
        fixture.jobFarm.emit(.accepted(job: id, outputs: 100, upToDate: 0))
        _ = try await fixture.wait(for: id) { $0.outputsTotal == 100 }
        let lastLogged = try fixture.store.lastEventID()
        for index in 0..<50 { fixture.jobFarm.emit(.outputStarted(job: id, output: fixture.root + "/out/\(index).png", tiles: 1)) }
        // The job's next change (a problem the farm tells) stores them first, together.
        fixture.jobFarm.emit(.problem(job: id, "in/x.jpg: unreadable", refusal: nil))
        let told = try await fixture.wait(for: id) { $0.error != nil }
        #expect(told.tilesTotal == 50)
        #expect(try await fixture.service.outputs(of: id).outputs.filter { $0.state == .rendering }.count == 50)
        let logged = try fixture.store.events(after: lastLogged)
        #expect(logged.map(\.kind) == [.output, .job], "\(logged.map(\.kind))")

        // Started before the pause: stored with it, before it.
        for index in 50..<60 { fixture.jobFarm.emit(.outputStarted(job: id, output: fixture.root + "/out/\(index).png", tiles: 1)) }
        try await eventually("the ten starts taken") { await fixture.service.outputChangesWaiting == 10 }
        let beforePause = try fixture.store.lastEventID()
        #expect(try await fixture.service.request(.pauseRequested, job: id).state == .paused)
        #expect(try await fixture.service.outputs(of: id).outputs.filter { $0.state == .rendering }.count == 60)
        #expect(try fixture.store.events(after: beforePause).map(\.kind) == [.output, .job])
        #expect(fixture.jobFarm.calls.contains("pause \(id)"))
        fixture.jobFarm.emit(.outputStarted(job: id, output: fixture.root + "/out/late.png", tiles: 7))
        try await eventually("the output started in the paused job stored") { () async throws -> Bool in
            try await fixture.service.outputs(of: id).outputs.contains { $0.output.hasSuffix("/out/late.png") && $0.state == .rendering }
        }
        #expect(try await fixture.service.job(id).tilesTotal == 67)
    }

    /// A manifest submitted by cron every night keeps its last `jobs-kept` finished jobs in
    /// the queue, not every night's outputs' rows: once one finishes, the older finished jobs of
    /// the same manifest go with their rows. Another manifest's jobs, and the manifest's jobs
    /// that have not finished, stay.
    @Test func theQueueKeepsTheLastFinishedJobsOfAManifest() async throws {
        var configuration = FarmConfiguration()
        configuration.jobsKept = 2
        let fixture = try ServerFixture(configuration: configuration)
        defer { fixture.remove() }
        try await fixture.service.start()
        /// Job `id` finished, five outputs of it written.
        func finish(_ id: Int64) async throws {
            fixture.jobFarm.emit(.accepted(job: id, outputs: 5, upToDate: 0))
            for index in 0..<5 {
                fixture.jobFarm.emit(.outputFinished(job: id, OutputOutcome(
                    status: .written, output: fixture.root + "/out/\(index).png", pixels: 64, tiles: 1, seconds: 0.1, retries: 0,
                    checksum: "c0ffee", errorKind: nil, error: nil)))
            }
            fixture.jobFarm.emit(.finished(job: id, failed: 0, cancelled: false))
            try await fixture.wait(for: id) { $0.state == .completed }
        }
        let other = try await fixture.submit(name: "other.job").id!
        try await finish(other)
        var nightly: [Int64] = []
        for _ in 0..<3 {
            nightly.append(try await fixture.submit().id!)
            try await finish(nightly.last!)
        }
        let running = try await fixture.submit().id!
        try await eventually("the oldest finished nightly job removed") { () async throws -> Bool in
            try fixture.store.job(nightly[0]) == nil
        }
        #expect(try fixture.store.outputs(of: nightly[0]).isEmpty)
        for kept in nightly[1...] + [other] {
            #expect(try fixture.store.job(kept)?.state == .completed && fixture.store.outputs(of: kept).count == 5, "job \(kept)")
        }
        #expect(try fixture.store.job(running)?.state == .active)
        #expect(try await fixture.service.jobs(states: nil, limit: nil).compactMap(\.id).sorted() == ([other, running] + nightly[1...]).sorted())
        // The rows go a chunk at a time, then the job.
        let job = try #require(try fixture.store.job(nightly[1]))
        #expect(try fixture.store.forgetFinished(name: job.name, manifest: job.manifest, keeping: 1, chunk: 2) == [nightly[1]])
        #expect(try fixture.store.job(nightly[1]) == nil && fixture.store.outputs(of: nightly[1]).isEmpty)
        #expect(try fixture.store.job(nightly[2]) != nil && fixture.store.job(running) != nil)
    }

    @Test func aHighPriorityJobSubmittedBehindOthersGoesToTheFarmAtOnce() async throws {
        let fixture = try ServerFixture(depth: 1)
        defer { fixture.remove() }
        try await fixture.service.start()
        let first = try await fixture.submit(priority: 50, name: "first.job").id!
        let second = try await fixture.submit(priority: 50, name: "second.job").id!
        let third = try await fixture.submit(priority: 50, name: "third.job").id!
        let urgent = try await fixture.submit(priority: 90, name: "urgent.job").id!
        #expect(fixture.jobFarm.submitted.map(\.id) == [first, urgent])
        #expect(try await fixture.service.job(second).state == .queued)
        fixture.jobFarm.emit(.finished(job: first, failed: 0, cancelled: false))
        fixture.jobFarm.emit(.finished(job: urgent, failed: 0, cancelled: false))
        try await fixture.wait(for: second) { $0.state == .active }
        try await fixture.settled()
        #expect(fixture.jobFarm.submitted.map(\.id) == [first, urgent, second])
        #expect(try await fixture.service.job(third).state == .queued)
    }

    @Test func anInvalidManifestIsRefusedWithCheckDiagnostics() async throws {
        let fixture = try ServerFixture()
        defer { fixture.remove() }
        try await fixture.service.start()
        let text = ServerFixture.manifest.replacingOccurrences(of: "sigma: 2", with: "sigam: 2")
        var message = ""
        do {
            _ = try await fixture.service.submit(SubmitRequest(manifest: text, folder: fixture.root, name: "mine.job"))
        } catch {
            if case .invalidManifest = error { message = error.description }
        }
        #expect(message.contains(fixture.root + "/mine.job:8:11: error: unknown key 'sigam'"), "\(message)")
        #expect(try await fixture.service.jobs(states: nil, limit: nil).isEmpty)
    }

    @Test func pathsOutsideTheRootsAreRefusedBeforeAnyWork() async throws {
        let fixture = try ServerFixture()
        defer { fixture.remove() }
        try await fixture.service.start()
        let outside = fixture.folder.appendingPathComponent("elsewhere").path
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        let escapes = ServerFixture.manifest.replacingOccurrences(of: "path: out/", with: "path: ../elsewhere/")
        let linked = ServerFixture.manifest.replacingOccurrences(of: "path: out/", with: "path: link/")
        let mapped = ServerFixture.manifest + "map: ../elsewhere/images.json\n"
        try FileManager.default.createSymbolicLink(atPath: fixture.root + "/link", withDestinationPath: outside)
        for request in [
            SubmitRequest(manifest: ServerFixture.manifest, folder: outside),
            SubmitRequest(manifest: escapes, folder: fixture.root),
            SubmitRequest(manifest: linked, folder: fixture.root),
            SubmitRequest(manifest: mapped, folder: fixture.root),
            SubmitRequest(path: "/etc/hostname"),
        ] {
            await #expect {
                _ = try await fixture.service.submit(request)
            } throws: { error in
                guard case ServiceError.outsideRoots = error else { return false }
                return true
            }
        }
        #expect(fixture.jobFarm.submitted.isEmpty)
        #expect(try await fixture.service.jobs(states: nil, limit: nil).isEmpty)
    }

    /// A region file beside an input that is a link out of the roots refuses the job (403),
    /// whatever the file holds: no line about it reaches the client.
    @Test func aRegionFileLinkedOutOfTheRootsRefusesTheJob() async throws {
        let fixture = try ServerFixture()
        defer { fixture.remove() }
        try await fixture.service.start()
        let secret = fixture.folder.appendingPathComponent("secret.txt").path
        try "not JSON".write(toFile: secret, atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(
            atPath: fixture.root + "/in/plasma-Kite.faces.json", withDestinationPath: secret)
        let manifest = ServerFixture.manifest + "    regions:\n      from: \"{stem}.faces.json\"\n      missing: skip\n"
        await #expect {
            _ = try await fixture.service.submit(SubmitRequest(manifest: manifest, folder: fixture.root))
        } throws: { error in
            guard case ServiceError.outsideRoots(let refused) = error else { return false }
            return refused.path.hasSuffix("plasma-Kite.faces.json") && !"\(error)".contains("JSON")
        }
        #expect(fixture.jobFarm.submitted.isEmpty)
    }

    /// An absolute input glob outside the roots is refused by its folder before it is walked:
    /// were it planned first, the planner's diagnostic (two of its files would write one output)
    /// would name files outside the roots.
    @Test func anAbsoluteGlobOutsideTheRootsIsRefusedBeforeItsFilesAreRead() async throws {
        let fixture = try ServerFixture()
        defer { fixture.remove() }
        try await fixture.service.start()
        let outside = fixture.folder.appendingPathComponent("elsewhere").path
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        for name in ["secret-name.jpg", "secret-name.png"] {
            #expect(FileManager.default.createFile(atPath: outside + "/" + name, contents: Data()))
        }
        let manifest = ServerFixture.manifest.replacingOccurrences(of: "[in/*.jpg]", with: "['\(outside)/*']")
        await #expect {
            _ = try await fixture.service.submit(SubmitRequest(manifest: manifest, folder: fixture.root))
        } throws: { error in
            guard case ServiceError.outsideRoots(let refused) = error else { return false }
            return refused.path == outside && !"\(error)".contains("secret")
        }
        #expect(fixture.jobFarm.submitted.isEmpty)
    }

    @Test func afterARestartUnfinishedJobsAreQueuedAgainAndHandedToTheNewFarm() async throws {
        let first = try ServerFixture()
        defer { first.remove() }
        try await first.service.start()
        let active = try await first.submit(name: "active.job").id!
        let paused = try await first.submit(name: "paused.job").id!
        _ = try await first.service.request(.pauseRequested, job: paused)
        await first.service.stop()

        let second = try ServerFixture(reusing: first)
        try await second.service.start()
        try await second.settled()
        #expect(try await second.service.job(active).state == .active)
        #expect(try await second.service.job(paused).state == .paused)
        #expect(second.jobFarm.submitted.map(\.id) == [active])
        #expect(try await second.service.request(.resumeRequested, job: paused).state == .active)
    }

    /// A manifest on the server that no longer checks when its job's turn comes: the job fails
    /// with the diagnostics and the refusal `invalid` (the client commands exit 2, as `run`).
    /// Another process holding the job's lock is the refusal `locked` (FarmBridge; the CLI
    /// test ClientCommandTests.aJobLockedByACronRunExits3AsRunWould).
    @Test func aManifestThatNoLongerChecksAtItsTurnIsRefusedAsInvalid() async throws {
        let fixture = try ServerFixture(depth: 1)
        defer { fixture.remove() }
        try await fixture.service.start()
        let first = try await fixture.submit().id!
        let path = fixture.root + "/later.job"
        try ServerFixture.manifest.write(toFile: path, atomically: true, encoding: .utf8)
        let later = try await fixture.service.submit(SubmitRequest(path: path)).id!
        #expect(try await fixture.service.job(later).state == .queued)
        try ServerFixture.manifest.replacingOccurrences(of: "sigma:", with: "sigam:")
            .write(toFile: path, atomically: true, encoding: .utf8)
        fixture.jobFarm.emit(.finished(job: first, failed: 0, cancelled: false))
        let job = try await fixture.wait(for: later) { $0.state.isFinished }
        #expect(job.state == .failed)
        #expect(job.refusal == .invalid)
        #expect(job.error?.contains("later.job:") == true, "\(job.error ?? "")")
        #expect(try await fixture.service.job(first).refusal == nil)
    }

    @Test func aJobTheFarmRefusesFailsWithTheReason() async throws {
        let fixture = try ServerFixture()
        defer { fixture.remove() }
        fixture.jobFarm.state.withLock { $0.refusal = "another run holds the lock of job 'served'" }
        try await fixture.service.start()
        // Refused once planned, after the submission answered.
        let job = try await fixture.service.job(try await fixture.submit().id!)
        #expect(job.state == .failed)
        #expect(job.error == "another run holds the lock of job 'served'")
    }

    @Test func everyChangeIsInTheEventLogInOrder() async throws {
        let fixture = try ServerFixture()
        defer { fixture.remove() }
        try await fixture.service.start()
        let id = try await fixture.submit().id!
        _ = try await fixture.service.request(.pauseRequested, job: id)
        let events = try fixture.store.events(after: 0)
        let states = events.filter { $0.kind == .job }.compactMap { event -> String? in
            let object = try? JSONSerialization.jsonObject(with: Data(event.data.utf8)) as? [String: Any]
            return object?["state"] as? String
        }
        #expect(states == ["queued", "active", "paused"])
        #expect(events.map(\.id!) == events.map(\.id!).sorted())
    }
}

/// The queue's database on its own.
@Suite struct QueueStoreTests {
    @Test func theDatabaseIsInWALModeAndKeepsJobsAcrossReopening() async throws {
        let fixture = try ServerFixture()
        defer { fixture.remove() }
        let mode = try fixture.store.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") }
        #expect(mode == "wal")
        try await fixture.service.start()
        let id = try await fixture.submit(priority: 5).id!
        let reopened = try QueueStore(path: fixture.store.path)
        #expect(try reopened.job(id)?.name == "served")
        #expect(try reopened.job(id)?.manifestText == ServerFixture.manifest)
        #expect(try reopened.countsByState() == [.active: 1])
    }

    @Test func aFileThatIsNotADatabaseIsAnErrorNamingIt() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("blurfarm-q-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("queue.sqlite").path
        try Data(repeating: 7, count: 4096).write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try QueueStore(path: path)
        } throws: { error in
            "\(error)".hasPrefix(path + ": the queue database: ")
        }
    }
}
