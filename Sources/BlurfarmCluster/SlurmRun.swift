import BlurfarmCoordinator
import Foundation

/// A run of one job on Slurm (`blurfarm slurm submit`): its folder in the job's state folder,
/// `<state>/jobs/<job>-<hash>/slurm/<UTC time>-<pid>/`, holding
///
/// - `run.json`: this description (the job, the shards, the submissions);
/// - `split.json`: each shard's outputs, fixed at submission (``ShardSplit``);
/// - `shard.sh`, `finish.sh`: the batch scripts of the array tasks and of the finisher;
/// - `reports/shard-<I>-<Slurm job id>.json`: each array task's `run --report`;
/// - `logs/`: Slurm's output of each task and finisher;
/// - `report.json`: the finisher's merged report (the schema of `run --report`).
public struct SlurmRun: Codable, Sendable {
    /// The job's name.
    public var job: String
    /// The manifest, absolute.
    public var manifest: String
    /// The working directory of the tasks (the submitter's): relative outputs are relative to it.
    public var directory: String
    /// The blurfarm executable the tasks run.
    public var executable: String
    /// The configuration, absolute, or nil for the built-in defaults.
    public var config: String?
    /// Shards the job is split into.
    public var shards: Int
    /// Array tasks allowed to run at once (`%K`), or nil for no limit.
    public var maxRunning: Int?
    /// The options given to every `sbatch` (partition, time, `--sbatch-arg`).
    public var sbatchArguments: [String]
    /// The submissions, first `submit`, then each `resume`.
    public var submissions: [Submission] = []

    /// One `submit` or `resume`: an array of shards and the finisher after it.
    public struct Submission: Codable, Sendable {
        /// The array job's id.
        public var array: String
        /// The finisher's job id.
        public var finisher: String
        /// The shards the array runs.
        public var shards: [Int]
        public var submitted: Date

        /// What `slurm resume` says of it, a submission of some of the run's `total` shards again:
        /// `resubmitted shards 1, 3 of 4: array job 12, finisher job 13`.
        public func resubmitted(of total: Int) -> String {
            "resubmitted \(shards.count == 1 ? "shard" : "shards") \(shards.map(String.init).joined(separator: ", ")) of \(total): "
                + "array job \(array), finisher job \(finisher)"
        }
    }

    /// The name of the description in the run folder.
    public static let fileName = "run.json"
    /// The name of the split in the run folder.
    public static let splitName = "split.json"

    /// A run not submitted yet.
    public init(
        job: String, manifest: String, directory: String, executable: String, config: String?, shards: Int,
        maxRunning: Int?, sbatchArguments: [String]
    ) {
        self.job = job
        self.manifest = manifest
        self.directory = directory
        self.executable = executable
        self.config = config
        self.shards = shards
        self.maxRunning = maxRunning
        self.sbatchArguments = sbatchArguments
    }

    /// The shards to submit when `requested` are asked of a job of `inputs` inputs: a shard holds
    /// whole inputs, so past one shard per input the tasks would have nothing to do (and an
    /// array of millions would cost the cluster and the submitter alike).
    public static func shardCount(requested: Int, inputs: Int) -> Int {
        min(requested, max(1, inputs))
    }

    /// The run described in the folder `folder`.
    /// - Throws: ``ClusterError/notARunFolder(folder:)`` or ``ClusterError/unreadableRun(path:underlying:)``.
    public static func read(_ folder: String) throws(ClusterError) -> SlurmRun {
        let path = (folder as NSString).appendingPathComponent(fileName)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        guard let data = FileManager.default.contents(atPath: path) else { throw .notARunFolder(folder: folder) }
        do {
            return try decoder.decode(SlurmRun.self, from: data)
        } catch {
            throw .unreadableRun(path: path, underlying: error)
        }
    }

    /// Writes this description in `folder`, atomically.
    /// - Throws: ``ClusterError/cannotWrite(path:underlying:)``.
    public func write(in folder: String) throws(ClusterError) {
        let path = (folder as NSString).appendingPathComponent(Self.fileName)
        do {
            try RunReport.write(self, to: path)
        } catch {
            throw .cannotWrite(path: path, underlying: error)
        }
    }

    /// The latest submission that ran `shard`, if any.
    public func submission(of shard: Int) -> Submission? {
        submissions.last { $0.shards.contains(shard) }
    }

    /// `shards` as `sbatch --array` takes them, runs of consecutive ones as ranges: `0-3`, `1,4-5`.
    public static func arrayRange(_ shards: [Int]) -> String {
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
    /// - Throws: ``ClusterError`` when `sbatch` refuses either: ``ClusterError/finisherRefused(_:array:folder:)``
    ///   when only the finisher is refused (the array stays submitted).
    public mutating func submit(_ shards: [Int], folder: String, extra: [String] = []) throws(ClusterError) -> Submission {
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
            throw .finisherRefused(error, array: array, folder: folder)
        }
        let submission = Submission(array: array, finisher: finisher, shards: shards, submitted: Date())
        submissions.append(submission)
        try write(in: folder)
        return submission
    }
}
