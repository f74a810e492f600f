import BlurfarmCoordinator
import BlurfarmManifest
import BlurfarmState
import BlurfarmTestSupport
import Foundation
import Testing

/// A bad input through the executable: reported once per input naming the variants it cost,
/// remembered in the job's records and skipped quietly until it changes (`--retry-failed`
/// forces it); `check --status` says what a run would do to every output, reading nothing but
/// stamps and hashes and writing nothing; the read commands' `--json` (docs/json.md).
@Suite(.tags(.process), .blocking) struct RememberedFailureTests {
    /// A job folder: `in/` with the given files, a configuration whose state folder is inside
    /// it, and a manifest of two variants (thumb, blur) over `in/*`.
    struct JobFolder {
        let root: URL
        var manifest: String { path("job.job") }
        var config: String { path("farm.conf") }
        func path(_ relative: String) -> String { root.appendingPathComponent(relative).path }

        static func make(_ files: [String: String], thumbWidth: Int = 60, pixelLimit: Int? = nil) throws -> JobFolder {
            let folder = JobFolder(root: try Fixtures.temporaryFolder())
            try FileManager.default.createDirectory(atPath: folder.path("in"), withIntermediateDirectories: true)
            for (name, corpus) in files {
                try FileManager.default.copyItem(atPath: Fixtures.corpus(corpus), toPath: folder.path("in/\(name)"))
            }
            try folder.configure(pixelLimit: pixelLimit)
            try folder.writeManifest(thumbWidth: thumbWidth)
            return folder
        }

        func configure(pixelLimit: Int?) throws {
            try ("state: state\n" + (pixelLimit.map { "pixel-limit: \($0)\n" } ?? ""))
                .write(toFile: config, atomically: true, encoding: .utf8)
        }

        func writeManifest(thumbWidth: Int) throws {
            try """
                job: remember
                inputs: [in/*]
                outputs:
                  - name: thumb
                    path: out/thumb/{stem}.jpg
                    resize:
                      width: \(thumbWidth)
                  - name: blur
                    path: out/blur/{stem}.jpg
                    filters:
                      - gaussian:
                          sigma: 1

                """.write(toFile: manifest, atomically: true, encoding: .utf8)
        }

        /// The statuses of the job's outputs from the records looked up in the index a batch at
        /// a time, which must be those from the records read whole; how many.
        func statusesLookedUpAndWhole(sourceLocation: SourceLocation = #_sourceLocation) throws -> Int {
            let loader = JobLoader(configuration: FarmConfiguration(), registry: .builtIn, reads: [])
            let plan = try loader.plan(fileAtPath: manifest).get()
            let folder = JobStateFolder(state: path("state"), jobName: plan.job.name, manifestPath: manifest)
            let index = try #require(try OutputRecords.reading(folder: folder.path), sourceLocation: sourceLocation)
            func statuses(_ records: IncrementalRun.StatusRecords) -> [String] {
                IncrementalRun.status(of: plan, records: records, versions: "v", pixelLimit: 1 << 30)
                    .map { "\($0.output) \($0.state) \($0.reason ?? "")" }
            }
            let lookedUp = statuses(.index(index))
            #expect(lookedUp == statuses(.whole(try OutputRecords.read(folder: folder.path))), sourceLocation: sourceLocation)
            return lookedUp.count
        }

        func blurfarm(_ arguments: [String]) throws -> CommandResult {
            try Blurfarm.run(arguments + [manifest, "--config", config])
        }

        /// `run` with a report: the result, and each output's status by its path's last two parts.
        func run(_ arguments: [String] = []) throws -> (CommandResult, [String: String], [String: Int]) {
            let report = path("report-\(UUID().uuidString).json")
            let result = try blurfarm(["run", "--workers", "0", "--report", report] + arguments)
            let list = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [[String: Any]]
            let job = try #require(list?.first)
            var statuses: [String: String] = [:]
            for output in job["outputs"] as? [[String: Any]] ?? [] {
                statuses[Self.short(output["output"] as? String ?? "")] = output["status"] as? String
            }
            return (result, statuses, job["counts"] as? [String: Int] ?? [:])
        }

        /// `check --status --json`: each output's state by its path's last two parts, and the counts.
        func status() throws -> (CommandResult, [String: String], [String: Int]) {
            let result = try blurfarm(["check", "--status", "--json"])
            let list = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]]
            let job = try #require(list?.first, "\(result.stdout)\(result.stderr)")
            var states: [String: String] = [:]
            for output in job["outputs"] as? [[String: Any]] ?? [] {
                states[Self.short(output["output"] as? String ?? "")] = output["state"] as? String
            }
            return (result, states, job["counts"] as? [String: Int] ?? [:])
        }

        static func short(_ path: String) -> String { path.split(separator: "/").suffix(2).joined(separator: "/") }

        /// Every file and folder under `relative`, with its bytes (folders: empty), by path.
        func snapshot(_ relative: String) throws -> [String: Data] {
            var files: [String: Data] = [:]
            let base = path(relative)
            for case let name as String in FileManager.default.enumerator(atPath: base)?.allObjects ?? [] {
                var isFolder: ObjCBool = false
                _ = FileManager.default.fileExists(atPath: base + "/" + name, isDirectory: &isFolder)
                files[name] = isFolder.boolValue ? Data() : try Data(contentsOf: URL(fileURLWithPath: base + "/" + name))
            }
            return files
        }
    }

    @Test func aBadInputIsReportedOnceRememberedAndSkippedUntilItChanges() throws {
        let job = try JobFolder.make(["kite.webp": "special/kite.webp", "bad.jpg": "special/truncated.jpg"])
        defer { try? FileManager.default.removeItem(at: job.root) }

        // The first run: one line for the input, naming the variants it cost; exit 1.
        let (first, firstStatuses, _) = try job.run()
        #expect(first.status == 1, "\(first.stderr)")
        let lines = first.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(first.stderr)")
        #expect(lines.first?.hasPrefix("blurfarm: error: \(job.path("in/bad.jpg")): ") == true, "\(first.stderr)")
        #expect(lines.first?.hasSuffix(" (variants thumb, blur not written)") == true, "\(first.stderr)")
        #expect(firstStatuses["thumb/bad.jpg"] == "failed" && firstStatuses["blur/kite.jpg"] == "written")
        func records() throws -> OutputRecords.Contents {
            try OutputRecords.read(folder: job.path("state/jobs").appending("/")
                + (try FileManager.default.contentsOfDirectory(atPath: job.path("state/jobs")).first ?? ""))
        }
        let remembered = try records().failures
        #expect(remembered[.init(job.path("in/bad.jpg"))] != nil, "\(remembered.keys.map(\.text))")

        // Later runs: quiet, exit 0, the outputs `failedEarlier` in the report and counted.
        let (second, secondStatuses, secondCounts) = try job.run()
        #expect(second.status == 0 && second.stdout.isEmpty && second.stderr.isEmpty, "\(second.stdout)\(second.stderr)")
        #expect(secondStatuses["thumb/bad.jpg"] == "failedEarlier" && secondStatuses["blur/bad.jpg"] == "failedEarlier")
        #expect(secondCounts["failedEarlier"] == 2 && secondCounts["failed"] == 0 && secondCounts["decoded"] == 0)
        let verbose = try job.blurfarm(["run", "--workers", "0", "--verbose"])
        #expect(verbose.status == 0 && verbose.stdout.contains("2 up to date, 0 decoded, 2 failed earlier"), "\(verbose.stdout)")
        // Touched, the same bytes: still the file that failed.
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: -3600)], ofItemAtPath: job.path("in/bad.jpg"))
        let (touched, touchedStatuses, _) = try job.run()
        #expect(touched.status == 0 && touched.stderr.isEmpty && touchedStatuses["blur/bad.jpg"] == "failedEarlier")
        let (status, states, _) = try job.status()
        #expect(status.status == 0 && states["thumb/bad.jpg"] == "failedEarlier" && states["blur/kite.jpg"] == "upToDate")

        // --retry-failed tries it again (and reports it again).
        let (retried, retriedStatuses, _) = try job.run(["--retry-failed"])
        #expect(retried.status == 1 && retried.stderr.split(separator: "\n").count == 1, "\(retried.stderr)")
        #expect(retriedStatuses["blur/bad.jpg"] == "failed" && retriedStatuses["blur/kite.jpg"] == nil)

        // The file changes (fixed): it runs, is written, and is no longer remembered.
        try FileManager.default.removeItem(atPath: job.path("in/bad.jpg"))
        try FileManager.default.copyItem(atPath: Fixtures.corpus("special/grayscale.jpg"), toPath: job.path("in/bad.jpg"))
        let (fixed, fixedStatuses, _) = try job.run()
        #expect(fixed.status == 0 && fixed.stderr.isEmpty, "\(fixed.stderr)")
        #expect(fixedStatuses["thumb/bad.jpg"] == "written" && fixedStatuses["blur/bad.jpg"] == "written")
        let (_, after, _) = try job.status()
        #expect(after.values.allSatisfy { $0 == "upToDate" }, "\(after)")
        #expect(try records().failures.isEmpty)
    }

    @Test func anInputOverThePixelLimitIsRememberedUntilTheLimitChanges() throws {
        let job = try JobFolder.make(["kite.webp": "special/kite.webp"], pixelLimit: 1000)
        defer { try? FileManager.default.removeItem(at: job.root) }
        let (first, _, _) = try job.run()
        #expect(first.status == 1 && first.stderr.contains("over the pixel limit") && first.stderr.contains("(variants thumb, blur not written)"),
            "\(first.stderr)")
        let (second, statuses, _) = try job.run()
        #expect(second.status == 0 && second.stderr.isEmpty && statuses["blur/kite.jpg"] == "failedEarlier", "\(second.stderr)")
        // Another pixel limit decides afresh.
        try job.configure(pixelLimit: nil)
        let (third, thirdStatuses, _) = try job.run()
        #expect(third.status == 0 && thirdStatuses["blur/kite.jpg"] == "written", "\(third.stderr)")
    }

    @Test func aFailureThatIsNotTheInputsFaultIsNotRemembered() throws {
        let job = try JobFolder.make(["kite.webp": "special/kite.webp"])
        defer { try? FileManager.default.removeItem(at: job.root) }
        // The output folder cannot be made (a file is in its place): not the input's fault.
        try FileManager.default.createDirectory(atPath: job.path("out"), withIntermediateDirectories: true)
        try Data().write(to: URL(fileURLWithPath: job.path("out/blur")))
        let (first, _, _) = try job.run()
        #expect(first.status == 1, "\(first.stderr)")
        let (second, statuses, _) = try job.run()
        #expect(second.status == 1 && statuses["blur/kite.jpg"] == "failed", "\(second.stderr)")
    }

    @Test func checkStatusSaysWhatARunWouldDoAndWritesNothing() throws {
        let job = try JobFolder.make([
            "a.jpg": "special/grayscale.jpg", "b.jpg": "special/grayscale.jpg", "c.jpg": "special/grayscale.jpg",
            "d.jpg": "special/grayscale.jpg", "gone.jpg": "special/grayscale.jpg", "bad.jpg": "special/truncated.jpg",
        ])
        defer { try? FileManager.default.removeItem(at: job.root) }
        _ = try job.run()
        // Before anything changes: the same decision as the run's. The records are read with
        // no run beside: nothing is left in the state folder (read-only, SQLite left the WAL's
        // two files beside them).
        let stateBefore = try job.snapshot("state")
        let (_, fresh, _) = try job.status()
        #expect(try job.snapshot("state") == stateBefore, "check --status changed the state folder")
        #expect(!stateBefore.isEmpty)
        #expect(fresh["blur/a.jpg"] == "upToDate" && fresh["thumb/bad.jpg"] == "failedEarlier", "\(fresh)")

        try job.writeManifest(thumbWidth: 50)  // every thumb's recipe
        try Data(contentsOf: URL(fileURLWithPath: Fixtures.corpus("special/kite.webp")))
            .write(to: URL(fileURLWithPath: job.path("in/a.jpg")))  // a's bytes
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: job.path("out/blur/b.jpg")))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data([0]))  // b's blur, changed
        try handle.close()
        try FileManager.default.removeItem(atPath: job.path("out/blur/c.jpg"))  // c's blur, gone
        try FileManager.default.removeItem(atPath: job.path("in/gone.jpg"))  // gone's outputs: pruned
        try FileManager.default.copyItem(atPath: Fixtures.corpus("special/grayscale.jpg"), toPath: job.path("in/e.jpg"))
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: job.path("out/blur/e.jpg")))  // not blurfarm's

        let before = try job.snapshot(".")
        let (status, states, counts) = try job.status()
        #expect(status.status == 0, "\(status.stderr)")
        #expect(try job.snapshot(".") == before, "check --status changed a file")
        let expected = [
            "thumb/a.jpg": "recipeChanged", "blur/a.jpg": "inputChanged",
            "thumb/b.jpg": "recipeChanged", "blur/b.jpg": "outputChanged",
            "thumb/c.jpg": "recipeChanged", "blur/c.jpg": "missing",
            "thumb/d.jpg": "recipeChanged", "blur/d.jpg": "upToDate",
            "thumb/e.jpg": "missing", "blur/e.jpg": "notRecorded",
            "thumb/bad.jpg": "failedEarlier", "blur/bad.jpg": "failedEarlier",
            "thumb/gone.jpg": "wouldBePruned", "blur/gone.jpg": "wouldBePruned",
        ]
        #expect(states == expected)
        #expect(counts["recipeChanged"] == 4 && counts["wouldBePruned"] == 2 && counts["failedEarlier"] == 2)
        #expect(try job.statusesLookedUpAndWhole() == 14)

        // The text says the same, one line an output, those up to date counted alone.
        let text = try job.blurfarm(["check", "--status"])
        #expect(text.status == 0 && text.stdout.split(separator: "\n").count == 14, "\(text.stdout)")
        #expect(text.stdout.contains("job 'remember': 12 outputs: 1 up to date, "), "\(text.stdout)")
        #expect(!text.stdout.contains("out/blur/d.jpg"), "\(text.stdout)")
        for (state, output) in [
            // Every path as the working folder sees it: the job's folder is outside it, so absolute.
            ("stale (input changed)", "out/blur/a.jpg (blur of \(job.path("in/a.jpg")))"), ("stale (output changed)", "out/blur/b.jpg"),
            ("missing", "out/blur/c.jpg"), ("stale (not recorded)", "out/blur/e.jpg"),
            ("stale (recipe changed)", "out/thumb/d.jpg"), ("would be pruned", job.path("out/thumb/gone.jpg")),
            ("failed earlier", "out/blur/bad.jpg (blur of \(job.path("in/bad.jpg"))): "),
        ] {
            #expect(text.stdout.split(separator: "\n").contains { $0.hasPrefix("  \(state) ") && $0.contains(output) },
                "\(state) \(output): \(text.stdout)")
        }

        // The run decides the same for every planned output (one up to date is counted, not listed).
        let (ran, ranStatuses, ranCounts) = try job.run(["--prune", "--force-prune"])
        #expect(ran.status == 0, "\(ran.stderr)")
        #expect(ranCounts["skipped"] == expected.values.count { $0 == "upToDate" } && ranCounts["skipped"] ?? 0 > 0, "\(ranCounts)")
        for (output, state) in expected where state != "wouldBePruned" {
            let wanted: String? = state == "upToDate" ? nil : state == "failedEarlier" ? "failedEarlier" : "written"
            #expect(ranStatuses[output] == wanted, "\(output): \(state), run: \(ranStatuses[output] ?? "none")")
        }
        #expect(!FileManager.default.fileExists(atPath: job.path("out/blur/gone.jpg")))
    }

    @Test func theReadCommandsPrintJSON() throws {
        let job = try JobFolder.make(["kite.webp": "special/kite.webp"])
        defer { try? FileManager.default.removeItem(at: job.root) }
        let check = try job.blurfarm(["check", "--json"])
        #expect(check.status == 0, "\(check.stderr)")
        let plans = try JSONSerialization.jsonObject(with: Data(check.stdout.utf8)) as? [[String: Any]]
        let input = try #require((plans?.first?["inputs"] as? [[String: Any]])?.first)
        #expect(input["input"] as? String == "in/kite.webp" && input["width"] as? Int == 1024 && input["height"] as? Int == 640)
        let outputs = input["outputs"] as? [[String: Any]] ?? []
        #expect(outputs.map { $0["variant"] as? String } == ["thumb", "blur"])
        #expect(outputs.first?["width"] as? Int == 60 && (outputs.last?["filters"] as? [String]) == ["gaussian sigma=1"])

        let filters = try Blurfarm.run(["filters", "--json"])
        let list = try JSONSerialization.jsonObject(with: Data(filters.stdout.utf8)) as? [[String: Any]]
        let gaussian = try #require(list?.first { $0["name"] as? String == "gaussian" }, "\(filters.stdout)")
        #expect(gaussian["plugin"] as? Bool == false && (gaussian["parameters"] as? [[String: Any]])?.first?["name"] as? String == "sigma")
        let one = try Blurfarm.run(["filters", "motion", "--json"])
        let motion = try JSONSerialization.jsonObject(with: Data(one.stdout.utf8)) as? [String: Any]
        #expect(motion?["name"] as? String == "motion" && motion?["origin"] as? String == "built-in", "\(one.stdout)")
    }

    /// An output recorded for another input (its input renamed, the same stem) has no record
    /// for this one: `check --status` says so, as the run decides (it writes the output), from
    /// the index and from the records read whole alike.
    @Test func anOutputRecordedForAnotherInputIsNotRecordedForTheInputNow() throws {
        let job = try JobFolder.make(["x.jpg": "special/grayscale.jpg"])
        defer { try? FileManager.default.removeItem(at: job.root) }
        #expect(try job.run().0.status == 0)
        try FileManager.default.moveItem(atPath: job.path("in/x.jpg"), toPath: job.path("in/x.png"))
        let (status, states, _) = try job.status()
        #expect(status.status == 0, "\(status.stderr)")
        #expect(states == ["thumb/x.jpg": "notRecorded", "blur/x.jpg": "notRecorded"])
        #expect(try job.statusesLookedUpAndWhole() == 2)
        let (ran, ranStatuses, _) = try job.run()
        #expect(ran.status == 0, "\(ran.stderr)")
        #expect(ranStatuses == ["thumb/x.jpg": "written", "blur/x.jpg": "written"])
    }

}
