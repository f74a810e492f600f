import BlurfarmTestSupport
import Foundation
import Synchronization
import Testing

/// A job folder for the shard tests: `in/` with small generated PPM images of varied sizes, a
/// configuration whose state folder is inside it, and a manifest blurring each to `out/{stem}.png`.
struct ShardJob {
    let root: URL
    var manifest: String { path("job.job") }
    var config: String { path("farm.conf") }
    func path(_ relative: String) -> String { root.appendingPathComponent(relative).path }

    /// `images` inputs `in/gNN.ppm`; `filters` replaces the manifest's filter list (YAML lines
    /// under `filters:`); `configuration` adds lines to the configuration.
    static func make(images: Int, filters: String? = nil, configuration: String = "") throws -> ShardJob {
        let job = ShardJob(root: try Fixtures.temporaryFolder())
        try FileManager.default.createDirectory(atPath: job.path("in"), withIntermediateDirectories: true)
        var random = SplitMix(seed: 14)
        for i in 0..<images {
            try IncrementalRunTests.ppm(width: 24 + 13 * (i % 7), height: 16 + 9 * (i % 5), using: &random)
                .write(to: URL(fileURLWithPath: job.path(String(format: "in/g%02d.ppm", i))))
        }
        try ("state: state\n" + configuration).write(toFile: job.config, atomically: true, encoding: .utf8)
        try """
            job: shards
            inputs: [in/*.ppm]
            outputs:
              - name: blur
                path: out/{stem}.png
                filters:
            \(filters ?? "      - gaussian:\n          sigma: 1.5")

            """.write(toFile: job.manifest, atomically: true, encoding: .utf8)
        return job
    }

    /// A copy of this job's manifest, configuration and inputs in a new folder (nothing else).
    func copy() throws -> ShardJob {
        let other = ShardJob(root: try Fixtures.temporaryFolder())
        for item in ["in", "job.job", "farm.conf"] {
            try FileManager.default.copyItem(atPath: path(item), toPath: other.path(item))
        }
        return other
    }

    /// Every file under `out/` (hidden ones too), by path relative to it, with its bytes.
    func outputs() throws -> [String: Data] {
        var files: [String: Data] = [:]
        let out = path("out")
        guard let walker = FileManager.default.enumerator(atPath: out) else { return [:] }
        for case let name as String in walker {
            var isFolder: ObjCBool = false
            let full = out + "/" + name
            if FileManager.default.fileExists(atPath: full, isDirectory: &isFolder), !isFolder.boolValue {
                files[name] = FileManager.default.contents(atPath: full)
            }
        }
        return files
    }

    /// `blurfarm run` of the job with `arguments` added and its JSON report; the result and the
    /// report's counts.
    func run(_ arguments: [String] = [], environment: [String: String] = [:]) throws -> (CommandResult, [String: Int]) {
        let report = path("report-\(UUID().uuidString).json")
        let result = try Blurfarm.run(
            ["run", manifest, "--config", config, "--report", report] + arguments, in: root, environment: environment)
        return (result, try Self.counts(report))
    }

    /// The counts of the first report in the JSON report file at `path` (a list of reports).
    static func counts(_ path: String) throws -> [String: Int] {
        guard let data = FileManager.default.contents(atPath: path),
            let list = try JSONSerialization.jsonObject(with: data) as? [[String: Any]],
            let counts = list.first?["counts"] as? [String: Int]
        else { return [:] }
        return counts
    }

    /// The outputs of the report file at `path` (its first report).
    static func reportedOutputs(_ path: String) throws -> [[String: Any]] {
        guard let data = FileManager.default.contents(atPath: path),
            let list = try JSONSerialization.jsonObject(with: data) as? [[String: Any]],
            let outputs = list.first?["outputs"] as? [[String: Any]]
        else { return [] }
        return outputs
    }
}

