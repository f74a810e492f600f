import BlurfarmTestSupport
import Foundation
import Testing

/// A large manifest served by `blurfarm serve`, over HTTP from real clients (issue 47): while
/// its submission is planned, the job list, the metrics and another client's submission are
/// answered; submitted again, it waits in the queue behind itself (one lock), and cancelled
/// while it plans for the farm when its turn comes, it ends `cancelled` with no output started.
/// How long those answers take is measured by `scripts/serve-plan-probe.py`
/// (docs/performance.md), not here.
@Suite(.tags(.process), .blocking) struct ServedPlanningTests {
    @Test func otherClientsAreAnsweredWhileALargeManifestPlansAndItIsCancelledWhileItPlans() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // 1,000 empty `.jpg` files and 60 variants: 60,000 outputs, seconds of planning each
        // time the manifest is planned (planning reads no header).
        let many = folder.appendingPathComponent("many")
        try FileManager.default.createDirectory(at: many, withIntermediateDirectories: true)
        for index in 0..<1000 { _ = FileManager.default.createFile(atPath: many.appendingPathComponent("p\(index).jpg").path, contents: nil) }
        var lines = ["job: large", "inputs: [many/*.jpg]", "outputs:"]
        for index in 0..<60 { lines += ["  - name: v\(index)", "    path: out/v\(index)/{stem}.png"] }
        let large = folder.appendingPathComponent("large.job").path
        try (lines.joined(separator: "\n") + "\n").write(toFile: large, atomically: true, encoding: .utf8)
        try ServedFarm.addPhotos(to: folder, count: 1)
        let server = try ServedFarm(folder: folder, workers: 1)
        defer { server.stop() }
        let small = try server.writeJob("small")

        // The large submission, from curl: answered once its plan is made (by curl, which
        // waits as long as that takes: the plan is background work, and on a loaded machine
        // it waits for the cores).
        let submission = try CurlSubmission(large, to: server)
        try eventually("the large manifest's plan to start") {
            guard submission.process.isRunning else {
                throw ServeFailure(message: "the large submission was answered before its plan was seen")
            }
            return try server.metrics()["blurfarm_plans_in_progress"] == 1
        }
        // Meanwhile, other clients: the queue (empty yet), the metrics, another submission.
        let (listStatus, list) = try server.call("GET", "/api/v1/jobs")
        let metrics = try server.metrics()
        let smallID = try server.submit(small)
        try #require(submission.process.isRunning, "the large manifest's plan ended before the other calls were answered")
        #expect(listStatus == 200)
        #expect((list["jobs"] as? [Any])?.isEmpty == true, "\(list)")
        #expect(metrics["blurfarm_plans_total"] != nil)
        #expect(try server.finished(smallID)["state"] as? String == "completed")

        let first = try submission.answer()
        let firstID = try #require(first["id"] as? Int)
        #expect(first["outputsTotal"] as? Int == 60_000)

        // Paused, so that its outputs leave the cores to the plans that follow (and it does
        // not end before them); submitted again, it waits for itself: both would take one lock.
        #expect(try server.call("POST", "/api/v1/jobs/\(firstID)/pause").1["state"] as? String == "paused")
        let secondID = try #require(try CurlSubmission(large, to: server).answer()["id"] as? Int)
        #expect(try server.call("GET", "/api/v1/jobs/\(secondID)").1["state"] as? String == "queued")
        #expect(try server.call("POST", "/api/v1/jobs/\(firstID)/cancel").0 == 200)
        #expect(try server.finished(firstID)["state"] as? String == "cancelled")
        // Its turn: planned again for the farm, as its files are now, and cancelled meanwhile.
        try eventually("the second job's plan for the farm") {
            let state = try server.call("GET", "/api/v1/jobs/\(secondID)").1["state"] as? String
            guard state == "queued" || state == "active" else {
                throw ServeFailure(message: "the second job is \(state ?? "?") before it was cancelled")
            }
            return try state == "active" && server.metrics()["blurfarm_plans_in_progress"] == 1
        }
        let (cancelStatus, cancelling) = try server.call("POST", "/api/v1/jobs/\(secondID)/cancel")
        #expect(cancelStatus == 200)
        #expect(["cancelling", "cancelled"].contains(cancelling["state"] as? String ?? ""), "\(cancelling)")
        let cancelled = try server.finished(secondID)
        #expect(cancelled["state"] as? String == "cancelled")
        #expect(try server.metrics()["blurfarm_plans_in_progress"] == 0)
        // It never reached the farm: no output started, none written or failed.
        #expect(try server.outputs(of: secondID).isEmpty)
        #expect(cancelled["outputsWritten"] as? Int == 0 && cancelled["outputsFailed"] as? Int == 0, "\(cancelled)")
        // Each of its outputs is counted: cancelled before it started, or up to date.
        let counted = ["outputsCancelled", "outputsUpToDate"].map { cancelled[$0] as? Int ?? -1 }.reduce(0, +)
        #expect(counted == 60_000, "\(cancelled)")
    }
}

/// `POST /api/v1/jobs` of a manifest by its path, from curl, which waits for the answer as
/// long as it takes.
private struct CurlSubmission {
    let process = Process()
    private let output = Pipe()

    init(_ manifest: String, to server: ServedFarm) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = [
            "-s", "-X", "POST", "-H", "Content-Type: application/json", "-d", "{\"path\": \"\(manifest)\"}",
            "-w", "\n%{http_code}", server.base + "/api/v1/jobs",
        ]
        process.standardOutput = output
        try process.run()
    }

    /// The job it queued, once answered: 201 or the test fails.
    func answer(sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let (body, status) = text.lastIndex(of: "\n").map { (text[..<$0], text[text.index(after: $0)...]) } ?? ("", text[...])
        try #require(status == "201", "\(text.prefix(2000))", sourceLocation: sourceLocation)
        return try #require(
            (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any], "\(body.prefix(2000))",
            sourceLocation: sourceLocation)
    }
}
