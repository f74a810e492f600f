import BlurfarmState
import BlurfarmSystem
import BlurfarmImageIO
import BlurfarmTestSupport
import Foundation
import Synchronization
import Testing

/// Cron use of `blurfarm run`, end to end through the built executable: up-to-date outputs are
/// skipped without decoding, exactly the affected outputs run again, the job lock, a killed
/// run, `--prune` (docs/scheduling.md).
@Suite(.tags(.process), .blocking) struct IncrementalRunTests {
    /// A job folder: `in/` with 24 corpus photos (1920×1080 JPEG) and 6 small generated PPM
    /// images, a configuration whose state folder is inside it, and a manifest of two variants.
    struct JobFolder {
        let root: URL
        var manifest: String { root.appendingPathComponent("job.job").path }
        var config: String { root.appendingPathComponent("farm.conf").path }
        func path(_ relative: String) -> String { root.appendingPathComponent(relative).path }

        static func make(photos: Int = 24, generated: Int = 6, sigma: Double = 2) throws -> JobFolder {
            let folder = JobFolder(root: try Fixtures.temporaryFolder())
            try FileManager.default.createDirectory(atPath: folder.path("in"), withIntermediateDirectories: true)
            for i in 0..<photos {
                try FileManager.default.copyItem(
                    atPath: Corpus.path(String(format: "batch1080/b%02d.jpg", i)), toPath: folder.path("in/photo\(i).jpg"))
            }
            var random = SplitMix(seed: 6)
            for i in 0..<generated {
                try ppm(width: 40 + 7 * i, height: 30 + 5 * i, using: &random).write(to: URL(fileURLWithPath: folder.path("in/gen\(i).ppm")))
            }
            try "state: state\n".write(toFile: folder.config, atomically: true, encoding: .utf8)
            try folder.writeManifest(sigma: sigma)
            return folder
        }

        func writeManifest(sigma: Double) throws {
            let text = """
                job: cron
                inputs: [in/*.jpg, in/*.ppm]
                outputs:
                  - name: thumb
                    path: out/thumb/{stem}.jpg
                    resize:
                      width: 160
                  - name: blur
                    path: out/blur/{stem}.jpg
                    filters:
                      - gaussian:
                          sigma: \(sigma)

                """
            try text.write(toFile: manifest, atomically: true, encoding: .utf8)
        }

        /// Runs the job with `arguments` added, writing the JSON report; returns the result and
        /// the report.
        func run(_ arguments: [String] = []) throws -> (CommandResult, Report) {
            let report = path("report-\(UUID().uuidString).json")
            let result = try Blurfarm.run(["run", manifest, "--config", config, "--report", report] + arguments)
            return (result, try Report(path: report))
        }
    }

    /// The one job report of a run's `--report` list.
    struct Report {
        let counts: [String: Int]
        /// Output path → status.
        let statuses: [String: String]
        let pruned: [String]

        init(path: String) throws {
            let list = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [[String: Any]]
            let report = try #require(list?.count == 1 ? list?.first : nil)
            counts = report["counts"] as? [String: Int] ?? [:]
            var statuses: [String: String] = [:]
            for output in report["outputs"] as? [[String: Any]] ?? [] {
                statuses[output["output"] as? String ?? ""] = output["status"] as? String
            }
            self.statuses = statuses
            pruned = report["pruned"] as? [String] ?? []
        }

        /// The outputs with `status`, as paths ending with the given part (`thumb/photo3.jpg`).
        func outputs(_ status: String) -> Set<String> {
            Set(statuses.filter { $0.value == status }.keys.map { path in
                path.split(separator: "/").suffix(2).joined(separator: "/")
            })
        }
    }

    /// A binary PPM of random pixels.
    static func ppm(width: Int, height: Int, using random: inout SplitMix) -> Data {
        var data = Data("P6\n\(width) \(height)\n255\n".utf8)
        for _ in 0..<(width * height * 3) { data.append(UInt8(truncatingIfNeeded: random.next())) }
        return data
    }

    static let stems = (0..<24).map { "photo\($0)" } + (0..<6).map { "gen\($0)" }

    @Test func aSecondRunDecodesNothingAndEachChangeRedoesExactlyItsOutputs() throws {
        let job = try JobFolder.make()
        defer { try? FileManager.default.removeItem(at: job.root) }

        let (first, firstReport) = try job.run()
        #expect(first.status == 0, "\(first.stderr)")
        #expect(firstReport.counts["written"] == 60 && firstReport.counts["decoded"] == 30, "\(firstReport.counts)")
        #expect(first.stdout.split(separator: "\n").count == 1, "one summary line: \(first.stdout)")

        // Nothing changed: nothing decoded, nothing printed (how long it takes is a figure for
        // docs/performance.md, not a test).
        let (second, secondReport) = try job.run()
        #expect(second.status == 0 && second.stdout.isEmpty && second.stderr.isEmpty, "\(second.stdout)\(second.stderr)")
        #expect(secondReport.counts["skipped"] == 60 && secondReport.counts["decoded"] == 0, "\(secondReport.counts)")
        #expect(secondReport.counts["written"] == 0)

        // An input's modification time changes, its bytes do not: still up to date.
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: 3600)], ofItemAtPath: job.path("in/photo4.jpg"))
        let (_, touched) = try job.run()
        #expect(touched.counts["skipped"] == 60 && touched.counts["decoded"] == 0, "\(touched.counts)")

        // An input's contents change: its two outputs, nothing else.
        try FileManager.default.removeItem(atPath: job.path("in/photo3.jpg"))
        try FileManager.default.copyItem(atPath: Corpus.path("batch1080/b40.jpg"), toPath: job.path("in/photo3.jpg"))
        let (_, changedInput) = try job.run()
        #expect(changedInput.outputs("written") == ["thumb/photo3.jpg", "blur/photo3.jpg"], "\(changedInput.counts)")
        #expect(changedInput.counts["skipped"] == 58 && changedInput.counts["decoded"] == 1)

        // One variant's sigma changes: that variant's 30 outputs, nothing else.
        try job.writeManifest(sigma: 2.5)
        let (_, changedSigma) = try job.run()
        #expect(changedSigma.outputs("written") == Set(Self.stems.map { "blur/\($0).jpg" }), "\(changedSigma.counts)")
        // The other variant's, up to date, counted and not listed.
        #expect(changedSigma.counts["skipped"] == 30 && changedSigma.statuses.count == 30, "\(changedSigma.counts)")

        // One output deleted, another changed by hand: those two, nothing else.
        try FileManager.default.removeItem(atPath: job.path("out/thumb/gen2.jpg"))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: job.path("out/blur/photo7.jpg")))
        try handle.seek(toOffset: 1000)
        try handle.write(contentsOf: Data([0x42, 0x42]))
        try handle.close()
        let (_, repaired) = try job.run()
        #expect(repaired.outputs("written") == ["thumb/gen2.jpg", "blur/photo7.jpg"], "\(repaired.counts)")
        #expect(repaired.counts["skipped"] == 58 && repaired.counts["decoded"] == 2)

        // --force runs everything.
        let (_, forced) = try job.run(["--force"])
        #expect(forced.counts["written"] == 60 && forced.counts["skipped"] == 0)
    }
}

