@testable import BlurfarmServer
import BlurfarmAPI
import BlurfarmTestSupport
import Foundation
import GRDB
import Testing

/// The event log stays small whatever is submitted (its events are changes, not copies of the
/// job's manifest), is trimmed to its retention, and a client's `after` is checked.
@Suite(.timeLimit(.minutes(2))) struct EventLogTests {
    /// A manifest of about a megabyte (a long comment) gives events that never repeat it: the
    /// whole log stays far below one copy of it, while the job's own answer has it.
    @Test func aLargeManifestIsNotRepeatedByTheJobsEvents() async throws {
        let fixture = try ServerFixture()
        defer { fixture.remove() }
        try await fixture.service.start()
        let padding = "# " + String(repeating: "x", count: 1000) + "\n"
        let text = ServerFixture.manifest + String(repeating: padding, count: 1000)
        let id = try await fixture.service.submit(SubmitRequest(manifest: text, folder: fixture.root)).id!
        for _ in 0..<20 {
            _ = try await fixture.service.request(.pauseRequested, job: id)
            _ = try await fixture.service.request(.resumeRequested, job: id)
        }
        let events = try fixture.store.events(after: 0, limit: 10_000)
        let stored = events.reduce(0) { $0 + $1.data.utf8.count }
        #expect(events.count >= 41)
        #expect(stored < text.utf8.count / 10, "the log holds \(stored) bytes for a \(text.utf8.count)-byte manifest")
        #expect(events.allSatisfy { !$0.data.contains("xxxxxxxxxx") })
        let job = try #require(events.last.map { try JSONSerialization.jsonObject(with: Data($0.data.utf8)) } as? [String: Any])
        #expect(job["manifestText"] is NSNull)
        #expect(job["state"] as? String == "active")
        #expect(try await fixture.service.job(id).manifestText == text)
    }

    /// Past its retention the log keeps only the newest events.
    @Test func theLogIsTrimmedToItsRetention() throws {
        let fixture = try ServerFixture()
        defer { fixture.remove() }
        let count = Int(QueueStore.eventRetention + 3 * QueueStore.trimEvery + 7)
        try fixture.store.write { db in
            for _ in 0..<count {
                var event = QueueEvent(id: nil, at: Date(), kind: .workers, jobId: nil, data: "[]")
                try QueueStore.append(&event, db)
            }
        }
        let kept = try fixture.store.eventCount()
        let last = try fixture.store.lastEventID()
        let oldest = try #require(try fixture.store.events(after: 0, limit: 1).first?.id)
        #expect(last == Int64(count))
        #expect(kept <= Int(QueueStore.eventRetention + QueueStore.trimEvery))
        #expect(kept >= Int(QueueStore.eventRetention))
        #expect(oldest == last - Int64(kept) + 1)
    }

    /// `after` and `Last-Event-ID` are event ids (whole numbers, 0 or more): anything else is
    /// 400, as the OpenAPI document says.
    @Test(.tags(.process)) func anAfterThatIsNoEventIDIs400() async throws {
        let server = try await RunningServer.start(try ServerFixture())
        let negative = try await server.call("GET", "/api/v1/events?after=-7")
        let word = try await server.call("GET", "/api/v1/events?after=abc")
        let header = try await server.call("GET", "/api/v1/events", headers: ["Last-Event-ID": "1.5"])
        await server.stop()
        #expect(negative.status == 400, "\(negative.text)")
        #expect(word.status == 400, "\(word.text)")
        #expect(header.status == 400, "\(header.text)")
    }

    /// A client reconnecting with an id past the log's end (its database was replaced) gets
    /// the live events from the end, instead of losing every one up to its id.
    @Test func anAfterPastTheEndResumesFromTheEnd() async throws {
        let fixture = try ServerFixture()
        defer { fixture.remove() }
        try await fixture.service.start()
        let id = try await fixture.submit().id!
        let end = try fixture.store.lastEventID()
        let stream = EventStream(service: fixture.service, after: end + 1000, keepAlive: .seconds(3600))
        _ = try await fixture.service.request(.pauseRequested, job: id)
        fixture.service.hub.finish()
        var text = ""
        try await stream.send { text += $0 }
        #expect(text.contains("id: \(end + 1)\n"), "\(text)")
        #expect(text.contains("\"state\":\"paused\""), "\(text)")
    }
}
