import BlurfarmAPI
import BlurfarmTestSupport
import Foundation
import Synchronization
@testable import BlurfarmServer
import Testing

/// A manifest is planned off the service's actor (issue 47): every other call is answered
/// while it plans, at submission and again when its turn comes (after waiting in the queue: a
/// job that goes to the farm as it is submitted takes the plan it was checked with), and a job
/// cancelled while it plans stops planning and never reaches the farm. Each plan is held
/// halfway (``PlanHold``): on the actor, the calls made meanwhile would never be answered.
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
        let manifest = try Self.largeManifest(in: fixture, inputs: 200, variants: 4)
        let service = fixture.service
        // Its submission's plan, held halfway through its inputs: the queue and another
        // client's submission are answered meanwhile.
        let checking = PlanHold(job: nil)
        await service.tellPlanningAsks(checking.asked)
        let answered = Mutex(false)
        let submission = Task {
            defer { answered.withLock { $0 = true } }
            return try await service.submit(SubmitRequest(manifest: manifest, folder: fixture.root, name: "large.job"))
        }
        try await eventually("the large manifest's plan to be held") { () async in checking.isHeld }
        let listed = try await service.jobs(states: nil, limit: nil)
        let small = try await service.submit(SubmitRequest(manifest: ServerFixture.manifest, folder: fixture.root, name: "small.job"))
        #expect(listed.isEmpty)
        #expect(small.state == .active && small.outputsTotal == 2)
        #expect(!answered.withLock { $0 })
        checking.release()
        let large = try await submission.value
        #expect(large.outputsTotal == 800)
        #expect(large.state == .queued)
        // Its turn, after the small job: planned again as its files are now, held again, still
        // answering, and cancelled while it plans: the planner stops at its next question.
        let dispatching = PlanHold(job: large.id!)
        await service.tellPlanningAsks(dispatching.asked)
        fixture.jobFarm.emit(.finished(job: small.id!, failed: 0, cancelled: false))
        _ = try await fixture.wait(for: large.id!) { $0.state == .active }
        try await eventually("the dispatched job's plan to be held") { () async in dispatching.isHeld }
        #expect(await service.plansInProgress == 1)
        #expect(try await service.jobs(states: [.completed], limit: nil).map(\.id) == [small.id])
        let cancelling = try await service.request(.cancelRequested, job: large.id!)
        #expect(cancelling.state == .cancelling)
        dispatching.release()
        let cancelled = try await fixture.wait(for: large.id!) { $0.state == .cancelled }
        #expect(cancelled.state == .cancelled)
        // Its outputs, none started, are counted as cancelled.
        #expect(cancelled.outputsCancelled == 800 && cancelled.outputsWritten == 0, "\(cancelled)")
        #expect(dispatching.asks == PlanHold.heldAt, "the plan went on after it was cancelled")
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
        let manifest = try Self.largeManifest(in: fixture, inputs: 200, variants: 4)
        let service = fixture.service
        let small = try await fixture.submit(name: "small.job")
        let large = try await service.submit(SubmitRequest(manifest: manifest, folder: fixture.root, name: "large.job"))
        #expect(large.state == .queued)
        let dispatching = PlanHold(job: large.id!)
        await service.tellPlanningAsks(dispatching.asked)
        fixture.jobFarm.emit(.finished(job: small.id!, failed: 0, cancelled: false))
        _ = try await fixture.wait(for: large.id!) { $0.state == .active }
        try await eventually("the dispatched job's plan to be held") { () async in dispatching.isHeld }
        #expect(try await service.request(.pauseRequested, job: large.id!).state == .paused)
        #expect(fixture.jobFarm.calls == ["submit \(small.id!)"], "the farm was told of a job it did not have")
        dispatching.release()
        try await fixture.settled()
        #expect(dispatching.asks > PlanHold.heldAt, "the plan did not go on once released")
        #expect(
            fixture.jobFarm.calls == ["submit \(small.id!)", "submit \(large.id!)", "pause \(large.id!)"],
            "\(fixture.jobFarm.calls)")
        #expect(try await service.job(large.id!).state == .paused)
    }
}

/// Holds one job's plan (nil: a submission's check) on its planner's thread at its
/// ``heldAt``th question whether to stop, halfway through the large manifest's 200 inputs, until
/// released (``FarmService/tellPlanningAsks(_:)``): a plan in progress made, not raced for.
final class PlanHold: Sendable {
    /// The question the plan is held at.
    static let heldAt = 100
    private let job: Int64?
    private let state = Mutex((asks: 0, held: false))
    private let released = DispatchSemaphore(value: 0)

    init(job: Int64?) { self.job = job }

    /// The planner's question, for ``FarmService/tellPlanningAsks(_:)``: the ``heldAt``th of
    /// the job's waits to be released.
    @Sendable func asked(_ job: Int64?) {
        guard job == self.job else { return }
        let holds = state.withLock { state in
            state.asks += 1
            if state.asks == Self.heldAt { state.held = true }
            return state.asks == Self.heldAt
        }
        if holds { released.wait() }
    }

    /// Whether the plan has reached its hold (and may have gone on since).
    var isHeld: Bool { state.withLock { $0.held } }
    /// The questions the job's plans asked.
    var asks: Int { state.withLock { $0.asks } }

    func release() { released.signal() }
}
