import BlurfarmAPI
import BlurfarmClient
import BlurfarmServer
import BlurfarmTestSupport
import Foundation
import Testing

/// The typed client against a real server: each operation's answer as the API's types, each
/// refusal as the ``ClientError`` a command maps to its exit status.
@Suite(.tags(.process)) struct FarmClientTests {
    /// Runs `body` with a real server (token `s3cret`) and a client of it; stops the server after.
    func withServer(_ body: (RunningServer, FarmClient) async throws -> Void) async throws {
        let server = try await RunningServer.start(try ServerFixture(), token: "s3cret")
        do {
            try await body(server, FarmClient(base: URL(string: server.base)!, token: "s3cret"))
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    /// Whether `error` is the server's refusal with `status`.
    func isRefusal(_ error: ClientError?, _ status: Int) -> Bool {
        if case .refused(status, _) = error { true } else { false }
    }

    @Test func aJobSubmittedIsListedSteeredAndWaitedForUntilItCompletes() async throws {
        try await withServer { server, client in
            let submitted = try await client.submit(
                SubmitRequest(manifest: ServerFixture.manifest, folder: server.fixture.root, priority: 70))
            let id = try #require(submitted.job.id)
            #expect(submitted.job.priority == 70 && submitted.job.name == "served")
            #expect(try await client.jobs().map(\.job.id) == [id])
            #expect(try await client.job(id).job.manifestText == ServerFixture.manifest)
            #expect(try await client.setPriority(90, of: id).job.priority == 90)
            try await server.fixture.wait(for: id) { $0.state == .active }
            #expect(try await client.steer(id, .pause).job.state == .paused)
            #expect(try await client.steer(id, .resume).job.state == .active)
            let waiting = Task { try await client.waitUntilFinished(id, every: .milliseconds(20)) }
            let output = server.fixture.root + "/out/plasma-Kite.png"
            server.fixture.jobFarm.emit(.accepted(job: id, outputs: 2, upToDate: 1))
            server.fixture.jobFarm.emit(.outputStarted(job: id, output: output, tiles: 4))
            server.fixture.jobFarm.emit(.outputFinished(job: id, OutputOutcome(
                status: .failed, output: output, pixels: 0, tiles: 0, seconds: 0.1, retries: 0, checksum: nil,
                errorKind: "decode", error: "plasma-Kite.jpg: not an image")))
            server.fixture.jobFarm.emit(.finished(job: id, failed: 1, cancelled: false))
            let finished = try await waiting.value
            #expect(finished.job.state == .failed && finished.job.outputsFailed == 1)
            let outputs = try await client.outputs(of: id)
            #expect(outputs.map(\.state) == [.failed] && outputs.first?.errorKind == "decode")
        }
    }

    /// A wait connected before the job ends returns the job as the event that finished it
    /// tells it (not asked again: its manifest's text not shown). The wait has asked for the
    /// job once connected when its first progress comes; only then does the job end.
    @Test(.timeLimit(.minutes(1))) func aWaitEndsOnTheEventThatFinishesTheJob() async throws {
        try await withServer { server, client in
            let id = try #require(
                try await client.submit(SubmitRequest(manifest: ServerFixture.manifest, folder: server.fixture.root)).job.id)
            try await server.fixture.wait(for: id) { $0.state == .active }
            let (asked, seen) = AsyncStream.makeStream(of: Void.self)
            let waiting = Task { try await client.waitUntilFinished(id, every: .milliseconds(20)) { _ in seen.yield() } }
            var progress = asked.makeAsyncIterator()
            _ = await progress.next()
            server.fixture.jobFarm.emit(.accepted(job: id, outputs: 1, upToDate: 1))
            server.fixture.jobFarm.emit(.finished(job: id, failed: 0, cancelled: false))
            let finished = try await waiting.value
            #expect(finished.job.id == id && finished.job.state == .completed && finished.job.outputsUpToDate == 1)
            #expect(!finished.withManifest && finished.job.manifestText.isEmpty)
        }
    }

    @Test func refusalsAreTypedErrors() async throws {
        try await withServer { server, client in
            let missing = await #expect(throws: ClientError.self) { try await client.job(99) }
            #expect(isRefusal(missing, 404), "\(String(describing: missing))")
            let invalid = await #expect(throws: ClientError.self) {
                try await client.submit(SubmitRequest(manifest: "job: x\nsigam: 2\n", folder: server.fixture.root))
            }
            let diagnostics: String? = if case .invalidManifest(let text) = invalid { text } else { nil }
            #expect(diagnostics?.contains("error:") == true, "\(String(describing: invalid))")
            let stranger = FarmClient(base: URL(string: server.base)!, token: "wrong")
            let forbidden = await #expect(throws: ClientError.self) { try await stranger.jobs() }
            #expect(isRefusal(forbidden, 403), "\(String(describing: forbidden))")
            let nobody = FarmClient(base: URL(string: "http://127.0.0.1:1")!, token: nil)
            let unreachable = await #expect(throws: ClientError.self) { try await nobody.jobs() }
            #expect(unreachable?.description.hasPrefix("cannot reach the farm service at http://127.0.0.1:1") == true)
        }
    }
}
