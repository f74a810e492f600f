import BlurfarmManifest
import BlurfarmServer
import BlurfarmTestSupport
import Foundation
import Testing

/// The HTTP API against a real server on an ephemeral loopback port (the farm scripted).
@Suite(.timeLimit(.minutes(2)), .tags(.process)) struct APITests {
    @Test func healthzAnswersWithoutAToken() async throws {
        let server = try await RunningServer.start(try ServerFixture(), token: "s3cret")
        let answer = try await server.call("GET", "/healthz", token: .some(nil))
        await server.stop()
        #expect(answer.status == 200)
        #expect(answer.object["status"] as? String == "ok")
    }

    /// HEAD answers as GET does, without the body: a monitor's HEAD /healthz sees 200.
    @Test func headIsGetWithoutItsBody() async throws {
        let server = try await RunningServer.start(try ServerFixture(), token: "s3cret")
        let health = try await server.call("HEAD", "/healthz", token: .some(nil))
        let jobs = try await server.call("HEAD", "/api/v1/jobs", token: "s3cret")
        let unknown = try await server.call("HEAD", "/api/v1/nothing", token: "s3cret")
        let withoutToken = try await server.call("HEAD", "/api/v1/jobs", token: .some(nil))
        await server.stop()
        #expect(health.status == 200 && health.text.isEmpty, "\(health.status) \(health.text)")
        #expect(health.headers["content-length"] == "15", "\(health.headers)")  // {"status":"ok"}
        #expect(jobs.status == 200 && jobs.text.isEmpty, "\(jobs.status)")
        #expect(unknown.status == 404)
        #expect(withoutToken.status == 401)
    }

    @Test func submitListAndShowAJobWithItsProgress() async throws {
        let server = try await RunningServer.start(try ServerFixture())
        let submitted = try await server.call(
            "POST", "/api/v1/jobs",
            json: ["manifest": ServerFixture.manifest, "folder": server.fixture.root, "priority": 60])
        let id = submitted.object["id"] as? Int ?? 0
        let list = try await server.call("GET", "/api/v1/jobs?state=active")
        let none = try await server.call("GET", "/api/v1/jobs?state=completed,failed")
        let one = try await server.call("GET", "/api/v1/jobs/\(id)")
        let outputs = try await server.call("GET", "/api/v1/jobs/\(id)/outputs")
        let missing = try await server.call("GET", "/api/v1/jobs/999")
        let badState = try await server.call("GET", "/api/v1/jobs?state=sleeping")
        await server.stop()
        #expect(submitted.status == 201, "\(submitted.text)")
        #expect(submitted.object["state"] as? String == "active")
        #expect(submitted.object["priority"] as? Int == 60)
        #expect((list.object["jobs"] as? [[String: Any]])?.map { $0["id"] as? Int } == [id])
        // The list leaves the manifests' text (up to 1 MiB each) to the job's own answer.
        #expect((list.object["jobs"] as? [[String: Any]])?.first?["manifestText"] is NSNull)
        #expect(one.object["manifestText"] as? String == ServerFixture.manifest)
        #expect((none.object["jobs"] as? [[String: Any]])?.isEmpty == true)
        let progress = one.object["progress"] as? [String: Any]
        #expect(progress?["outputsTotal"] as? Int == 2)
        #expect(progress?["outputsDone"] as? Int == 0)
        #expect((outputs.object["outputs"] as? [Any])?.isEmpty == true)
        #expect(missing.status == 404)
        #expect(badState.status == 400)
    }

    @Test func anInvalidManifestIs422WithTheDiagnosticsOfCheck() async throws {
        let server = try await RunningServer.start(try ServerFixture())
        let text = ServerFixture.manifest.replacingOccurrences(of: "sigma: 2", with: "sigam: 2")
        let answer = try await server.call(
            "POST", "/api/v1/jobs", json: ["manifest": text, "folder": server.fixture.root, "name": "mine.job"])
        await server.stop()
        #expect(answer.status == 422)
        let diagnostics = answer.object["diagnostics"] as? String ?? ""
        #expect(diagnostics.contains("\(server.fixture.root)/mine.job:8:11: error: unknown key 'sigam'"), "\(diagnostics)")
    }

    /// A job asking for more outputs than `max-outputs` is refused before it is planned: 422,
    /// naming the limit and the manifest's inputs at their line and column.
    @Test func aJobAskingForMoreOutputsThanTheLimitIs422() async throws {
        var configuration = FarmConfiguration()
        configuration.maxOutputs = 1
        let server = try await RunningServer.start(try ServerFixture(configuration: configuration))
        let answer = try await server.call(
            "POST", "/api/v1/jobs", json: ["manifest": ServerFixture.manifest, "folder": server.fixture.root, "name": "big.job"])
        let jobs = try await server.call("GET", "/api/v1/jobs")
        await server.stop()
        #expect(answer.status == 422)
        let diagnostics = answer.object["diagnostics"] as? String ?? ""
        #expect(
            diagnostics.contains(
                "\(server.fixture.root)/big.job:2:10: error: job 'served' asks for 2 outputs (2 inputs, 1 each), more than the "
                    + "limit of 1 (max-outputs in the configuration, or --max-outputs)"), "\(diagnostics)")
        #expect((jobs.object["jobs"] as? [Any])?.isEmpty == true, "\(jobs.text)")
    }

    @Test func pathsOutsideTheRootsAre403() async throws {
        let server = try await RunningServer.start(try ServerFixture())
        let escapes = ServerFixture.manifest.replacingOccurrences(of: "path: out/", with: "path: ../../")
        let answer = try await server.call(
            "POST", "/api/v1/jobs", json: ["manifest": escapes, "folder": server.fixture.root])
        let byPath = try await server.call("POST", "/api/v1/jobs", json: ["path": "/etc/passwd"])
        await server.stop()
        #expect(answer.status == 403)
        #expect((answer.object["error"] as? String)?.contains("outside the server's roots") == true, "\(answer.text)")
        #expect(byPath.status == 403)
        #expect(server.fixture.jobFarm.submitted.isEmpty)
    }

    /// An absolute input glob is taken below the roots and refused outside them, by its
    /// folder, whether or not it matches a file (a glob matching nothing says nothing of
    /// what lies outside).
    @Test func absoluteInputGlobsAreConfinedToTheRoots() async throws {
        let server = try await RunningServer.start(try ServerFixture())
        let inside = ServerFixture.manifest.replacingOccurrences(of: "[in/*.jpg]", with: "['\(server.fixture.root)/in/*.jpg']")
        let accepted = try await server.call("POST", "/api/v1/jobs", json: ["manifest": inside, "folder": server.fixture.root])
        var refused: [RunningServer.Answer] = []
        for glob in ["/etc/*.conf", "/nonexistent-folder/*.jpg"] {
            let outside = ServerFixture.manifest.replacingOccurrences(of: "[in/*.jpg]", with: "['\(glob)', in/*.jpg]")
            refused.append(try await server.call("POST", "/api/v1/jobs", json: ["manifest": outside, "folder": server.fixture.root]))
        }
        try await server.fixture.settled()  // the accepted job planned for the farm
        await server.stop()
        #expect(accepted.status == 201, "\(accepted.text)")
        for answer in refused {
            #expect(answer.status == 403, "\(answer.text)")
            #expect((answer.object["error"] as? String)?.contains("outside the server's roots") == true, "\(answer.text)")
        }
        #expect(server.fixture.jobFarm.submitted.count == 1)
    }

    @Test func withATokenARequestWithoutItIs401AndWithAnotherIs403() async throws {
        let server = try await RunningServer.start(try ServerFixture(), token: "s3cret")
        let without = try await server.call("GET", "/api/v1/jobs", token: .some(nil))
        let wrong = try await server.call("GET", "/api/v1/jobs", token: "s3cres")
        let short = try await server.call("GET", "/metrics", token: "s3")
        let right = try await server.call("GET", "/api/v1/jobs")
        // The scheme's name in any case; credentials that are no bearer token are none (401).
        let lowercase = try await server.call("GET", "/api/v1/jobs", token: .some(nil), headers: ["Authorization": "bearer s3cret"])
        let empty = try await server.call("GET", "/api/v1/jobs", token: .some(nil), headers: ["Authorization": "Bearer "])
        let basic = try await server.call("GET", "/api/v1/jobs", token: .some(nil), headers: ["Authorization": "Basic czNjcmV0"])
        await server.stop()
        #expect(without.status == 401)
        #expect(without.headers["www-authenticate"] == "Bearer")
        #expect(wrong.status == 403)
        #expect(short.status == 403)
        #expect(right.status == 200)
        #expect(lowercase.status == 200)
        #expect(empty.status == 401 && empty.headers["www-authenticate"] == "Bearer")
        #expect(basic.status == 401 && basic.headers["www-authenticate"] == "Bearer")
    }

    @Test func aHostHeaderNamingAnotherServerIsRefused() async throws {
        let server = try await RunningServer.start(try ServerFixture())
        let rebound = try await RunningServer.curl([
            "-o", "/dev/null", "-w", "%{http_code}", "-H", "Host: attacker.example:\(server.port)",
            server.base + "/api/v1/jobs",
        ])
        let named = try await RunningServer.curl([
            "-o", "/dev/null", "-w", "%{http_code}", "-H", "Host: localhost:\(server.port)", server.base + "/api/v1/jobs",
        ])
        await server.stop()
        #expect(rebound == "421")
        #expect(named == "200")
    }

    @Test func aPublicURLsHostIsAcceptedAsHostAndOrigin() async throws {
        let server = try await RunningServer.start(try ServerFixture(), publicHosts: ["farm.example.com"])
        let proxied = try await RunningServer.curl([
            "-o", "/dev/null", "-w", "%{http_code}", "-H", "Host: farm.example.com", server.base + "/api/v1/jobs",
        ])
        let withPort = try await RunningServer.curl([
            "-o", "/dev/null", "-w", "%{http_code}", "-H", "Host: farm.example.com:443", server.base + "/api/v1/jobs",
        ])
        let page = try await RunningServer.curl([
            "-o", "/dev/null", "-w", "%{http_code}", "-H", "Host: farm.example.com", "-H",
            "Origin: https://farm.example.com", "-H", "Content-Type: application/json", "-d", "{}",
            server.base + "/api/v1/jobs",
        ])
        let other = try await RunningServer.curl([
            "-o", "/dev/null", "-w", "%{http_code}", "-H", "Host: farm.example.com", "-H",
            "Origin: https://evil.example.com", "-H", "Content-Type: application/json", "-d", "{}",
            server.base + "/api/v1/jobs",
        ])
        await server.stop()
        #expect(proxied == "200" && withPort == "200")
        #expect(page == "400")  // past the checks: `{}` names no manifest
        #expect(other == "403")
    }

    /// Listening on every address (a token required there), the server cannot know every name
    /// it is reached by: any Host is taken, and a change's Origin must be that Host's.
    @Test func listeningEverywhereAnyHostIsTakenAndAChangesOriginMustBeItsHosts() async throws {
        let server = try await RunningServer.start(try ServerFixture(), token: "s3cret") { $0.host = "0.0.0.0" }
        func curl(_ extra: [String]) async throws -> String {
            try await RunningServer.curl(
                ["-o", "/dev/null", "-w", "%{http_code}", "-H", "Authorization: Bearer s3cret"] + extra)
        }
        let byAddress = try await curl(["-H", "Host: 192.0.2.7:\(server.port)", server.base + "/api/v1/jobs"])
        let change = ["-H", "Content-Type: application/json", "-d", "{}", server.base + "/api/v1/jobs"]
        let sameOrigin = try await curl(["-H", "Host: farm.lan:\(server.port)", "-H", "Origin: http://farm.lan:\(server.port)"] + change)
        let otherOrigin = try await curl(["-H", "Host: farm.lan:\(server.port)", "-H", "Origin: http://evil.example"] + change)
        await server.stop()
        #expect(byAddress == "200")
        #expect(sameOrigin == "400")  // past the checks: `{}` names no manifest
        #expect(otherOrigin == "403")
    }

    @Test func changesNeedJSONAndASameOriginPage() async throws {
        let server = try await RunningServer.start(try ServerFixture())
        let id = try await server.call(
            "POST", "/api/v1/jobs", json: ["manifest": ServerFixture.manifest, "folder": server.fixture.root]
        ).object["id"] as? Int ?? 0
        let form = try await server.call(
            "POST", "/api/v1/jobs/\(id)/pause", headers: ["Content-Type": "application/x-www-form-urlencoded"])
        let crossSite = try await server.call(
            "POST", "/api/v1/jobs/\(id)/pause", headers: ["Sec-Fetch-Site": "cross-site"])
        let otherOrigin = try await server.call(
            "POST", "/api/v1/jobs/\(id)/pause", headers: ["Origin": "http://attacker.example"])
        let sameOrigin = try await server.call(
            "POST", "/api/v1/jobs/\(id)/pause",
            headers: ["Origin": server.base, "Sec-Fetch-Site": "same-origin"])
        await server.stop()
        #expect(form.status == 415)
        #expect(crossSite.status == 403)
        #expect(otherOrigin.status == 403)
        #expect(sameOrigin.status == 200)
        #expect(sameOrigin.headers["access-control-allow-origin"] == nil)
    }

    @Test func cancelPauseResumeRetryAndPriority() async throws {
        let server = try await RunningServer.start(try ServerFixture())
        let id = try await server.call(
            "POST", "/api/v1/jobs", json: ["manifest": ServerFixture.manifest, "folder": server.fixture.root]
        ).object["id"] as? Int ?? 0
        try await server.fixture.settled()  // in the farm: its steering reaches the farm
        let paused = try await server.call("POST", "/api/v1/jobs/\(id)/pause")
        let resumed = try await server.call("POST", "/api/v1/jobs/\(id)/resume")
        let priority = try await server.call("POST", "/api/v1/jobs/\(id)/priority", json: ["priority": 99])
        let outOfRange = try await server.call("POST", "/api/v1/jobs/\(id)/priority", json: ["priority": 101])
        let tooEarly = try await server.call("POST", "/api/v1/jobs/\(id)/retry")
        let cancelled = try await server.call("POST", "/api/v1/jobs/\(id)/cancel")
        server.fixture.jobFarm.emit(.finished(job: Int64(id), failed: 0, cancelled: true))
        try await server.fixture.wait(for: Int64(id)) { $0.state == .cancelled }
        let retried = try await server.call("POST", "/api/v1/jobs/\(id)/retry")
        let unknown = try await server.call("POST", "/api/v1/jobs/12345/cancel")
        await server.stop()
        #expect(paused.object["state"] as? String == "paused")
        #expect(resumed.object["state"] as? String == "active")
        #expect(priority.object["priority"] as? Int == 99)
        #expect(outOfRange.status == 400)
        #expect(tooEarly.status == 409)
        #expect(tooEarly.object["error"] as? String == "cannot retry a job that is active")
        #expect(cancelled.object["state"] as? String == "cancelling")
        #expect(retried.object["state"] as? String == "active")
        #expect(unknown.status == 404)
        #expect(server.fixture.jobFarm.calls.contains("priority \(id) 99"))
    }

    /// A body of the wrong shape is 400 naming the field and the trouble, not Swift's
    /// description of a decoding error.
    @Test func aBodyOfTheWrongShapeIs400NamingTheField() async throws {
        let server = try await RunningServer.start(try ServerFixture())
        let wrongType = try await server.call("POST", "/api/v1/jobs", json: ["path": 12])
        let priority = try await server.call("POST", "/api/v1/jobs/1/priority", json: ["level": 3])
        // A key given twice: the decoder took the first value, most clients' readers the last.
        let twice = try await RunningServer.curl([
            "-s", "-X", "POST", "-H", "Authorization: Bearer \(server.token ?? "")", "-H", "Content-Type: application/json",
            "--data-raw", #"{"priority": 50, "priority": 500}"#, server.base + "/api/v1/jobs/1/priority",
        ])
        await server.stop()
        #expect(twice.contains("the body is not the JSON expected: $.priority: is given twice"), "\(twice)")
        #expect(wrongType.status == 400 && priority.status == 400)
        let wrongTypeError = wrongType.object["error"] as? String ?? ""
        #expect(wrongTypeError.hasPrefix("the body is not the JSON expected: $.path: "), "\(wrongTypeError)")
        #expect(priority.object["error"] as? String == "the body is not the JSON expected: $.priority: is missing")
        #expect(!wrongTypeError.contains("Swift.") && !wrongTypeError.contains("CodingKeys"), "\(wrongTypeError)")
    }

    @Test func aBodyOverTheLimitIs413() async throws {
        let server = try await RunningServer.start(try ServerFixture())
        let huge = String(repeating: "#", count: 100 * 1024)
        let answer = try await server.call(
            "POST", "/api/v1/jobs", json: ["manifest": huge, "folder": server.fixture.root])
        await server.stop()
        #expect(answer.status == 413)
    }

    /// A file name ends at a NUL: a path, folder or name holding one is refused, not cut short
    /// to another file than the one checked (and nothing is queued).
    @Test func aNULInAPathFolderOrNameIs400() async throws {
        let server = try await RunningServer.start(try ServerFixture())
        let root = server.fixture.root
        let answers = [
            try await server.call("POST", "/api/v1/jobs", json: ["path": root + "/a.job\u{0}x"]),
            try await server.call("POST", "/api/v1/jobs", json: ["manifest": ServerFixture.manifest, "folder": root + "/\u{0}../x"]),
            try await server.call(
                "POST", "/api/v1/jobs", json: ["manifest": ServerFixture.manifest, "folder": root, "name": "a\u{0}.job"]),
        ]
        let list = try await server.call("GET", "/api/v1/jobs")
        await server.stop()
        #expect(answers.map(\.status) == [400, 400, 400], "\(answers.map(\.text))")
        #expect(answers.map { $0.object["error"] as? String } == ["path", "folder", "name"].map { "'\($0)' must not contain a NUL character" })
        #expect((list.object["jobs"] as? [[String: Any]])?.isEmpty == true)
    }

    @Test func theEventStreamSendsEveryChangeAndReplaysTheLog() async throws {
        let server = try await RunningServer.start(try ServerFixture())
        let id = try await server.call(
            "POST", "/api/v1/jobs", json: ["manifest": ServerFixture.manifest, "folder": server.fixture.root]
        ).object["id"] as? Int ?? 0
        // A stream ends only when its client leaves: each is read until what is expected arrives.
        let replayed = try await CurlOutput(["-N", server.base + "/api/v1/events?after=0"])
        try await replayed.wait { $0.contains("\"state\":\"active\"") }
        let replay = await replayed.close()
        // The change is made once the live stream has started (its comment arrived), so it is
        // sent live, not replayed.
        let live = try await CurlOutput(["-N", server.base + "/api/v1/events"])
        try await live.wait { $0.contains(": connected\n\n") }
        _ = try await server.call("POST", "/api/v1/jobs/\(id)/pause")
        try await live.wait { $0.contains("\"state\":\"paused\"") }
        let text = await live.close()
        await server.stop()
        #expect(replay.contains("event: job\ndata: {"))
        #expect(replay.contains("\"state\":\"queued\""))
        #expect(replay.contains("\"state\":\"active\""))
        #expect(text.contains("\"state\":\"paused\""), "\(text)")
        #expect(!text.contains("\"state\":\"queued\""))
    }

    @Test func metricsAreInThePrometheusTextFormat() async throws {
        let server = try await RunningServer.start(try ServerFixture())
        _ = try await server.call(
            "POST", "/api/v1/jobs", json: ["manifest": ServerFixture.manifest, "folder": server.fixture.root])
        let metrics = try await server.call("GET", "/metrics")
        await server.stop()
        #expect(metrics.headers["content-type"]?.hasPrefix("text/plain; version=0.0.4") == true)
        #expect(metrics.text.contains("# TYPE blurfarm_jobs gauge\n"))
        #expect(metrics.text.contains("blurfarm_jobs{state=\"active\"} 1\n"))
        #expect(metrics.text.contains("blurfarm_queue_depth 0\n"))
        #expect(metrics.text.contains("blurfarm_outputs_written_total 0\n"))
    }
}