extension IncrementalRunTests {
    /// A run started and not waited for; `ended` is set when it exits (from the termination
    /// handler, whatever order the runs are waited for in).
    struct Started {
        let process: Process
        let out: Pipe
        let err: Pipe
        let ended: EndTime
    }

    final class EndTime: Sendable {
        let instant = Mutex<ContinuousClock.Instant?>(nil)
    }

    /// Starts `blurfarm run` on `job` without waiting for it.
    static func start(_ job: JobFolder, _ arguments: [String]) throws -> Started {
        let process = Process()
        process.executableURL = Blurfarm.executable
        process.arguments = ["run", job.manifest, "--config", job.config] + arguments
        process.environment = Blurfarm.environment
        let started = Started(process: process, out: Pipe(), err: Pipe(), ended: EndTime())
        process.standardOutput = started.out
        process.standardError = started.err
        let ended = started.ended
        process.terminationHandler = { _ in ended.instant.withLock { $0 = ContinuousClock.now } }
        try process.run()
        return started
    }

    /// Waits for a started run; returns its status, standard error and when it ended.
    static func finish(_ run: Started) throws -> (status: Int32, stderr: String, ended: ContinuousClock.Instant) {
        _ = run.out.fileHandleForReading.readDataToEndOfFile()
        let stderr = String(decoding: run.err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        run.process.waitUntilExit()
        var ended: ContinuousClock.Instant?
        // The handler runs on another thread, right after the exit.
        try eventually("the run's termination handler", interval: .milliseconds(1)) {
            ended = run.ended.instant.withLock { $0 }
            return ended != nil
        }
        return (run.process.terminationStatus, stderr, try #require(ended))
    }

    @Test func twoRunsAtOnceOneWorksTheOtherExitsWithTheLockStatusAtOnce() throws {
        let job = try JobFolder.make(photos: 12, generated: 0, sigma: 12)
        defer { try? FileManager.default.removeItem(at: job.root) }
        let runs = [try Self.start(job, []), try Self.start(job, [])]
        let results = try runs.map(Self.finish)
        let locked = results.indices.filter { results[$0].status == 3 }
        let worked = results.indices.filter { results[$0].status == 0 }
        try #require(locked.count == 1 && worked.count == 1, "statuses \(results.map(\.status)): \(results.map(\.stderr))")
        let loser = results[locked[0]], winner = runs[worked[0]].process
        #expect(results[worked[0]].ended > loser.ended, "the locked run did not exit before the other finished")
        #expect(loser.stderr.split(separator: "\n").count == 1, "\(loser.stderr)")
        #expect(loser.stderr.hasPrefix("blurfarm: error: job 'cron' is already running (pid \(winner.processIdentifier),"), "\(loser.stderr)")
        for stem in (0..<12).map({ "photo\($0)" }) {
            #expect(FileManager.default.fileExists(atPath: job.path("out/blur/\(stem).jpg")))
        }
    }

    /// A run meets another's lock before it walks the inputs (a cron run coming round while a
    /// first run of a large library is busy): with the lock held, a run whose plan would be
    /// refused (two inputs writing one output, found by the walk) exits 3, says the lock alone
    /// and writes nothing; with the lock let go, the same run says the plan's error (exit 2).
    @Test func aRunMeetsAnothersLockBeforeItWalksTheInputs() throws {
        let job = try JobFolder.make(photos: 2, generated: 1)
        defer { try? FileManager.default.removeItem(at: job.root) }
        try FileManager.default.copyItem(atPath: job.path("in/gen0.ppm"), toPath: job.path("in/photo0.ppm"))
        let lockPath = JobStateFolder(state: job.path("state"), jobName: "cron", manifestPath: job.manifest).lockPath
        var held: JobLock?
        if case .acquired(let lock) = try JobLock.acquire(lockPath, wait: false) { held = lock }
        try #require(held != nil, "the lock was not free")
        let locked = try Blurfarm.run(["run", job.manifest, "--config", job.config])
        #expect(locked.status == 3, "\(locked.stderr)")
        #expect(locked.stderr.hasPrefix("blurfarm: error: job 'cron' is already running (pid \(Syscalls.processID),"), "\(locked.stderr)")
        #expect(locked.stderr.split(separator: "\n").count == 1 && !locked.stderr.contains("both write"), "\(locked.stderr)")
        #expect(!FileManager.default.fileExists(atPath: job.path("out")))
        // With --quiet (cron mails what a run prints), the line goes to the log alone.
        let quiet = try Blurfarm.run(["run", job.manifest, "--config", job.config, "--quiet", "--log", job.path("run.log")])
        #expect(quiet.status == 3 && quiet.stderr.isEmpty && quiet.stdout.isEmpty, "\(quiet.stderr)")
        let log = try String(contentsOfFile: job.path("run.log"), encoding: .utf8)
        #expect(log.split(separator: "\n").count == 1 && log.contains("job 'cron' is already running (pid \(Syscalls.processID),"), "\(log)")
        held = nil
        let refused = try Blurfarm.run(["run", job.manifest, "--config", job.config])
        #expect(refused.status == 2 && refused.stderr.contains("both write"), "\(refused.stderr)")
    }

    @Test func withWaitTheSecondRunRunsAfterTheFirstAndFindsEverythingUpToDate() throws {
        let job = try JobFolder.make(photos: 12, generated: 0, sigma: 12)
        defer { try? FileManager.default.removeItem(at: job.root) }
        let reports = [job.path("a.json"), job.path("b.json")]
        let runs = try reports.map { try Self.start(job, ["--wait", "--report", $0]) }
        let results = try runs.map(Self.finish)
        #expect(results.map(\.status) == [0, 0], "\(results.map(\.stderr))")
        let counts = try reports.map { try Report(path: $0).counts }.sorted { ($0["written"] ?? 0) > ($1["written"] ?? 0) }
        #expect(counts[0]["written"] == 24 && counts[0]["decoded"] == 12, "\(counts)")
        #expect(counts[1]["skipped"] == 24 && counts[1]["decoded"] == 0 && counts[1]["written"] == 0, "\(counts)")
    }
}

extension IncrementalRunTests {
    /// The records file of the job (one in the state folder).
    /// The job's state folder, once a run made it.
    static func recordsFolder(_ job: JobFolder) -> String? {
        let jobs = job.path("state/jobs")
        guard let name = try? FileManager.default.contentsOfDirectory(atPath: jobs).first else { return nil }
        return jobs + "/" + name
    }

    /// Waits until `job` has `count` outputs recorded, while `running` holds: the test fails
    /// when they are not recorded in time, or when what records them ended first.
    static func waitForRecords(
        of job: JobFolder, count: Int, sourceLocation: SourceLocation = #_sourceLocation, while running: () -> Bool
    ) throws {
        try eventually("\(count) outputs recorded", interval: .milliseconds(5), sourceLocation: sourceLocation) {
            if recordedOutputs(job).count >= count { return true }
            try #require(
                running(), "it ended with \(recordedOutputs(job).count) outputs recorded", sourceLocation: sourceLocation)
            return false
        }
    }

    /// Output paths in the records file (whole lines only).
    static func recordedOutputs(_ job: JobFolder) -> Set<String> {
        guard let folder = recordsFolder(job), let records = try? OutputRecords.read(folder: folder) else { return [] }
        return Set(records.records.keys.map(\.text))
    }

    /// Two inputs whose names are one string to Swift but other bytes (`é`, and `e` with a
    /// combining accent), with other pixels, and so their outputs: each output is recorded as
    /// its own input's, and a second run finds all of them up to date and decodes nothing.
    @Test func twinNamesAreRecordedApartAndUpToDateOnTheSecondRun() throws {
        let job = try JobFolder.make(photos: 1, generated: 0)
        defer { try? FileManager.default.removeItem(at: job.root) }
        var random = SplitMix(seed: 11)
        for (index, name) in ["\u{E9}", "e\u{301}"].enumerated() {
            try Self.ppm(width: 20 + index, height: 16, using: &random).write(to: URL(fileURLWithPath: job.path("in/\(name).ppm")))
        }
        let (first, firstReport) = try job.run()
        #expect(first.status == 0, "\(first.stderr)")
        #expect(firstReport.counts["written"] == 6 && firstReport.counts["decoded"] == 3, "\(firstReport.counts)")
        // Every row of the index (a dictionary by path would take the twins for one).
        let records = try OutputRecords(folder: try #require(Self.recordsFolder(job))).all
        #expect(records.count == 6)
        for name in ["\u{E9}", "e\u{301}"] {
            let input = Array(job.path("in/\(name).ppm").utf8)
            let outputs = ["thumb", "blur"].map { Array(job.path("out/\($0)/\(name).jpg").utf8) }
            let mine = records.filter { record in outputs.contains { record.output.utf8.elementsEqual($0) } }
            #expect(mine.count == 2 && mine.allSatisfy { $0.input.utf8.elementsEqual(input) }, "\(name.unicodeScalars.count) scalars")
        }
        let (second, secondReport) = try job.run()
        #expect(second.status == 0, "\(second.stderr)")
        #expect(secondReport.counts["skipped"] == 6 && secondReport.counts["decoded"] == 0, "\(secondReport.counts)")
        // `check --status` reads the records whole, and judges each twin by its own.
        #expect(try OutputRecords.read(folder: try #require(Self.recordsFolder(job))).records.count == 6)
        let status = try Blurfarm.run(["check", job.manifest, "--config", job.config, "--status", "--json"])
        let outputs = (try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [[String: Any]])?.first?["outputs"]
        let states = (outputs as? [[String: Any]] ?? []).compactMap { $0["state"] as? String }
        #expect(states == Array(repeating: "upToDate", count: 6), "\(status.stdout)")
    }

    /// The state folder keeps the newest `reports-kept` reports of a job: each run that did
    /// work writes one and removes the oldest beyond that many; a run with nothing to do
    /// writes none and removes none.
    @Test func theStateFolderKeepsTheNewestReportsOfAJob() throws {
        let job = try JobFolder.make(photos: 1, generated: 1)
        defer { try? FileManager.default.removeItem(at: job.root) }
        try "state: state\nreports-kept: 2\n".write(toFile: job.config, atomically: true, encoding: .utf8)
        func reports() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: job.path("state/reports")).sorted()
        }
        var seen: [String] = []
        for forced in [false, true, true] {
            let (result, report) = try job.run(forced ? ["--force"] : [])
            #expect(result.status == 0 && report.counts["written"] == 4, "\(result.stderr)")
            let now = try reports()
            let new = now.filter { !seen.contains($0) }
            #expect(new.count == 1 && new[0].hasPrefix("cron-"), "\(now)")
            seen += new
            #expect(Set(now) == Set(seen.suffix(2)), "\(now) after \(seen)")
        }
        let (idle, _) = try job.run()
        #expect(idle.status == 0, "\(idle.stderr)")
        #expect(Set(try reports()) == Set(seen.suffix(2)))
    }

