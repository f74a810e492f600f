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

    /// `blurfarm run` of the job with `arguments` added and its JSON report (through `launcher`,
    /// as ``Blurfarm/run(_:in:environment:limits:launcher:shell:)`` takes it); the result and
    /// the report's counts.
    func run(
        _ arguments: [String] = [], environment: [String: String] = [:], launcher: String? = nil
    ) throws -> (CommandResult, [String: Int]) {
        let report = path("report-\(UUID().uuidString).json")
        let result = try Blurfarm.run(
            ["run", manifest, "--config", config, "--report", report] + arguments, in: root, environment: environment,
            launcher: launcher)
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
@Suite(.tags(.process), .blocking) struct ShardTests {
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

    /// A shard that cannot be known (variables missing or inconsistent, I not below N, N of 0,
    /// a number beyond the largest count), from the option as from the environment, is refused
    /// with status 2 and one line saying why, before anything runs (docs/commands.md); a value
    /// not of the form I/N, env or env/N is a usage error (64).
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
            (["--shard", "5/3"], [:], "--shard: shard 5 of 3 does not exist (0 to N-1)"),
            (["--shard", "0/0"], [:], "--shard: the number of shards is 0: it must be at least 1"),
            (["--shard", "0/9223372036854775808"], [:], "--shard: the number of shards 9223372036854775808 is too large (at most 9223372036854775807)"),
            (["--shard", "99999999999999999999/3"], [:], "--shard: the shard 99999999999999999999 is too large"),
            (["--shard", "env"], ["SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "9223372036854775808"],
                "--shard: SLURM_ARRAY_TASK_COUNT=9223372036854775808 is not a number from 0 to 9223372036854775807"),
            (["--shard", "env"], ["SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "0"], "the number of shards is 0"),
        ]
        for (arguments, environment, message) in cases {
            let (result, _) = try job.run(arguments, environment: environment)
            #expect(result.status == 2, "\(arguments) \(environment): \(result.stderr)")
            #expect(result.stderr.contains(message) && !result.stderr.contains("Usage:"), "\(result.stderr)")
        }
        for bad in ["1", "a/b", "-1/2", "1/2/3", "+1/2", "1/"] {
            let (result, _) = try job.run(["--shard", bad])
            #expect(result.status == 64 && result.stderr.contains("--shard"), "\(bad): \(result.status) \(result.stderr)")
        }
        let (watch, _) = try job.run(["--shard", "0/2", "--prune"])
        #expect(watch.status != 0 && watch.stderr.contains("--watch and --prune are for whole jobs"))
        #expect(try job.outputs().isEmpty)
    }

    /// Runs blurfarm through a Python launcher that reports the peak resident memory of the
    /// processes it waited for (`getrusage(RUSAGE_CHILDREN)`): blurfarm and its workers.
    static let peakMemoryLauncher = """
        import resource, subprocess, sys
        status = subprocess.call(sys.argv[1:])
        sys.stderr.write("peak-rss-kib=%d\\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
        sys.exit(status if status >= 0 else 128 - status)
        """

    /// `blurfarm run` of `job` with `arguments` through ``peakMemoryLauncher``: the result, the
    /// report's counts and the peak resident memory in MiB.
    static func runMeasured(
        _ job: ShardJob, _ arguments: [String], environment: [String: String] = [:]
    ) throws -> (CommandResult, [String: Int], Int) {
        let (result, counts) = try job.run(["--workers", "1"] + arguments, environment: environment, launcher: peakMemoryLauncher)
        let peak = result.stderr.split(separator: "\n").last { $0.hasPrefix("peak-rss-kib=") }.flatMap { Int($0.dropFirst(13)) }
        return (result, counts, (peak ?? .max) / 1024)
    }

    /// The memory a shard takes does not depend on N: one of ten million, of 2^32, of the
    /// largest count (from the option or from Slurm's variables) takes no more than the same
    /// run of 1/2 (some tens of MiB); shards beyond the inputs are empty. (A load and a plan
    /// per shard made 0/10000000 take 1.6 GiB, 0/4294967296 abort allocating, and the largest
    /// count crash.)
    @Test func aShardOfAHugeCountTakesTheMemoryOfASmallOneAndShardsBeyondTheInputsAreEmpty() throws {
        let job = try ShardJob.make(images: 3)
        defer { try? FileManager.default.removeItem(at: job.root) }
        let (small, smallCounts, smallPeak) = try Self.runMeasured(job, ["--shard", "1/2"])
        #expect(small.status == 0 && smallCounts["written"] ?? 0 > 0, "\(small.stderr)")
        let largest = "9223372036854775807"
        let cases: [([String], [String: String], Int)] = [
            (["--shard", "0/10000000"], [:], 1),
            (["--shard", "0/4294967296"], [:], 1),
            (["--shard", "0/\(largest)"], [:], 1),
            (["--shard", "9223372036854775806/\(largest)"], [:], 0),
            (["--shard", "3/10"], [:], 0),
            (["--shard", "env"], ["SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": largest], 1),
        ]
        for (arguments, environment, written) in cases {
            let (result, counts, peak) = try Self.runMeasured(job, arguments, environment: environment)
            #expect(result.status == 0, "\(arguments) \(environment): \(result.stderr)")
            #expect(counts["written"] == written && counts["failed"] == 0, "\(arguments): \(counts)")
            // The same memory as the small run, give or take what the allocator keeps.
            #expect(peak <= smallPeak + 32, "\(arguments) \(environment): \(peak) MiB, 1/2 took \(smallPeak) MiB")
        }
        #expect(try job.outputs().count == 3)
    }
}
