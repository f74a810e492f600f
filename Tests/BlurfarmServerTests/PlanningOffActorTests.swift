import BlurfarmAPI
import BlurfarmTestSupport
import Foundation
import Synchronization
@testable import BlurfarmServer
import Testing

/// A large manifest is planned off the service's actor (issue 47): every other call is
/// answered while it plans, at submission and again when its turn comes (after waiting in the
/// queue: a job that goes to the farm as it is submitted takes the plan it was checked with),
/// and a job cancelled while it plans stops planning and never reaches the farm.
@Suite(.timeLimit(.minutes(5))) struct PlanningOffActorTests {
    /// `inputs` empty `.jpg` files under `many/` and a manifest of `variants` variants over them
    /// (planning reads no header: every output of every input is planned).
    static func largeManifest(in fixture: ServerFixture, inputs: Int, variants: Int) throws -> String {
        let folder = fixture.root + "/many"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for index in 0..<inputs { _ = FileManager.default.createFile(atPath: "\(folder)/p\(index).jpg", contents: nil) }
        var lines = ["job: large", "inputs: [many/*.jpg]", "outputs:"]
        for index in 0..<variants {
            lines += ["  - name: v\(index)", "    path: out/v\(index)/{stem}.png", "    filters:", "      - gaussian:", "          sigma: 1"]
        }
        return lines.joined(separator: "\n") + "\n"
    }

    @Test func otherCallsAreAnsweredWhileAJobPlansAndCancellingItStopsThePlan() async throws {
        // One job in the farm at a time: the large one waits for the small one.
        let fixture = try ServerFixture(depth: 1)
        defer { fixture.remove() }
        try await fixture.service.start()
        // 40,000 outputs: seconds of planning, each time it is planned.
        let manifest = try Self.largeManifest(in: fixture, inputs: 200, variants: 200)
        let service = fixture.service
        let answered = Mutex(false)
        let submission = Task {
            defer { answered.withLock { $0 = true } }
            return try await service.submit(SubmitRequest(manifest: manifest, folder: fixture.root, name: "large.job"))
        }
        // Its submission's plan: the queue and another client's submission are answered meanwhile.
        try await eventually("the large manifest's plan to start") { await service.plansInProgress == 1 }
        let listed = try await service.jobs(states: nil, limit: nil)
        let small = try await service.submit(SubmitRequest(manifest: ServerFixture.manifest, folder: fixture.root, name: "small.job"))
        #expect(listed.isEmpty)
        #expect(small.state == .active && small.outputsTotal == 2)
        try #require(!answered.withLock { $0 }, "the large manifest was planned before the other calls were answered")
        let large = try await submission.value
        #expect(large.outputsTotal == 40_000)
        #expect(large.state == .queued)
        // Its turn, after the small job: planned again as its files are now, still answering,
        // and cancelled while it plans.
        fixture.jobFarm.emit(.finished(job: small.id!, failed: 0, cancelled: false))
        _ = try await fixture.wait(for: large.id!) { $0.state == .active }
        try #require(await service.plansInProgress == 1)
        #expect(try await service.jobs(states: [.completed], limit: nil).map(\.id) == [small.id])
        let cancelling = try await service.request(.cancelRequested, job: large.id!)
        #expect(cancelling.state == .cancelling)
        let cancelled = try await fixture.wait(for: large.id!) { $0.state == .cancelled }
        #expect(cancelled.state == .cancelled)
        #expect(await service.plansInProgress == 0)
        #expect(!fixture.jobFarm.calls.contains("submit \(large.id!)"), "\(fixture.jobFarm.calls)")
    }

    /// Paused while it plans for the farm, a job reaches the farm paused (it was told nothing
    /// while it planned: the farm did not have it).
    @Test func aJobPausedWhileItPlansReachesTheFarmPaused() async throws {
        // One job in the farm at a time: the large one waits for the small one.
        let fixture = try ServerFixture(depth: 1)
        defer { fixture.remove() }
        try await fixture.service.start()
        let manifest = try Self.largeManifest(in: fixture, inputs: 200, variants: 200)
        let service = fixture.service
        let small = try await fixture.submit(name: "small.job")
        let large = try await service.submit(SubmitRequest(manifest: manifest, folder: fixture.root, name: "large.job"))
        #expect(large.state == .queued)
        fixture.jobFarm.emit(.finished(job: small.id!, failed: 0, cancelled: false))
        _ = try await fixture.wait(for: large.id!) { $0.state == .active }
        try #require(await service.plansInProgress == 1, "the dispatched job's plan ended before it could be paused")
        #expect(try await service.request(.pauseRequested, job: large.id!).state == .paused)
        try await fixture.settled()
        #expect(
            fixture.jobFarm.calls == ["submit \(small.id!)", "submit \(large.id!)", "pause \(large.id!)"],
            "\(fixture.jobFarm.calls)")
        #expect(try await service.job(large.id!).state == .paused)
    }
}