    /// A run with nothing to do leaves the records' index as it was, byte for byte; and a
    /// state folder an earlier blurfarm kept (`records.jsonl`) is migrated by the next run,
    /// which finds every output up to date from it and writes none.
    @Test func aNoChangeRunTouchesNoRecordAndAnEarlierVersionsRecordsAreMigrated() throws {
        let job = try JobFolder.make(photos: 3, generated: 2)
        defer { try? FileManager.default.removeItem(at: job.root) }
        let (first, _) = try job.run()
        #expect(first.status == 0, "\(first.stderr)")
        let folder = try #require(Self.recordsFolder(job))
        let index = folder + "/" + OutputRecords.fileName
        func snapshot() throws -> (Data, Date?) {
            (try Data(contentsOf: URL(fileURLWithPath: index)),
             try FileManager.default.attributesOfItem(atPath: index)[.modificationDate] as? Date)
        }
        let before = try snapshot()
        let (second, report) = try job.run()
        #expect(second.status == 0 && report.counts["skipped"] == 10, "\(second.stderr)")
        let after = try snapshot()
        #expect(after.0 == before.0 && after.1 == before.1, "a run that changed nothing wrote to the records")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == ["lock", OutputRecords.fileName])

        // The records as blurfarm 0.3.0 kept them: one JSON line each.
        let contents = try OutputRecords.read(folder: folder)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        var lines = ""
        for record in contents.records.values { lines += String(decoding: try encoder.encode(["record": record]), as: UTF8.self) + "\n" }
        for made in contents.folders.values { lines += String(decoding: try encoder.encode(["folder": made]), as: UTF8.self) + "\n" }
        try FileManager.default.removeItem(atPath: index)
        try lines.write(toFile: folder + "/records.jsonl", atomically: true, encoding: .utf8)
        let (third, migrated) = try job.run()
        #expect(third.status == 0 && migrated.counts["skipped"] == 10 && migrated.counts["written"] == 0, "\(third.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == ["lock", OutputRecords.fileName])
        #expect(try OutputRecords.read(folder: folder).records.count == 10)
    }

