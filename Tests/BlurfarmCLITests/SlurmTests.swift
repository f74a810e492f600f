import BlurfarmImageIO
import BlurfarmTestSupport
import Foundation
import Testing

/// A real one-node Slurm (scripts/slurm-local.sh) for one test, in a folder of its own with
/// ports of its own, so that tests and other processes never share a cluster.
struct LocalSlurm {
    let folder: String

    /// Why the cluster could not start: the test fails with it (it never passes without Slurm).
    struct Unavailable: Error, CustomStringConvertible {
        let description: String
    }

    /// The environment of commands that use the cluster.
    var environment: [String: String] { ["SLURM_CONF": folder + "/slurm.conf"] }

    /// Starts a cluster (scripts/setup.sh installs Slurm; the tests run as root, as CI does).
    static func up() throws -> LocalSlurm {
        let slurm = LocalSlurm(folder: FileManager.default.temporaryDirectory.appendingPathComponent("blurfarm-slurm-\(UUID().uuidString)").path)
        let result = try slurm.script("up")
        guard result.status == 0 else {
            // The script stopped what it started and printed the daemons' logs: its folder goes too.
            try? FileManager.default.removeItem(atPath: slurm.folder)
            throw Unavailable(description: "Slurm cannot start here (scripts/slurm-local.sh up, status \(result.status)): \(result.stderr)")
        }
        return slurm
    }

    /// Stops the cluster and removes its folder.
    func down() {
        let result = try? script("down")
        if result?.status != 0 { Issue.record("scripts/slurm-local.sh down failed: \(result?.stderr ?? "")") }
    }

    /// Runs scripts/slurm-local.sh ACTION FOLDER, its standard output and error in a file. Not
    /// through Foundation's Process: the script starts daemons, and Process then missed the
    /// script's exit (its waitUntilExit never returned, the script a zombie); waitpid does not.
    func script(_ action: String) throws -> CommandResult {
        let script = Fixtures.repository.appendingPathComponent("scripts/slurm-local.sh").path
        let log = folder + ".log"
        defer { unlink(log) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let arguments = ["bash", script, action, folder]
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, "bash", &actions, nil, argv, environ)
        guard spawned == 0 else { throw Unavailable(description: "cannot run bash: \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let said = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        let exited = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return CommandResult(status: exited, stdout: said, stderr: said)
    }

    /// Runs a Slurm client (`scancel`, `scontrol`) against the cluster.
    func client(_ arguments: [String]) throws -> CommandResult {
        try Blurfarm.run(["-c", "exec \"$@\"", "sh"] + arguments, environment: environment, shell: true)
    }
}

/// scripts/slurm-local.sh runs as root and writes and removes its folder: a folder someone else
/// could have planted there (a link, one writable by others) is refused by `up` and `down`,
/// nothing written or removed through it.
@Suite(.tags(.process, .slurm), .blocking) struct LocalSlurmFolderTests {
    @Test func aPlantedFolderIsRefused() throws {
        let target = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: target) }
        let link = target.path + "-link"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target.path)
        defer { unlink(link) }
        for action in ["up", "down"] {
            let result = try LocalSlurm(folder: link).script(action)
            #expect(result.status == 1 && result.stderr.contains("is a symbolic link: refusing to use it"), "\(action): \(result.stderr)")
        }
        chmod(target.path, 0o777)
        let open = try LocalSlurm(folder: target.path).script("up")
        #expect(open.status == 1 && open.stderr.contains("is writable by others: refusing to use it"), "\(open.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: target.path).isEmpty)
    }
}

