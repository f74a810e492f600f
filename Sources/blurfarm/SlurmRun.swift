import ArgumentParser
import BlurfarmCoordinator
import BlurfarmCore
import BlurfarmKernels
import BlurfarmManifest
import Foundation

/// A run of one job on Slurm (`blurfarm slurm submit`): its folder in the job's state folder,
/// `<state>/jobs/<job>-<hash>/slurm/<UTC time>-<pid>/`, holding
///
/// - `run.json`: this description (the job, the shards, the submissions);
/// - `split.json`: each shard's outputs, fixed at submission (`run --split`): a shard run
///   again runs the same outputs, even when a corrupt input was fixed since (its pixels changed);
/// - `shard.sh`, `finish.sh`: the batch scripts of the array tasks and of the finisher;
/// - `reports/shard-<I>-<Slurm job id>.json`: each array task's `run --report`;
/// - `logs/`: Slurm's output of each task and finisher;
/// - `report.json`: the finisher's merged report (the schema of `run --report`).
struct SlurmRun: Codable {
    /// The job's name.
    var job: String
    /// The manifest, absolute.
    var manifest: String
    /// The working directory of the tasks (the submitter's): relative outputs are relative to it.
    var directory: String
    /// The blurfarm executable the tasks run.
    var executable: String
    /// The configuration, absolute, or nil for the built-in defaults.
    var config: String?
    /// Shards the job is split into.
    var shards: Int
    /// Array tasks allowed to run at once (`%K`), or nil for no limit.
    var maxRunning: Int?
    /// The options given to every `sbatch` (partition, time, `--sbatch-arg`).
    var sbatchArguments: [String]
    /// The submissions, first `submit`, then each `resume`.
    var submissions: [Submission] = []

    /// One `submit` or `resume`: an array of shards and the finisher after it.
    struct Submission: Codable {
        /// The array job's id.
        var array: String
        /// The finisher's job id.
        var finisher: String
        /// The shards the array runs.
        var shards: [Int]
        var submitted: Date
    }

    /// The name of the description in the run folder.
    static let fileName = "run.json"
    /// The name of the split in the run folder.
    static let splitName = "split.json"

    /// The run described in the folder `folder`.
    /// - Throws: ``CommandError`` when the folder holds no readable description.
    static func read(_ folder: String) throws(CommandError) -> SlurmRun {
        let path = (folder as NSString).appendingPathComponent(fileName)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CommandError(
                "\(folder): not the run folder of a 'blurfarm slurm submit' (no readable \(fileName))",
                exitCode: ExitStatus.invalid)
        }
        do {
            return try decoder.decode(SlurmRun.self, from: data)
        } catch {
            throw CommandError("\(path): cannot be read: \(error)", exitCode: ExitStatus.invalid)
        }
    }

    /// Writes this description in `folder`, atomically.
    func write(in folder: String) throws(CommandError) {
        let path = (folder as NSString).appendingPathComponent(Self.fileName)
        do {
            try RunReport.write(self, to: path)
        } catch {
            throw CommandError("\(path): cannot write: \(error.localizedDescription)")
        }
    }

    /// The options that load the job as the tasks do: the recorded configuration.
    var farm: FarmOptions {
        get throws { try FarmOptions.parse(config.map { ["--config", $0] } ?? []) }
    }

    /// The latest submission that ran `shard`, if any.
    func submission(of shard: Int) -> Submission? {
        submissions.last { $0.shards.contains(shard) }
    }

    /// `shards` as `sbatch --array` takes them, runs of consecutive ones as ranges: `0-3`, `1,4-5`.
    static func arrayRange(_ shards: [Int]) -> String {
        var parts: [String] = []
        var index = 0
        while index < shards.count {
            var end = index
            while end + 1 < shards.count, shards[end + 1] == shards[end] + 1 { end += 1 }
            parts.append(end == index ? "\(shards[index])" : "\(shards[index])-\(shards[end])")
            index = end + 1
        }
        return parts.joined(separator: ",")
    }

    /// Submits shards `shards` (an array job) and a finisher after them, from the scripts in
    /// `folder`; `extra` is appended to each task's `blurfarm run`. Records the submission.
    /// - Throws: ``CommandError`` when `sbatch` refuses either (the array stays submitted when
    ///   only the finisher is refused: the message says how to finish by hand).
    mutating func submit(_ shards: [Int], folder: String, extra: [String] = []) throws(CommandError) -> Submission {
        let list = Self.arrayRange(shards)
        let common = ["--chdir=\(directory)"] + sbatchArguments
        let array = try SlurmClient.submit(
            common + [
                "--job-name=blurfarm-\(job)", "--array=\(list)" + (maxRunning.map { "%\($0)" } ?? ""),
                "--output=\(folder)/logs/shard-%a-%A.log", "\(folder)/shard.sh",
            ] + extra)
        let finisher: String
        do {
            finisher = try SlurmClient.submit(
                common + [
                    "--job-name=blurfarm-\(job)-finish", "--dependency=afterany:\(array)",
                    "--output=\(folder)/logs/finish-%j.log", "\(folder)/finish.sh",
                ])
        } catch {
            throw CommandError(
                "\(error.message); the shards run as array job \(array): finish with 'blurfarm slurm finish \(folder)'")
        }
        let submission = Submission(array: array, finisher: finisher, shards: shards, submitted: Date())
        submissions.append(submission)
        try write(in: folder)
        return submission
    }
}