    @Test func aRunKilledMidJobIsFinishedByTheNextWhichRedoesOnlyWhatWasNotRecorded() throws {
        let job = try JobFolder.make(photos: 16, generated: 0, sigma: 12)
        defer { try? FileManager.default.removeItem(at: job.root) }
        let started = try Self.start(job, [])
        let run = (started.process, ())
        // Into the job: some outputs recorded (polled: the condition, not a guess at a time).
        try Self.waitForRecords(of: job, count: 3) { run.0.isRunning }
        let runningAtKill = run.0.isRunning
        kill(run.0.processIdentifier, SIGKILL)
        _ = try Self.finish(started)
        try #require(runningAtKill, "the run ended before it was killed: nothing was tested")
        let recorded = Self.recordedOutputs(job)
        #expect(recorded.count >= 3 && recorded.count < 32, "\(recorded.count) recorded")

        // No output is half-written: every file at an output path decodes whole.
        // (A variant's folder is made with its first output: it may not be there yet.)
        for variant in ["thumb", "blur"] where FileManager.default.fileExists(atPath: job.path("out/\(variant)")) {
            for name in try FileManager.default.contentsOfDirectory(atPath: job.path("out/\(variant)"))
            where !name.hasPrefix(".") {
                #expect(throws: Never.self, "\(variant)/\(name)") {
                    _ = try ImageReader.read(job.path("out/\(variant)/\(name)"))
                }
            }
        }
        let (next, report) = try job.run()
        #expect(next.status == 0, "\(next.stderr)")
        let (after, afterReport) = try job.run()
        #expect(after.status == 0 && afterReport.counts["skipped"] == 32, "\(after.stderr)")
        // It wrote exactly the outputs not recorded (those up to date are counted, not listed).
        let written = Set(report.statuses.filter { $0.value == "written" }.keys.map {
            URL(fileURLWithPath: $0).standardizedFileURL.path
        })
        #expect(written.isDisjoint(with: recorded) && report.statuses.count == written.count, "\(report.statuses)")
        #expect(report.counts["written"] == 32 - recorded.count && report.counts["skipped"] == recorded.count, "\(report.counts)")
    }
}

