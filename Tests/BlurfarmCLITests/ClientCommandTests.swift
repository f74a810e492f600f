import BlurfarmState
import BlurfarmTestSupport
import Foundation
import Testing

/// The client commands (`submit`, `jobs`, `job`, `cancel`, `retry`) against a real
/// `blurfarm serve` (docs/serve.md).
@Suite(.tags(.process), .blocking) struct ClientCommandTests {
    @Test func submitWaitsAndExitsAsRunWould() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try ServedFarm.addPhotos(to: folder, count: 3)
        let server = try ServedFarm(folder: folder)
        defer { server.stop() }
        let manifest = try server.writeJob("client")
        let submitted = try Blurfarm.run(["submit", manifest, "--server", server.base, "--priority", "70", "--wait"])
        #expect(submitted.status == 0, "\(submitted.stderr)")
        #expect(submitted.stdout == "1\n")
        #expect(submitted.stderr.contains("client: completed: 3 written, 0 up to date, 0 failed"), "\(submitted.stderr)")

        let listed = try Blurfarm.run(["jobs"], environment: ["BLURFARM_SERVER": server.base])
        #expect(listed.status == 0)
        #expect(listed.stdout.contains("    1  completed   70  3/3            client"), "\(listed.stdout)")
        let json = try Blurfarm.run(["job", "1", "--json", "--server", server.base])
        let job = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect(job?["outputsWritten"] as? Int == 3)
        let again = try Blurfarm.run(["retry", "1", "--server", server.base])
        #expect(again.status == 1)
        #expect(again.stderr.contains("cannot retry a job that is completed"))
    }

    @Test func anInvalidManifestPrintsTheDiagnosticsOfCheckAndExits2() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try ServedFarm.addPhotos(to: folder, count: 1)
        let server = try ServedFarm(folder: folder)
        defer { server.stop() }
        let manifest = try server.writeJob("typo")
        try String(contentsOfFile: manifest, encoding: .utf8).replacingOccurrences(of: "sigma:", with: "sigam:")
            .write(toFile: manifest, atomically: true, encoding: .utf8)
        let submitted = try Blurfarm.run(["submit", manifest, "--server", server.base])
        let checked = try Blurfarm.run(["check", manifest, "--config", server.path("farm.conf")])
        #expect(submitted.status == 2)
        #expect(checked.status == 2)
        #expect(submitted.stderr == checked.stderr, "\(submitted.stderr)")
        #expect(submitted.stdout.isEmpty)
    }

    @Test func jobWaitWaitsAcrossARestartOfTheServer() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try ServedFarm.addPhotos(to: folder, count: 12)
        let first = try ServedFarm(folder: folder, workers: 1)
        let port = first.port
        // Seconds of work for one worker (as the cancel test below): the job cannot finish before the kill.
        let id = try first.submit(try first.writeJob("waited", sigma: 40))
        let waiter = Process()
        waiter.executableURL = Blurfarm.executable
        waiter.arguments = ["job", "\(id)", "--wait", "--server", first.base]
        waiter.environment = Blurfarm.environment
        waiter.standardOutput = Pipe()
        try waiter.run()
        defer { if waiter.isRunning { kill(waiter.processIdentifier, SIGKILL) } }
        try first.wait(for: id) { ($0["outputsWritten"] as? Int ?? 0) >= 1 }
        first.stop(signal: SIGKILL)
        // The server is down: the waiter's requests go unanswered, and it keeps asking.
        let down = try UnansweringListener(port: port)
        let asked = Result {
            try eventually("the waiter to ask the server that is down twice") { down.connections >= 2 || !waiter.isRunning }
        }
        down.close()
        try asked.get()
        #expect(waiter.isRunning)
        let second = try ServedFarm(folder: folder, workers: 1, port: port)
        defer { second.stop() }
        waiter.waitUntilExit()
        #expect(waiter.terminationStatus == 0)
        #expect(try second.call("GET", "/api/v1/jobs/\(id)").1["state"] as? String == "completed")
    }

    @Test func cancelAndAFailedJobsStatus() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // Enough work for one worker (seconds) that the cancel comes while the job runs.
        try ServedFarm.addPhotos(to: folder, count: 12)
        let server = try ServedFarm(folder: folder, workers: 1)
        defer { server.stop() }
        let id = try server.submit(try server.writeJob("stopped", sigma: 40))
        let cancelled = try Blurfarm.run(["cancel", "\(id)", "--server", server.base])
        #expect(cancelled.status == 0, "\(cancelled.stderr)")
        #expect(cancelled.stdout.contains("  cancel"), "\(cancelled.stdout)")
        let waited = try Blurfarm.run(["job", "\(id)", "--wait", "--server", server.base])
        #expect(waited.status == 1)
        #expect(waited.stdout.contains("cancelled"))
        let unreachable = try Blurfarm.run(["jobs", "--server", "http://127.0.0.1:1"])
        #expect(unreachable.status == 1)
        #expect(unreachable.stderr.contains("cannot reach the farm service at http://127.0.0.1:1"), "\(unreachable.stderr)")
    }

    /// A job whose lock a cron `run` of the same manifest holds: `run` exits 3 (nothing ran),
    /// and so do `submit --wait` and `job --wait`; once the lock is free, a retry completes.
    @Test func aJobLockedByACronRunExits3AsRunWould() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try ServedFarm.addPhotos(to: folder, count: 8)
        let hold = try ServedFarm.holdTiles(in: folder)
        let server = try ServedFarm(folder: folder, workers: 1)
        defer { server.stop() }
        let manifest = try server.writeJob("cron", held: true)
        let cron = try server.startRun(manifest)
        defer { try? FileManager.default.removeItem(at: hold) }  // also when the test throws
        let locked = try Blurfarm.run(["run", manifest, "--config", server.path("farm.conf")])
        let submitted = try Blurfarm.run(["submit", manifest, "--wait", "--server", server.base])
        let id = submitted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let waited = try Blurfarm.run(["job", id, "--wait", "--server", server.base])
        try FileManager.default.removeItem(at: hold)
        cron.waitUntilExit()
        #expect(cron.terminationStatus == 0)
        #expect(locked.status == 3, "\(locked.stderr)")
        #expect(submitted.status == 3, "\(submitted.stderr)")
        #expect(submitted.stderr.contains("job 'cron' is already running (pid \(cron.processIdentifier)"), "\(submitted.stderr)")
        #expect(waited.status == 3, "\(waited.stderr)")
        let json = try Blurfarm.run(["job", id, "--json", "--server", server.base])
        #expect(json.stdout.contains("\"refusal\" : \"locked\""), "\(json.stdout)")

        let retried = try Blurfarm.run(["retry", id, "--server", server.base])
        #expect(retried.status == 0, "\(retried.stderr)")
        // Waited for, `--json` prints the API's answer, its manifest's text included (not the
        // finishing event's job, which has `null` there).
        let doneJSON = try Blurfarm.run(["job", id, "--wait", "--json", "--server", server.base])
        #expect(doneJSON.status == 0, "\(doneJSON.stderr)")
        #expect(doneJSON.stdout.contains("\"state\" : \"completed\""), "\(doneJSON.stdout)")
        #expect(doneJSON.stdout.contains("\"manifestText\" : \"\""), "\(doneJSON.stdout)")
        let done = try Blurfarm.run(["job", id, "--wait", "--server", server.base])
        #expect(done.status == 0, "\(done.stderr)")
        #expect(done.stdout.contains("completed"), "\(done.stdout)")
    }

    /// A job with an input that cannot be decoded: `run` exits 1 (the other outputs written),
    /// and so does `submit --wait`.
    @Test func aJobWithAFailedOutputExits1AsRunWould() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try ServedFarm.addPhotos(to: folder, count: 2)
        try Data("not a JPEG".utf8).write(to: folder.appendingPathComponent("photos/broken.jpg"))
        let server = try ServedFarm(folder: folder, workers: 1)
        defer { server.stop() }
        let manifest = try server.writeJob("broken")
        let submitted = try Blurfarm.run(["submit", manifest, "--wait", "--server", server.base])
        // `run` of it with a state folder of its own (the server's records do not make it up to date).
        try "state: run-state\n".write(toFile: server.path("run.conf"), atomically: true, encoding: .utf8)
        let ran = try Blurfarm.run(["run", manifest, "--config", server.path("run.conf"), "--force"])
        #expect(ran.status == 1, "\(ran.stderr)")
        #expect(submitted.status == 1, "\(submitted.stderr)")
        #expect(submitted.stderr.contains("broken: failed: 2 written, 0 up to date, 1 failed"), "\(submitted.stderr)")
    }

    @Test func theServerAndItsTokenFromTheConfiguration() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let token = folder.appendingPathComponent("token").path
        try "0123456789abcdef0123\n".write(toFile: token, atomically: true, encoding: .utf8)
        let server = try ServedFarm(folder: folder, arguments: ["--token-file", token])
        defer { server.stop() }
        let without = try Blurfarm.run(["jobs", "--server", server.base])
        #expect(without.status == 1)
        #expect(without.stderr.contains("this server needs a token"), "\(without.stderr)")
        let client = folder.appendingPathComponent("client.conf").path
        try "server: \(server.base)\ntoken-file: token\n".write(toFile: client, atomically: true, encoding: .utf8)
        let configured = try Blurfarm.run(["jobs", "--config", client])
        #expect(configured.status == 0, "\(configured.stderr)")
        let wrong = folder.appendingPathComponent("wrong.conf").path
        try "server: \(server.base)\ntoken-file: nowhere\n".write(toFile: wrong, atomically: true, encoding: .utf8)
        let missing = try Blurfarm.run(["jobs", "--config", wrong])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("nowhere': cannot be read"), "\(missing.stderr)")
        let invalid = folder.appendingPathComponent("invalid.conf").path
        try "server: localhost\n".write(toFile: invalid, atomically: true, encoding: .utf8)
        let refused = try Blurfarm.run(["jobs", "--config", invalid])
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("invalid.conf:1:9: error: 'server' must be a URL"), "\(refused.stderr)")
    }
}