/// `blurfarm slurm` on a real cluster: a job's shards as an array, the finisher, status,
/// resume after a failure and after a task cancelled mid-render (docs/cluster.md).
@Suite(.serialized, .tags(.process, .slurm), .blocking) struct SlurmTests {
    /// `blurfarm slurm ARGUMENTS` against `slurm`, from the job's folder.
    static func slurm(
        _ arguments: [String], _ job: ShardJob, _ slurm: LocalSlurm, environment: [String: String] = [:]
    ) throws -> CommandResult {
        try Blurfarm.run(["slurm"] + arguments, in: job.root, environment: slurm.environment.merging(environment) { $1 })
    }

    /// Submits `job` in `shards` shards; the run folder.
    static func submit(_ job: ShardJob, shards: Int, on cluster: LocalSlurm, environment: [String: String] = [:]) throws -> String {
        let submit = try slurm(
            ["submit", job.manifest, "--config", job.config, "--shards", "\(shards)"], job, cluster, environment: environment)
        #expect(submit.status == 0, "\(submit.stderr)")
        #expect(submit.stdout.contains("array job "), "\(submit.stdout)")
        let line = try #require(submit.stdout.split(separator: "\n").first { $0.hasPrefix("run folder: ") }, "\(submit.stdout)")
        return String(line.dropFirst("run folder: ".count))
    }

    /// Each shard's line of `status`, by shard.
    static func shardLines(_ status: String) -> [Int: String] {
        var lines: [Int: String] = [:]
        for line in status.split(separator: "\n") {
            if let match = line.wholeMatch(of: /shard ([0-9]+): (.*)/), let index = Int(match.1) { lines[index] = String(match.2) }
        }
        return lines
    }

    /// The shards of the run's latest submission (run.json).
    static func lastSubmittedShards(_ runFolder: String) throws -> [Int] {
        let data = try #require(FileManager.default.contents(atPath: runFolder + "/run.json"))
        let run = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let submissions = try #require(run["submissions"] as? [[String: Any]])
        return try #require(submissions.last?["shards"] as? [Int])
    }

    /// More shards than inputs, up to the largest number: one shard per input is submitted,
    /// said once, and the job completes.
    @Test func moreShardsThanInputsSubmitsOneShardPerInput() throws {
        let cluster = try LocalSlurm.up()
        defer { cluster.down() }
        let job = try ShardJob.make(images: 3)
        defer { try? FileManager.default.removeItem(at: job.root) }
        let submit = try Self.slurm(
            ["submit", job.manifest, "--config", job.config, "--shards", "\(Int.max)"], job, cluster)
        #expect(submit.status == 0, "\(submit.stderr)")
        #expect(submit.stderr.contains("--shards \(Int.max): the job has 3 inputs; submitting 3 shards"), "\(submit.stderr)")
        let line = try #require(submit.stdout.split(separator: "\n").first { $0.hasPrefix("run folder: ") }, "\(submit.stdout)")
        let runFolder = String(line.dropFirst("run folder: ".count))
        #expect(try Self.lastSubmittedShards(runFolder) == [0, 1, 2])
        let status = try Self.slurm(["status", runFolder, "--wait"], job, cluster)
        #expect(status.status == 0, "\(status.stdout)\(status.stderr)")
        #expect(status.stdout.contains("3/3 outputs done"), "\(status.stdout)")
    }

    @Test func twentyFourImagesInFourShardsAreTheBytesOfALocalRunAndThenUpToDate() throws {
        let cluster = try LocalSlurm.up()
        defer { cluster.down() }
        let job = try ShardJob.make(images: 24)
        let local = try job.copy()
        defer {
            try? FileManager.default.removeItem(at: job.root)
            try? FileManager.default.removeItem(at: local.root)
        }
        let runFolder = try Self.submit(job, shards: 4, on: cluster)
        let status = try Self.slurm(["status", runFolder, "--wait"], job, cluster)
        #expect(status.status == 0, "\(status.stdout)\(status.stderr)")
        #expect(status.stdout.contains("24/24 outputs done"), "\(status.stdout)")
        let lines = Self.shardLines(status.stdout)
        #expect(lines.keys.sorted() == [0, 1, 2, 3] && lines.values.allSatisfy { $0.hasPrefix("COMPLETED") }, "\(lines)")
        #expect(status.stdout.split(separator: "\n").last?.hasSuffix("): COMPLETED") == true, "\(status.stdout)")
        // The finisher's report: every output, with its checksum.
        let reported = try ShardJob.reportedOutputs(runFolder + "/report.json")
        #expect(reported.count == 24)
        #expect(reported.allSatisfy { $0["status"] as? String == "written" })
        #expect(reported.allSatisfy { ($0["checksum"] as? String)?.count == 16 }, "\(reported)")
        #expect(Set(reported.compactMap { ($0["output"] as? String).map { ($0 as NSString).lastPathComponent } })
            == Set((0..<24).map { String(format: "g%02d.png", $0) }))
        #expect(try ShardJob.counts(runFolder + "/report.json")["written"] == 24)
        // Laid out as a report's writer lays it out, each output's members eight spaces in:
        // the shards' texts of their outputs, put in as they are, lost their files' indentation.
        let members = try String(contentsOfFile: runFolder + "/report.json", encoding: .utf8)
            .split(separator: "\n").filter { $0.contains("\"checksum\" : ") }
        #expect(members.count == 24 && members.allSatisfy { $0.prefix { $0 == " " }.count == 8 }, "\(members)")
        // The same bytes as one local run.
        let (whole, counts) = try local.run()
        #expect(whole.status == 0 && counts["written"] == 24, "\(whole.stderr)")
        #expect(try job.outputs() == (try local.outputs()))
        #expect(try job.outputs().count == 24)
        // A cron run afterwards: nothing to do.
        let (again, againCounts) = try job.run()
        #expect(again.status == 0 && again.stdout.isEmpty, "\(again.stdout)\(again.stderr)")
        #expect(againCounts["written"] == 0 && againCounts["skipped"] == 24 && againCounts["decoded"] == 0, "\(againCounts)")
    }

    @Test func aFailedShardIsNamedWithItsInputAndResumedAloneOnceTheInputIsFixed() throws {
        let cluster = try LocalSlurm.up()
        defer { cluster.down() }
        let job = try ShardJob.make(images: 12)
        defer { try? FileManager.default.removeItem(at: job.root) }
        let badInput = job.path("in/g05.ppm")
        let good = try #require(FileManager.default.contents(atPath: badInput))
        try Data("not an image at all\n".utf8).write(to: URL(fileURLWithPath: badInput))

        let runFolder = try Self.submit(job, shards: 4, on: cluster)
        let status = try Self.slurm(["status", runFolder, "--wait"], job, cluster)
        #expect(status.status == 1, "\(status.stdout)\(status.stderr)")
        #expect(status.stdout.contains("11/12 outputs done"), "\(status.stdout)")
        // Status names the shard and the input.
        let lines = Self.shardLines(status.stdout)
        let failed = lines.filter { !$0.value.hasPrefix("COMPLETED") }
        #expect(failed.count == 1 && failed.first?.value.hasPrefix("FAILED (exit 1)") == true, "\(status.stdout)")
        let shard = try #require(failed.first?.key)
        let statusLines = status.stdout.split(separator: "\n").map(String.init)
        let shardLine = try #require(statusLines.firstIndex { $0.hasPrefix("shard \(shard): ") })
        #expect(statusLines[shardLine + 1].hasPrefix("  failed: in/g05.ppm -> "), "\(status.stdout)")
        #expect(statusLines.last?.wholeMatch(of: /finisher \(job [0-9]+\): FAILED \(exit 1\)/) != nil, "\(status.stdout)")
        // The other shards' outputs are written; the finisher reports exactly the failed output.
        #expect(try job.outputs().keys.sorted() == (0..<12).filter { $0 != 5 }.map { String(format: "g%02d.png", $0) })
        let reported = try ShardJob.reportedOutputs(runFolder + "/report.json")
        let notWritten = reported.filter { $0["status"] as? String != "written" }
        #expect(notWritten.count == 1 && (notWritten.first?["output"] as? String)?.hasSuffix("/out/g05.png") == true)
        #expect(notWritten.first?["status"] as? String == "failed")
        let error = notWritten.first?["error"] as? [String: Any]
        #expect(error?["kind"] as? String == "decode" && (error?["message"] as? String)?.contains("g05.ppm") == true, "\(notWritten)")
        let log = try FileManager.default.contentsOfDirectory(atPath: runFolder + "/logs").filter { $0.hasPrefix("finish-") }
        #expect(log.count == 1)

        // Fixed, resumed: only that shard runs, the others' outputs are not touched.
        try good.write(to: URL(fileURLWithPath: badInput))
        let before = try job.outputs().keys.map { name in
            (name, try FileManager.default.attributesOfItem(atPath: job.path("out/" + name))[.modificationDate] as? Date)
        }
        let resume = try Self.slurm(["resume", runFolder], job, cluster)
        #expect(resume.status == 0, "\(resume.stderr)")
        #expect(resume.stdout.hasPrefix("resubmitted shard \(shard) of 4: array job "), "\(resume.stdout)")
        #expect(try Self.lastSubmittedShards(runFolder) == [shard])
        let done = try Self.slurm(["status", runFolder, "--wait"], job, cluster)
        #expect(done.status == 0, "\(done.stdout)\(done.stderr)")
        #expect(done.stdout.contains("12/12 outputs done"), "\(done.stdout)")
        #expect(try ShardJob.counts(runFolder + "/report.json")["failed"] == 0)
        #expect(try job.outputs().count == 12)
        for (name, date) in before {
            #expect(try FileManager.default.attributesOfItem(atPath: job.path("out/" + name))[.modificationDate] as? Date == date, "\(name)")
        }
        // Nothing left to resume, nothing left to run.
        let again = try Self.slurm(["resume", runFolder], job, cluster)
        #expect(again.status == 0 && again.stdout.hasPrefix("nothing to resume"), "\(again.stdout)\(again.stderr)")
        let (run, counts) = try job.run()
        #expect(run.status == 0 && counts["written"] == 0 && counts["skipped"] == 12, "\(counts) \(run.stderr)")
    }

    @Test func aTaskCancelledMidRenderLeavesNoPartialOutputAndResumeCompletesTheJob() throws {
        let cluster = try LocalSlurm.up()
        defer { cluster.down() }
        // The first tile to hold pixel (0, 0) stalls in its worker until killed (every later
        // attempt copies); neither the task timeout nor, on a loaded machine whose heartbeats
        // come late, the heartbeat timeout ends it first. The shards load the `fault` plugin
        // from the job's configuration, as their workers do.
        let fault = try FaultPlugin()
        defer { fault.remove() }
        let marker = fault.marker.path
        let job = try ShardJob.make(
            images: 8, filters: "      - fault:\n          x: 0\n          y: 0\n          stall: true",
            configuration: "task-timeout: 3600\nheartbeat-timeout: 3600\n" + fault.configuration)
        defer { try? FileManager.default.removeItem(at: job.root) }
        let runFolder = try Self.submit(job, shards: 4, on: cluster)

        // The stalled worker's task: its Slurm job is cancelled mid-render.
        var pid: Int32?
        try eventually("a stalled worker", timeout: .seconds(300), interval: .milliseconds(100)) {
            pid = (try? String(contentsOfFile: marker, encoding: .utf8)).flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            return pid != nil
        }
        let worker = try #require(pid)
        let environment = try #require(FileManager.default.contents(atPath: "/proc/\(worker)/environ"))
        var variables: [String: String] = [:]
        for entry in environment.split(separator: 0) {
            let text = String(decoding: entry, as: UTF8.self)
            if let equals = text.firstIndex(of: "=") { variables[String(text[..<equals])] = String(text[text.index(after: equals)...]) }
        }
        let array = try #require(variables["SLURM_ARRAY_JOB_ID"])
        let shard = try #require(variables["SLURM_ARRAY_TASK_ID"].flatMap(Int.init))
        let cancel = try cluster.client(["scancel", "\(array)_\(shard)"])
        #expect(cancel.status == 0, "\(cancel.stderr)")

        let status = try Self.slurm(["status", runFolder, "--wait"], job, cluster)
        #expect(Self.shardLines(status.stdout)[shard]?.hasPrefix("CANCELLED") == true, "\(status.stdout)")
        // Only whole outputs: no temporary file, no partial image. scancel sends SIGTERM to the
        // shard's coordinator and to its workers, the stalled one too; SIGTERM lets an output
        // in flight finish, so the stalled image is missing when the shard ended before a
        // replacement worker could take its tile (most runs), and whole when one could (a run
        // on a loaded machine did). The status says which: 1 exactly when outputs are missing.
        let outputs = try job.outputs()
        let missing = outputs.count < 8
        #expect(status.status == (missing ? 1 : 0), "\(status.stdout)\(status.stderr)")
        for (name, bytes) in outputs {
            #expect(name.wholeMatch(of: /g0[0-7]\.png/) != nil, "\(name) left in out/")
            #expect(bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]), "\(name)")
            #expect((try? ImageReader.header(ofFile: job.path("out/" + name))) != nil, "\(name) is not a whole image")
        }

        let resume = try Self.slurm(["resume", runFolder], job, cluster)
        #expect(resume.status == 0, "\(resume.stderr)")
        #expect(
            resume.stdout.hasPrefix(missing ? "resubmitted shard \(shard) of 4" : "nothing to resume"), "\(resume.stdout)")
        let done = try Self.slurm(["status", runFolder, "--wait"], job, cluster)
        #expect(done.status == 0, "\(done.stdout)\(done.stderr)")
        #expect(done.stdout.contains("8/8 outputs done"), "\(done.stdout)")
        #expect(try job.outputs().count == 8)
        let (run, counts) = try job.run()
        #expect(run.status == 0 && counts["written"] == 0 && counts["skipped"] == 8, "\(counts) \(run.stderr)")
    }
}