extension IncrementalRunTests {
    @Test func pruneRemovesExactlyTheRecordedOrphans() throws {
        let job = try JobFolder.make(photos: 3, generated: 2)
        defer { try? FileManager.default.removeItem(at: job.root) }
        _ = try job.run()
        // Files blurfarm did not write: one unrelated, one a former output of another job.
        try "notes".write(toFile: job.path("out/thumb/notes.txt"), atomically: true, encoding: .utf8)
        try FileManager.default.copyItem(atPath: job.path("out/blur/photo0.jpg"), toPath: job.path("out/blur/other.jpg"))
        // Two inputs go; one of their outputs was edited by hand since.
        try FileManager.default.removeItem(atPath: job.path("in/photo1.jpg"))
        try FileManager.default.removeItem(atPath: job.path("in/gen0.ppm"))
        try Data("edited".utf8).write(to: URL(fileURLWithPath: job.path("out/blur/gen0.jpg")))

        // Without --prune nothing is removed.
        let (_, kept) = try job.run()
        #expect(kept.pruned.isEmpty && kept.counts["skipped"] == 6)
        #expect(FileManager.default.fileExists(atPath: job.path("out/thumb/photo1.jpg")))

        let (pruning, pruned) = try job.run(["--prune"])
        #expect(pruning.status == 0, "\(pruning.stderr)")
        #expect(
            Set(pruned.pruned.map { $0.split(separator: "/").suffix(2).joined(separator: "/") })
                == ["thumb/photo1.jpg", "blur/photo1.jpg", "thumb/gen0.jpg"], "\(pruned.pruned)")
        #expect(pruning.stderr.contains("blurfarm: warning: \(job.path("out/blur/gen0.jpg")): input gone but the file was changed"), "\(pruning.stderr)")
        #expect(!pruning.stderr.contains("error"), "\(pruning.stderr)")
        let left = Set(try ["thumb", "blur"].flatMap { variant in
            try FileManager.default.contentsOfDirectory(atPath: job.path("out/\(variant)")).map { "\(variant)/\($0)" }
        })
        #expect(left == [
            "thumb/notes.txt", "blur/other.jpg", "blur/gen0.jpg", "thumb/photo0.jpg", "blur/photo0.jpg",
            "thumb/photo2.jpg", "blur/photo2.jpg", "thumb/gen1.jpg", "blur/gen1.jpg",
        ])
        // The records went with the files: a second prune has nothing to do.
        let (again, secondPrune) = try job.run(["--prune"])
        #expect(again.stdout.isEmpty && secondPrune.pruned.isEmpty, "\(again.stdout)")
    }

    @Test func aLogGetsTimestampedLinesEvenWhenNothingWasToDo() throws {
        let job = try JobFolder.make(photos: 1, generated: 1)
        defer { try? FileManager.default.removeItem(at: job.root) }
        let log = job.path("cron.log")
        _ = try job.run(["--log", log])
        let (quiet, _) = try job.run(["--log", log])
        #expect(quiet.stdout.isEmpty)
        let (verbose, _) = try job.run(["--verbose"])
        #expect(verbose.stdout.contains("cron: 0 written, 0 failed, 2 inputs, in "), "\(verbose.stdout)")
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 2, "\(lines)")
        #expect(lines[0].contains("blurfarm[") && lines[0].contains("cron: 4 written, 0 failed"), "\(lines)")
        #expect(lines[1].contains("cron: 0 written, 0 failed") && lines[1].contains("4 up to date, 0 decoded"), "\(lines)")
        #expect(lines.allSatisfy { $0.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ "#, options: .regularExpression) != nil })
    }

    /// `--report` and `--log` are never a file the job reads or writes: the manifest, the
    /// configuration, an input, an output (written before the report replaced it, or an output
    /// whose file is not made yet), each other. Refused before anything runs (exit 2), naming the
    /// option and the file, which stays as it was. (Each was written over, or appended to.)
    @Test func theReportAndTheLogAreNeverAFileTheJobReadsOrWrites() throws {
        let job = try JobFolder.make(photos: 1, generated: 1)
        defer { try? FileManager.default.removeItem(at: job.root) }
        let input = job.path("in/photo0.jpg")
        let (first, _) = try job.run()
        #expect(first.status == 0, "\(first.stderr)")
        let kept = try [job.manifest, job.config, input, job.path("out/blur/photo0.jpg")].map { ($0, try Data(contentsOf: URL(fileURLWithPath: $0))) }
        for (option, path, problem) in [
            ("--report", job.manifest, "it is the manifest"), ("--log", job.config, "it is '\(job.config)', which the job reads"),
            ("--report", input, "it is the input 'in/photo0.jpg'"), ("--log", input, "it is the input 'in/photo0.jpg'"),
            ("--report", job.path("out/blur/photo0.jpg"), "variant 'blur' writes it (for in/photo0.jpg)"),
            ("--log", job.path("out/thumb/gen0.jpg"), "variant 'thumb' writes it (for in/gen0.ppm)"),
        ] {
            try? FileManager.default.removeItem(atPath: job.path("out/thumb/gen0.jpg"))
            let what = option == "--report" ? "the report (--report)" : "the log (--log)"
            let run = try Blurfarm.run(["run", job.manifest, "--config", job.config, "--force", option, path])
            #expect(run.status == 2, "\(option) \(path): \(run.stderr)")
            #expect(run.stderr.contains("error: \(what) cannot be '\(path)': \(problem)"), "\(option) \(path): \(run.stderr)")
            for (file, bytes) in kept { #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == bytes, "\(option) \(path): \(file)") }
        }
        let both = try Blurfarm.run(["run", job.manifest, "--config", job.config, "--report", job.path("r"), "--log", job.path("./r")])
        #expect(both.status == 2 && both.stderr.contains("--report and --log name one file"), "\(both.stderr)")
        #expect(!FileManager.default.fileExists(atPath: job.path("r")))
    }
}
