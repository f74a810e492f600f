import BlurfarmState
import BlurfarmTestSupport
import Foundation
import Testing

/// `blurfarm serve` end to end: the built executable on an ephemeral loopback port, real
/// workers, real photos (docs/serve.md, docs/api.md).
///
/// Its tests wait for processes for seconds at a time (the server, `run`, Chromium): each on a
/// thread of its own (``BlockingTrait``).
@Suite(.tags(.process), .blocking) struct ServeTests {
    @Test func aSubmittedJobCompletesWithOutputsByteIdenticalToRun() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try ServedFarm.addPhotos(to: folder)
        let server = try ServedFarm(folder: folder)
        let manifest = try server.writeJob("web")
        let id = try server.submit(manifest)
        let job = try server.finished(id)
        let (_, outputs) = try server.call("GET", "/api/v1/jobs/\(id)/outputs")
        let stopped = server.stop()
        #expect(job["state"] as? String == "completed", "\(job)")
        #expect(job["outputsWritten"] as? Int == 8)
        #expect((outputs["outputs"] as? [[String: Any]])?.allSatisfy { $0["state"] as? String == "written" } == true)
        #expect(stopped.status == 0, "\(stopped.stderr)")

        // The same manifest through `blurfarm run` in a copy of the folder.
        let other = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: other) }
        try ServedFarm.addPhotos(to: other)
        try FileManager.default.copyItem(atPath: manifest, toPath: other.appendingPathComponent("web.job").path)
        try "state: state\n".write(to: other.appendingPathComponent("farm.conf"), atomically: true, encoding: .utf8)
        let run = try Blurfarm.run([
            "run", other.appendingPathComponent("web.job").path, "--config", other.appendingPathComponent("farm.conf").path,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let names = try FileManager.default.contentsOfDirectory(atPath: server.path("out/web")).sorted()
        #expect(names.count == 8)
        for name in names {
            let served = FileManager.default.contents(atPath: server.path("out/web/\(name)"))
            let ran = FileManager.default.contents(atPath: other.appendingPathComponent("out/web/\(name)").path)
            #expect(served != nil && served == ran, "\(name) differs from run's")
        }
    }

    @Test func pauseResumeAndCancel() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try ServedFarm.addPhotos(to: folder, count: 10)
        // Tile by tile: the test catches an output half-rendered (no whole-image tasks).
        try "state: state\nwhole-image-pixels: 0\n".write(
            to: folder.appendingPathComponent("farm.conf"), atomically: true, encoding: .utf8)
        let server = try ServedFarm(folder: folder, workers: 1)
        defer { server.stop() }
        let paused = try server.submit(try server.writeJob("paused", sigma: 8))
        // Paused while an output is half-rendered: it finishes (and any other that started as
        // the pause came), then nothing renders; the job stays paused with outputs to do.
        let before = try server.waitForOutputs(of: paused) {
            $0.values.contains { $0.state == "rendering" && $0.tilesDone > 0 }
        }
        let answer = try server.call("POST", "/api/v1/jobs/\(paused)/pause").1
        #expect(answer["state"] as? String == "paused")
        let inFlight = before.filter { $0.value.state == "rendering" }.keys
        #expect(!inFlight.isEmpty)
        let settled = try server.waitForOutputs(of: paused) { outputs in
            !outputs.values.contains { $0.state == "rendering" } && inFlight.allSatisfy { outputs[$0]?.state == "written" }
        }
        #expect(inFlight.allSatisfy { settled[$0]?.state == "written" }, "rendering at the pause: \(inFlight), then \(settled)")
        #expect(!settled.values.contains { $0.state == "rendering" }, "\(settled)")
        let after = try server.call("GET", "/api/v1/jobs/\(paused)").1
        #expect(after["state"] as? String == "paused")
        #expect((after["outputsWritten"] as? Int ?? 10) < 10)

        let cancelled = try server.submit(try server.writeJob("cancelled", sigma: 8))
        #expect(try server.call("POST", "/api/v1/jobs/\(paused)/resume").1["state"] as? String == "active")
        let (status, cancelling) = try server.call("POST", "/api/v1/jobs/\(cancelled)/cancel")
        #expect(status == 200)
        #expect(["cancelling", "cancelled"].contains(cancelling["state"] as? String ?? ""), "\(cancelling)")
        let resumed = try server.finished(paused)
        let gone = try server.finished(cancelled)
        #expect(resumed["state"] as? String == "completed")
        #expect(resumed["outputsWritten"] as? Int == 10)
        #expect(gone["state"] as? String == "cancelled")
        #expect((gone["outputsWritten"] as? Int ?? 10) < 10)
        // Every output is counted once; those cancelled before they started have no row.
        let counts = ["outputsWritten", "outputsFailed", "outputsCancelled"].map { gone[$0] as? Int ?? -1 }
        #expect(counts.reduce(0, +) == 10, "\(gone)")
        let rows = try server.call("GET", "/api/v1/jobs/\(cancelled)/outputs").1["outputs"] as? [[String: Any]] ?? []
        #expect(rows.allSatisfy { $0["startedAt"] is String }, "\(rows)")
        #expect(rows.count < 10, "\(rows.count) rows: every output started before the cancel")
        let left = (try? FileManager.default.contentsOfDirectory(atPath: server.path("out/cancelled"))) ?? []
        #expect(left.allSatisfy { !$0.hasPrefix(".") }, "temporary files left: \(left)")
    }

    @Test func retryAfterFixingABrokenInput() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try ServedFarm.addPhotos(to: folder, count: 3)
        let broken = folder.appendingPathComponent("photos/broken.jpg").path
        try FileManager.default.copyItem(atPath: Fixtures.corpus("special/truncated.jpg"), toPath: broken)
        let server = try ServedFarm(folder: folder)
        defer { server.stop() }
        let id = try server.submit(try server.writeJob("fixme"))
        let failed = try server.finished(id)
        #expect(failed["state"] as? String == "failed", "\(failed)")
        #expect(failed["outputsFailed"] as? Int == 1)
        let outputs = try server.call("GET", "/api/v1/jobs/\(id)/outputs").1["outputs"] as? [[String: Any]] ?? []
        let failure = outputs.first { $0["state"] as? String == "failed" }
        #expect((failure?["error"] as? String)?.contains("broken.jpg") == true, "\(outputs)")
        #expect(failure?["errorKind"] as? String != nil)

        try FileManager.default.removeItem(atPath: broken)
        try FileManager.default.copyItem(atPath: Fixtures.corpus("photos/plasma-Kite.jpg"), toPath: broken)
        #expect(try server.call("POST", "/api/v1/jobs/\(id)/retry").0 == 200)
        let fixed = try server.finished(id)
        #expect(fixed["state"] as? String == "completed", "\(fixed)")
        #expect(fixed["outputsWritten"] as? Int == 1)
        #expect(fixed["outputsUpToDate"] as? Int == 3)
        #expect(FileManager.default.fileExists(atPath: server.path("out/fixme/broken.png")))
    }

    @Test func aHighPriorityJobSubmittedBehindThreeOthersFinishesFirst() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try ServedFarm.addPhotos(to: folder, count: 4)
        try ServedFarm.addPhotos(to: folder, count: 1, into: "urgent")
        try ServedFarm.addPhotos(to: folder, count: 1, into: "warm")
        let server = try ServedFarm(folder: folder, workers: 1)
        defer { server.stop() }
        // The four jobs must all be in the queue before a tile renders: otherwise, on a loaded
        // machine, the first job can finish while the others are still being submitted. So the
        // pool is started by a job of its own, and its worker held (SIGSTOP) while they are.
        #expect(try server.finished(try server.submit(try server.writeJob("warm", inputs: "warm/*")))["state"] as? String == "completed")
        let pids = (try server.call("GET", "/api/v1/workers").1["workers"] as? [[String: Any]] ?? []).compactMap { $0["pid"] as? Int32 }
        try #require(pids.count == 1)
        for pid in pids { kill(pid, SIGSTOP) }
        defer { for pid in pids { kill(pid, SIGCONT) } }  // also when the test throws

        var ids: [Int] = []
        for name in ["first", "second", "third"] { ids.append(try server.submit(try server.writeJob(name, sigma: 4))) }
        let urgent = try server.submit(try server.writeJob("urgent", inputs: "urgent/*", sigma: 4), priority: 90)
        // Its image is in the pool's queue once its output has started (it counts the
        // output's tiles just before it queues them): "active" alone is too early on a loaded
        // machine, where the others' images could run meanwhile.
        let started = try server.wait(for: urgent) { (($0["progress"] as? [String: Any])?["tilesTotal"] as? Int ?? 0) > 0 }
        #expect(started["state"] as? String == "active", "\(started)")
        for pid in pids { kill(pid, SIGCONT) }

        let done = try server.finished(urgent)
        #expect(done["state"] as? String == "completed")
        for id in ids { #expect(try server.finished(id)["state"] as? String == "completed") }
        // The order the outputs were written in (their files' times: the kernel's coarse clock,
        // a few milliseconds, far finer than a render), not the states seen after the fact: on
        // a fast machine the others can all be done by the time they are asked for. Each other
        // job has an output written after the urgent one.
        func written(_ job: String) throws -> [Date] {
            let folder = server.path("out/\(job)")
            return try FileManager.default.contentsOfDirectory(atPath: folder).map {
                try #require(try FileManager.default.attributesOfItem(atPath: folder + "/" + $0)[.modificationDate] as? Date)
            }
        }
        let urgentWritten = try #require(try written("urgent").max())
        for name in ["first", "second", "third"] {
            let last = try #require(try written(name).max())
            #expect(last > urgentWritten, "job \(name) finished before the urgent one (its last output \(last), the urgent one \(urgentWritten))")
        }
    }

    @Test func afterKill9TheJobCompletesOnRestartWritingEveryOutputOnce() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try ServedFarm.addPhotos(to: folder, count: 30)
        let first = try ServedFarm(folder: folder, workers: 2)
        let id = try first.submit(try first.writeJob("thirty", sigma: 3))
        // Killed once five outputs are recorded (the record follows the output's rename and
        // its count in the job).
        let state = IncrementalRunTests.JobFolder(root: folder)
        try IncrementalRunTests.waitForRecords(of: state, count: 5) { first.process.isRunning }
        first.stop(signal: SIGKILL)
        // What is recorded now was written whole (atomic rename, then the record): it must not
        // be written again. (An output renamed in place but killed before its record is written
        // again, whole.)
        let out = folder.appendingPathComponent("out/thirty").path
        let recorded = IncrementalRunTests.recordedOutputs(state)
        var written: [String: UInt64] = [:]
        for name in recorded.map({ ($0 as NSString).lastPathComponent }) {
            written[name] = try Self.inode(out + "/" + name)
        }
        #expect(written.count >= 5 && written.count < 30)

        let second = try ServedFarm(folder: folder, workers: 2)
        let job = try second.finished(id)
        let stopped = second.stop()
        #expect(job["state"] as? String == "completed", "\(job)")
        #expect(job["outputsUpToDate"] as? Int == written.count)
        #expect(job["outputsWritten"] as? Int == 30 - written.count)
        let names = try FileManager.default.contentsOfDirectory(atPath: out)
        #expect(names.count == 30, "\(names.filter { $0.hasPrefix(".") })")
        for (name, inode) in written { #expect(try Self.inode(out + "/" + name) == inode, "\(name) was written again") }
        #expect(stopped.status == 0)
    }

    /// `systemctl restart`: SIGTERM lets the outputs being rendered finish, starts no other,
    /// and exits as soon as they are written, not when the grace runs out (ten minutes here:
    /// the test kills it after two); the job goes on at the next start. The state is made, not
    /// raced for: a test plugin (`hold`) keeps every tile in its worker while the file `hold`
    /// exists, so outputs are caught mid-render however fast or busy the machine is, and the
    /// test lets them go once the server is stopping (its changes answered 503).
    @Test func sigtermLetsRunningOutputsFinishExitsZeroAndTheJobGoesOnAtTheNextStart() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try ServedFarm.addPhotos(to: folder, count: 12)
        let hold = try ServedFarm.holdTiles(in: folder)
        let first = try ServedFarm(folder: folder, workers: 1, arguments: ["--grace", "600"])
        let manifest = try first.writeJob("stopped", sigma: 8, held: true)
        let id = try first.submit(manifest)
        let before = try first.waitForOutputs(of: id) { $0.values.contains { $0.state == "rendering" } }
        let inFlight = before.filter { $0.value.state == "rendering" }.keys
        kill(first.process.processIdentifier, SIGTERM)
        // Stopping: the farm starts no other output; then the held tiles go on. (A submission
        // with a priority out of range changes nothing: 400 until the server stops, then 503.)
        _ = try first.poll({ try first.call("POST", "/api/v1/jobs", json: ["path": manifest, "priority": 500]).0 }) { $0 == 503 }
        try FileManager.default.removeItem(at: hold)
        let stopped = first.stop(signal: 0, within: 120)
        #expect(stopped.status == 0, "\(stopped.stderr)")
        #expect(first.process.terminationReason == .exit)
        let out = folder.appendingPathComponent("out/stopped").path
        let names = try FileManager.default.contentsOfDirectory(atPath: out)
        #expect(names.allSatisfy { !$0.hasPrefix(".") }, "temporary files left: \(names)")
        #expect(!inFlight.isEmpty)
        for output in inFlight {
            #expect(names.contains((output as NSString).lastPathComponent), "\(output) was rendering at SIGTERM and not written")
        }
        #expect(names.count < 12)

        let second = try ServedFarm(folder: folder, workers: 1)
        defer { second.stop() }
        let job = try second.finished(id)
        #expect(job["state"] as? String == "completed", "\(job)")
        #expect(job["outputsUpToDate"] as? Int == names.count)
        #expect(job["outputsWritten"] as? Int == 12 - names.count)
    }

    /// `--max-connections-per-address 2`: a client on another address holding five half-sent
    /// requests gets two connections, the other three are closed as they are accepted (the
    /// server's own count in /metrics), and everyone else is answered.
    @Test func maxConnectionsPerAddressBoundsOneClientsShare() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try ServedFarm(folder: folder, workers: 1, arguments: ["--max-connections-per-address", "2"])
        defer { server.stop() }
        let client = Process()
        client.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        client.arguments = [
            "python3", "-c",
            """
            import socket, sys, time
            socks = []
            for i in range(5):
                s = socket.socket(); s.bind(("127.0.0.2", 0)); s.connect(("127.0.0.1", int(sys.argv[1])))
                try:
                    s.sendall(b"GET /healthz HTTP/1.1\\r\\nX-Slow: ")
                except OSError:
                    pass
                socks.append(s)
            time.sleep(600)
            """,
            "\(server.port)",
        ]
        try client.run()
        defer { kill(client.processIdentifier, SIGKILL) }
        let refused = try server.poll({ try server.metrics()["blurfarm_connections_refused_total"] ?? 0 }) { $0 >= 3 }
        let (health, _) = try server.call("GET", "/healthz")
        #expect(refused == 3)
        #expect(health == 200)
        // The total follows the descriptor limit `serve` raised (its soft limit to this hard one).
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        let hard = limit.rlim_max >= rlim_t(Int.max) ? Int.max : Int(limit.rlim_max)
        #expect(try server.metrics()["blurfarm_connections_limit"] == min(1 << 20, max(16, (hard - 256) / 2)))
    }

    /// The workers (where plugins run) inherit no descriptor of the server's but their pipes:
    /// not its listening socket, not its queue database.
    @Test func theWorkersInheritNeitherTheListeningSocketNorTheQueue() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try ServedFarm.addPhotos(to: folder, count: 2)
        let server = try ServedFarm(folder: folder, workers: 2)
        defer { server.stop() }
        let id = try server.submit(try server.writeJob("inherit"))
        #expect(try server.finished(id)["state"] as? String == "completed")
        let workers = try server.call("GET", "/api/v1/workers").1["workers"] as? [[String: Any]] ?? []
        let pids = workers.compactMap { $0["pid"] as? Int }.filter { $0 > 0 }
        #expect(!pids.isEmpty)
        for pid in pids {
            let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
            let targets = fds.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)") }
            #expect(!targets.isEmpty)
            #expect(!targets.contains { $0.hasPrefix("socket:") || $0.contains("queue.sqlite") }, "worker \(pid) holds \(targets)")
        }
    }

    /// A cron run of the same manifest holds the job's lock (its tiles held by the `hold`
    /// plugin, however fast the machine): the served job fails naming it, and writes nothing.
    @Test func aServedJobAndARunOfTheSameManifestNeverWriteAtOnce() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try ServedFarm.addPhotos(to: folder, count: 8)
        let hold = try ServedFarm.holdTiles(in: folder)
        let server = try ServedFarm(folder: folder, workers: 1)
        defer { server.stop() }
        let manifest = try server.writeJob("shared", held: true)
        // A cron run of the same manifest, with the server's configuration (state folder).
        let run = try server.startRun(manifest)
        defer { try? FileManager.default.removeItem(at: hold) }  // also when the test throws
        let id = try server.submit(manifest)
        let job = try server.finished(id)
        try FileManager.default.removeItem(at: hold)
        run.waitUntilExit()
        #expect(run.terminationStatus == 0)
        #expect(job["state"] as? String == "failed", "\(job)")
        #expect((job["error"] as? String)?.contains("job 'shared' is already running (pid \(run.processIdentifier)") == true, "\(job)")
        #expect(job["outputsWritten"] as? Int == 0)
    }

    /// A served job keeps its inputs' sizes in the job's records as `run` does (a variant with
    /// `sizes` needs each width): the next submission plans with the kept ones, reading no
    /// header of an unchanged input. A width planted for one input is what it plans with.
    @Test func aServedJobKeepsItsInputsSizesAsRunDoes() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try ServedFarm.addPhotos(to: folder, count: 4)
        let server = try ServedFarm(folder: folder)
        defer { server.stop() }
        let manifest = server.path("srcset.job")
        try "job: srcset\ninputs: [photos/*]\noutputs:\n  - name: w\n    path: out/{stem}-{size}w.png\n    resize:\n      sizes: [32, 64]\n"
            .write(toFile: manifest, atomically: true, encoding: .utf8)
        let first = try server.finished(try server.submit(manifest))
        #expect(first["state"] as? String == "completed" && first["outputsTotal"] as? Int == 8, "\(first)")
        let files = FileManager.default.enumerator(atPath: server.path("state"))?.compactMap { $0 as? String } ?? []
        let index = try #require(files.first { $0.hasSuffix("/" + OutputRecords.fileName) })
        let records = try OutputRecords(folder: server.path("state/" + (index as NSString).deletingLastPathComponent))
        let kept = try records.sizesPage(after: nil, limit: 10)
        #expect(kept.count == 4 && kept.allSatisfy { $0.width > 64 }, "\(kept)")

        var planted = try #require(kept.first)
        planted.width = 40
        var batches = [[planted]]
        try records.keepSizes { batches.popLast() }
        let second = try server.finished(try server.submit(manifest))
        // The planted input is planned at 32 alone: 64 is wider than the 40 px it is said to be.
        #expect(second["state"] as? String == "completed" && second["outputsTotal"] as? Int == 7, "\(second)")
    }

    @Test func anAddressOtherThanLoopbackNeedsAToken() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try Blurfarm.run(["serve", "--listen", "0.0.0.0:0", "--root", folder.path])
        #expect(result.status == 2)
        #expect(result.stderr.contains("needs a token: --token-file"), "\(result.stderr)")
        let short = folder.appendingPathComponent("token").path
        try "abc\n".write(toFile: short, atomically: true, encoding: .utf8)
        let weak = try Blurfarm.run(["serve", "--listen", "0.0.0.0:0", "--root", folder.path, "--token-file", short])
        #expect(weak.status == 2)
        #expect(weak.stderr.contains("16 characters or more"), "\(weak.stderr)")
    }

    /// The status page in headless Chromium (Tests/BlurfarmCLITests/web/status_page.py): a job
    /// submitted through the API appears and its bar reaches 100 %, the cancel button cancels a
    /// second job; screenshots at 390 and 1400 px in `blurfarm-screenshots/` of the temporary
    /// folder.
    @Test(.tags(.browser)) func theStatusPageShowsAJobToCompletionAndCancelsAnother() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try ServedFarm.addPhotos(to: folder, count: 6)
        let server = try ServedFarm(folder: folder, workers: 1)
        defer { server.stop() }
        let first = try server.writeJob("shown", sigma: 2)
        let second = try server.writeJob("cancelled", sigma: 20)
        let shots = FileManager.default.temporaryDirectory.appendingPathComponent("blurfarm-screenshots")
        try FileManager.default.createDirectory(at: shots, withIntermediateDirectories: true)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("web/status_page.py")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, server.base, first, second, shots.path]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = out
        try process.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(text)")
        for width in [390, 1400] {
            #expect(FileManager.default.fileExists(atPath: shots.appendingPathComponent("status-\(width).png").path))
        }
    }

    static func inode(_ path: String) throws -> UInt64 {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.systemFileNumber] as? NSNumber)?.uint64Value ?? 0
    }
}