/// `run --shard I/N` on one host: the shards together write what one run writes, at the same
/// time, each under its own lock; a plain run afterwards finds everything up to date.
@Suite struct ShardTests {
    @Test func threeShardsAtOnceWriteTheSameBytesAsOneRunAndThenNothingIsToDo() throws {
        let job = try ShardJob.make(images: 12)
        let local = try job.copy()
        defer {
            try? FileManager.default.removeItem(at: job.root)
            try? FileManager.default.removeItem(at: local.root)
        }
        // The three at once: with the job's lock, two of them would exit with status 3.
        let results = Mutex<[Int: (CommandResult, [String: Int])]>([:])
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 3) { index in
            do {
                let result = try job.run(["--shard", "\(index)/3", "--workers", "1"])
                results.withLock { $0[index] = result }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)
        let all = results.withLock { $0 }
        for index in 0..<3 {
            #expect(all[index]?.0.status == 0, "shard \(index): \(all[index]?.0.stderr ?? "")")
        }
        // Each wrote its part, none twice, whole inputs split by pixels.
        #expect(all.values.map { $0.1["written"] ?? 0 }.reduce(0, +) == 12)
        #expect(all.values.allSatisfy { ($0.1["written"] ?? 0) > 0 })
        // A dry run counts the shards' outputs before any merge.
        let status = try Blurfarm.run(["check", "--status", job.manifest, "--config", job.config], in: job.root)
        #expect(status.stdout.contains("12 outputs: 12 up to date"), "\(status.stdout)\(status.stderr)")
        let (whole, counts) = try local.run()
        #expect(whole.status == 0 && counts["written"] == 12, "\(whole.stderr)")
        let sharded = try job.outputs()
        #expect(sharded.count == 12)
        #expect(sharded == (try local.outputs()))
        // A plain run merges the shards' records: nothing to do.
        let (again, againCounts) = try job.run(["--verbose"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(againCounts["written"] == 0 && againCounts["skipped"] == 12 && againCounts["decoded"] == 0, "\(againCounts)")
        // And a shard run afterwards starts from the job's records: nothing to do either.
        let (shard, shardCounts) = try job.run(["--shard", "1/3"])
        #expect(shard.status == 0 && shardCounts["written"] == 0 && (shardCounts["skipped"] ?? 0) > 0, "\(shardCounts)")
    }

    @Test func theShardComesFromSlurmOrKubernetesVariablesWhenAskedTo() throws {
        let job = try ShardJob.make(images: 6)
        defer { try? FileManager.default.removeItem(at: job.root) }
        var written = 0
        for index in 0..<2 {
            let slurm = [
                "SLURM_ARRAY_TASK_ID": "\(index)", "SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MIN": "0",
                "SLURM_ARRAY_TASK_MAX": "2",
            ]
            let (result, counts) = try job.run(["--shard", "env"], environment: slurm)
            #expect(result.status == 0, "\(result.stderr)")
            written += counts["written"] ?? 0
        }
        let (last, counts) = try job.run(["--shard", "env/3"], environment: ["JOB_COMPLETION_INDEX": "2"])
        #expect(last.status == 0, "\(last.stderr)")
        written += counts["written"] ?? 0
        #expect(written == 6)
        #expect(try job.outputs().count == 6)
    }

    @Test func aShardThatCannotBeKnownIsRefusedAndNothingRuns() throws {
        let job = try ShardJob.make(images: 2)
        defer { try? FileManager.default.removeItem(at: job.root) }
        let cases: [([String], [String: String], String)] = [
            (["--shard", "env"], [:], "neither SLURM_ARRAY_TASK_ID nor JOB_COMPLETION_INDEX is set"),
            (["--shard", "env"], ["JOB_COMPLETION_INDEX": "1"], "give the number of shards, --shard env/N"),
            // A resubmitted part of an array: its count is not the number of shards.
            (["--shard", "env"], ["SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "1", "SLURM_ARRAY_TASK_MIN": "2",
                "SLURM_ARRAY_TASK_MAX": "2"], "the array's tasks are not 0 to SLURM_ARRAY_TASK_COUNT-1"),
            (["--shard", "env/2"], ["JOB_COMPLETION_INDEX": "2"], "shard 2 of 2 does not exist"),
        ]
        for (arguments, environment, message) in cases {
            let (result, _) = try job.run(arguments, environment: environment)
            #expect(result.status == 2, "\(arguments) \(environment): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(result.stderr)")
        }
        for bad in ["3/3", "1", "a/b", "-1/2", "env/0"] {
            let (result, _) = try job.run(["--shard", bad])
            #expect(result.status != 0 && result.stderr.contains("--shard"), "\(bad): \(result.stderr)")
        }
        let (watch, _) = try job.run(["--shard", "0/2", "--prune"])
        #expect(watch.status != 0 && watch.stderr.contains("--watch and --prune are for whole jobs"))
        #expect(try job.outputs().isEmpty)
    }
}
