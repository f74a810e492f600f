@testable import BlurfarmServer
import BlurfarmTestSupport
import Foundation
import Testing

/// The event stream (`GET /api/v1/events`): what a client connecting gets, and the
/// keep-alive comments of an idle stream.
@Suite(.timeLimit(.minutes(2))) struct EventStreamTests {
    /// A change made after the server took a client's request (the stream is opened) and
    /// before the stream's body runs is sent, once: the stream's start in the log is read
    /// before it subscribes, and the log is replayed from there.
    @Test func aChangeMadeWhileAClientConnectsIsSentOnce() async throws {
        let fixture = try ServerFixture()
        defer { fixture.remove() }
        try await fixture.service.start()
        let id = try await fixture.submit().id!
        let stream = EventStream(service: fixture.service, after: nil, keepAlive: .seconds(3600))
        _ = try await fixture.service.request(.pauseRequested, job: id)
        fixture.service.hub.finish()  // the live part ends after what it has
        var text = ""
        try await stream.send { text += $0 }
        #expect(text.components(separatedBy: "\"state\":\"paused\"").count == 2, "\(text)")
        #expect(!text.contains("\"state\":\"active\""), "\(text)")
        #expect(text.contains(": connected\n\n"))
    }

    /// A client that gives the last id it saw gets the log after it, then the live changes.
    @Test func aClientGivingItsLastIDGetsTheLogAfterIt() async throws {
        let fixture = try ServerFixture()
        defer { fixture.remove() }
        try await fixture.service.start()
        let id = try await fixture.submit().id!
        let seen = try fixture.store.lastEventID()
        _ = try await fixture.service.request(.pauseRequested, job: id)
        let stream = EventStream(service: fixture.service, after: seen, keepAlive: .seconds(3600))
        _ = try await fixture.service.request(.resumeRequested, job: id)
        fixture.service.hub.finish()
        var text = ""
        try await stream.send { text += $0 }
        let paused = try #require(text.range(of: "\"state\":\"paused\""))
        let resumed = try #require(text.range(of: "\"state\":\"active\""))
        #expect(paused.upperBound <= resumed.lowerBound)
        #expect(text.components(separatedBy: "\"state\":\"active\"").count == 2, "\(text)")
        #expect(text.contains("id: \(seen + 1)\n"))
    }

    /// An idle stream gets a keep-alive comment every `keepAlive` (15 s by default), read here
    /// by curl, so that a proxy does not close it.
    @Test(.tags(.process)) func anIdleStreamGetsKeepAliveComments() async throws {
        #expect(ServerSettings().keepAlive == .seconds(15))
        let server = try await RunningServer.start(try ServerFixture(), keepAlive: .milliseconds(200))
        let stream = try await CurlOutput(["-N", server.base + "/api/v1/events"])
        try await stream.wait { $0.contains(": keep-alive\n\n") }
        let text = await stream.close()
        await server.stop()
        #expect(text.hasPrefix(": connected\n\n"), "\(text)")
        #expect(text.contains(": keep-alive\n\n"), "\(text)")
    }

    /// `Last-Event-ID` (and `after`) take any whole number, as docs/openapi.yaml says (no
    /// maximum): one past the log's end, however long (the value schemathesis sent), starts the
    /// stream at the end, so the client gets the next change and nothing before it; what is not
    /// a whole number is 400. Read by curl.
    @Test(.tags(.process)) func anyWholeNumberIsAnEventIDAndOnePastTheEndStartsAtTheEnd() async throws {
        let fixture = try ServerFixture()
        let server = try await RunningServer.start(fixture)
        let submitted = try await server.call("POST", "/api/v1/jobs", json: ["manifest": ServerFixture.manifest, "folder": fixture.root])
        #expect(submitted.status == 201, "\(submitted.text)")
        let huge = "14842173916487036177267298875824144384"
        let stream = try await CurlOutput(["-N", "-H", "Last-Event-ID: \(huge)", server.base + "/api/v1/events"])
        try await stream.wait { $0.contains(": connected\n\n") }
        let id = try #require(submitted.object["id"] as? Int)
        _ = try await server.call("POST", "/api/v1/jobs/\(id)/pause")
        try await stream.wait { $0.contains("\"state\":\"paused\"") }
        let text = await stream.close()
        let byQuery = try await CurlOutput(["-N", server.base + "/api/v1/events?after=\(huge)"])
        try await byQuery.wait { $0.contains(": connected\n\n") }
        _ = await byQuery.close()
        var refused: [String: Int] = [:]
        for bad in ["-1", "+5", "1e3", "x"] {
            refused[bad] = try await server.call("GET", "/api/v1/events", headers: ["Last-Event-ID": bad]).status
        }
        await server.stop()
        // Only the change made after the client connected: no event of the job's submission.
        #expect(text.components(separatedBy: "event: job").count == 2, "\(text)")
        #expect(refused.values.allSatisfy { $0 == 400 }, "\(refused)")
    }
}