/// A run folder and what reading it needs: the run, the job planned again as its tasks plan it
/// and split in the same shards, the job's state folder, and the up-to-date check's inputs.
struct SlurmRunContext {
    let folder: String
    let run: SlurmRun
    let farm: FarmOptions
    let configuration: FarmConfiguration
    let plan: JobPlan
    /// Each shard's part of the plan.
    let shardPlans: [JobPlan]
    let stateFolder: String
    let jobFolder: JobStateFolder
    /// The plugin hashes of the job's recipes.
    let plugins: [String: String]

    /// Reads the run folder `folder` and plans its job again.
    /// - Throws: ``ExitCode`` 2 (said on standard error) when the folder or the job cannot be read.
    init(_ folder: String) throws {
        let folder = FarmOptions.absolute(folder)
        let run: SlurmRun
        do throws(CommandError) {
            run = try SlurmRun.read(folder)
        } catch {
            printError(error.message)
            throw ExitCode(error.exitCode)
        }
        self.run = run
        self.folder = folder
        farm = try run.farm
        let (configuration, registry, plans) = try loadJobs([run.manifest], farm: farm, tileOverride: nil)
        self.configuration = configuration
        let plan = plans[0]
        self.plan = plan
        let split: [[String]]
        do throws(CommandError) {
            split = try Sharding.readSplit((folder as NSString).appendingPathComponent(SlurmRun.splitName), shards: run.shards)
        } catch {
            printError(error.message)
            throw ExitCode(error.exitCode)
        }
        shardPlans = (0..<run.shards).map { plan.shard(JobShard(index: $0, count: run.shards)!, split: split) }
        stateFolder = farm.stateFolder(configuration)
        jobFolder = JobStateFolder(state: stateFolder, jobName: plan.job.name, manifestPath: plan.manifestPath)
        plugins = FarmJob.pluginHashes(of: plans, registry: registry)
    }

    /// Each planned output's state against `records` (``IncrementalRun/status(of:records:versions:plugins:pixelLimit:)``),
    /// by shard, in plan order.
    func statuses(_ records: OutputRecords.Contents) -> [[OutputStatus]] {
        shardPlans.map {
            IncrementalRun.status(
                of: $0, records: records, versions: Blurfarm.recipeVersions, plugins: plugins,
                pixelLimit: configuration.pixelLimit
            ).filter { $0.state != .wouldBePruned }
        }
    }

    /// The reports the array tasks wrote (`reports/shard-<I>-<id>.json`), by shard, oldest first.
    func shardReports() -> [Int: [RunReport]] {
        let reports = (folder as NSString).appendingPathComponent("reports")
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        var byShard: [Int: [RunReport]] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: reports)) ?? [] {
            guard let match = name.wholeMatch(of: /shard-([0-9]+)-[0-9]+\.json/), let shard = Int(match.1),
                let data = FileManager.default.contents(atPath: (reports as NSString).appendingPathComponent(name)),
                let list = try? decoder.decode([ReportJSON].self, from: data)
            else { continue }
            byShard[shard, default: []] += list.map(\.report)
        }
        return byShard.mapValues { $0.sorted { $0.started < $1.started } }
    }

    /// What the shards' reports say of each output, by output path: the latest report that
    /// wrote it, else the latest that names it.
    func reportedOutputs(_ reports: [Int: [RunReport]]) -> [String: OutputReport] {
        var outputs: [String: OutputReport] = [:]
        for report in reports.values.flatMap({ $0 }).sorted(by: { $0.started < $1.started }) {
            for output in report.outputs where output.status == .written || outputs[output.output]?.status != .written {
                outputs[output.output] = output
            }
        }
        return outputs
    }

    /// The Slurm state of each shard (its latest submission's task), and of the latest finisher.
    func slurmStates() throws(CommandError) -> (shards: [Int: SlurmClient.JobState], finisher: SlurmClient.JobState?) {
        var shards: [Int: SlurmClient.JobState] = [:]
        var known: [String: [Int: SlurmClient.JobState]] = [:]
        for shard in 0..<run.shards {
            guard let submission = run.submission(of: shard) else { continue }
            if known[submission.array] == nil { known[submission.array] = try SlurmClient.states(ofJob: submission.array) }
            shards[shard] = known[submission.array]?[shard]
        }
        let finisher = try run.submissions.last.flatMap { submission throws(CommandError) in
            try SlurmClient.states(ofJob: submission.finisher)[-1]
        }
        return (shards, finisher)
    }
}

/// A run report read back from its JSON (docs/report.md): what `slurm finish` needs of each
/// shard's `run --report`. Names that are not UTF-8 come back as the report shows them.
private struct ReportJSON: Decodable {
    struct Output: Decodable {
        struct Failure: Decodable {
            var kind: String
            var code: String?
            var message: String
        }

        var input: String
        var output: String
        var variant: String
        var status: OutputReport.Status
        var tiles: Int
        var pixels: Int
        var decodeSeconds: Double
        var filterSeconds: Double
        var encodeSeconds: Double
        var retries: Int
        var checksum: String?
        var error: Failure?
    }

    var job: String
    var manifest: String
    var started: Date
    var finished: Date
    var settings: RunSettings
    var outputs: [Output]

    var report: RunReport {
        RunReport(
            job: job, manifest: manifest, started: started, finished: finished, settings: settings,
            outputs: outputs.map { o in
                OutputReport(
                    input: o.input, output: o.output, variant: o.variant, status: o.status, tiles: o.tiles, pixels: o.pixels,
                    decodeSeconds: o.decodeSeconds, filterSeconds: o.filterSeconds, encodeSeconds: o.encodeSeconds,
                    retries: o.retries, checksum: o.checksum,
                    failure: o.error.map { .reported(kind: $0.kind, code: $0.code, message: $0.message) })
            })
    }
}
