import BlurfarmAPI
import BlurfarmClient
import BlurfarmServer
import BlurfarmSystem
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

    /// A proxy's 502, 503 or 504 while the service restarts (nginx in front, docs/serve.md) is
    /// waited through, as a connection refused is: the wait asks again until the stream
    /// answers. A Python server (a thread a connection) stands in for the proxy: 502, 503 and 504 to the first three
    /// event streams, then the stream, and the job finished.
    @Test(.timeLimit(.minutes(1))) func waitingAsksAgainThroughAProxysBadGateway() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("blurfarm-proxy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let job = QueueJob(
            id: 7, name: "j", manifest: "/j.job", source: .path, manifestText: "", priority: 50, state: .completed,
            inFarm: false, retryFailed: false, submittedAt: Date(), startedAt: Date(), finishedAt: Date(), outputsTotal: 1,
            outputsUpToDate: 0, outputsWritten: 1, outputsFailed: 0, outputsCancelled: 0, tilesDone: 1, tilesTotal: 1,
            pixelsWritten: 1, error: nil, refusal: nil)
        try APIJSON.encoder().encode(JobView(job)).write(to: folder.appendingPathComponent("job.json"))
        let script = """
            import http.server, sys
            job = open(sys.argv[1] + '/job.json', 'rb').read()
            statuses = [502, 503, 504]
            class H(http.server.BaseHTTPRequestHandler):
                protocol_version = 'HTTP/1.1'
                def log_message(self, *a): pass
                def do_GET(self):
                    if self.path == '/api/v1/events' and statuses:
                        self.send_response(statuses.pop(0)); self.send_header('Content-Length', '0'); self.end_headers()
                    elif self.path == '/api/v1/events':
                        self.send_response(200); self.send_header('Content-Type', 'text/event-stream'); self.end_headers()
                        self.wfile.write(b': connected\\n\\n'); self.wfile.flush()
                    else:
                        self.send_response(200); self.send_header('Content-Type', 'application/json')
                        self.send_header('Content-Length', str(len(job))); self.end_headers(); self.wfile.write(job)
            s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
            print(s.server_address[1], flush=True)
            s.serve_forever()
            """
        let proxy = try PythonServer(script, folder.path)
        defer { proxy.stop() }
        let port = proxy.port
        let client = FarmClient(base: URL(string: "http://127.0.0.1:\(port)")!, token: nil)
        let finished = try await client.waitUntilFinished(7, every: .milliseconds(10))
        #expect(finished.job.state == .completed && finished.job.id == 7)
    }

    /// An answer larger than the client reads (64 MB) is the server's answer that is not the
    /// API's, saying so: not "cannot reach the farm service", which the server was.
    @Test(.timeLimit(.minutes(1))) func anAnswerTooLargeIsSaidSo() async throws {
        let script = """
            import http.server
            body = b'{"jobs": ["' + b'a' * (65 << 20) + b'"]}'
            class H(http.server.BaseHTTPRequestHandler):
                protocol_version = 'HTTP/1.1'
                def log_message(self, *a): pass
                def do_GET(self):
                    self.send_response(200); self.send_header('Content-Type', 'application/json')
                    self.send_header('Content-Length', str(len(body))); self.end_headers()
                    try: self.wfile.write(body)
                    except OSError: pass
            s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
            print(s.server_address[1], flush=True)
            s.serve_forever()
            """
        let server = try PythonServer(script)
        defer { server.stop() }
        let client = FarmClient(base: URL(string: "http://127.0.0.1:\(server.port)")!, token: nil)
        let error = await #expect(throws: ClientError.self) { try await client.jobs() }
        #expect(error?.description == "the farm service's answer (HTTP 200) is not the API's JSON: it is larger than 64 MB, the most a client reads")
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

    /// A job's outputs come a page at a time by path (`limit`: the server's 10,000 unless told,
    /// at most 100,000; `after`: the page's `next`, absent on the last page; `state`: a list),
    /// read off the service's actor, and the client follows `next` to the end. Paths with `&`,
    /// `=`, `+`, `%`, spaces and a byte that is not UTF-8 page as they are; bad parameters are
    /// 400, a job that is not there 404.
    @Test func outputsComeAPageAtATimeAndTheClientReadsThemAll() async throws {
        try await withServer { server, client in
            let id = try #require(
                try await client.submit(SubmitRequest(manifest: ServerFixture.manifest, folder: server.fixture.root)).job.id)
            try await server.fixture.wait(for: id) { $0.state == .active }
            let pieces = ["&a=b", "+", "%20", " x", "é", PathEncoding.decode([0xE9]).text, "?", "#"]
            let names = (0..<30).map { server.fixture.root + "/out/\($0 % 7)\(pieces[$0 % pieces.count])-\($0).png" }
            server.fixture.jobFarm.emit(.accepted(job: id, outputs: names.count, upToDate: 0))
            for (index, name) in names.enumerated() {
                let failed = index % 3 == 0
                server.fixture.jobFarm.emit(.outputFinished(job: id, OutputOutcome(
                    status: failed ? .failed : .written, output: name, pixels: 0, tiles: 0, seconds: 0.1, retries: 0,
                    checksum: nil, errorKind: failed ? "decode" : nil, error: failed ? "not an image" : nil)))
            }
            server.fixture.jobFarm.emit(.finished(job: id, failed: 10, cancelled: false))
            try await server.fixture.wait(for: id) { $0.state == .failed }

            let all = try await client.outputs(of: id)
            #expect(all.count == 30 && Set(all.map(\.output)) == Set(names))
            func rows(_ outputs: [QueueOutput]) -> [String] { outputs.map { "\($0.output) \($0.state)" } }
            #expect(rows(try await client.outputs(of: id, pageSize: 4)) == rows(all))
            #expect(rows(try await client.outputs(of: id, states: [.failed], pageSize: 3)) == rows(all.filter { $0.state == .failed }))
            #expect(rows(try await client.outputs(of: id, states: [.failed, .written], pageSize: 7)) == rows(all))
            #expect(try await client.outputs(of: id, states: [.rendering]).isEmpty)
            // The raw answers: `next` only when the limit cut the page.
            let whole = try await server.call("GET", "/api/v1/jobs/\(id)/outputs?limit=30").object
            let cut = try await server.call("GET", "/api/v1/jobs/\(id)/outputs?limit=29").object
            #expect((whole["outputs"] as? [Any])?.count == 30 && whole["next"] == nil)
            #expect((cut["outputs"] as? [Any])?.count == 29 && cut["next"] as? String == all[28].output)
            for query in ["limit=0", "limit=100001", "limit=ten", "state=sleeping", "state=failed,"] {
                #expect(try await server.call("GET", "/api/v1/jobs/\(id)/outputs?\(query)").status == 400, "\(query)")
            }
            #expect(try await server.call("GET", "/api/v1/jobs/999/outputs").status == 404)
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

/// A Python HTTP server of the test's (`script`, run with `arguments`, printing its port on
/// its first line): what the farm service is not, for the client to meet.
final class PythonServer: Sendable {
    private let process: Process
    let port: String

    init(_ script: String, _ arguments: String...) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script] + arguments
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        self.process = process
        port = String(decoding: out.fileHandleForReading.availableData, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// SIGKILL: a process started from a test's thread may have SIGTERM blocked (CurlOutput).
    func stop() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
