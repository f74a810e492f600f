import BlurfarmState
import BlurfarmCoordinator
import BlurfarmCore
import BlurfarmKernels
import BlurfarmManifest
import Foundation

/// A run folder and what reading it needs: the run, the job planned again as its tasks plan it
/// and split in the same shards, the job's state folder, and the up-to-date check's inputs.
/// The command plans the job (it owns the configuration's loading); this holds the rest.
public struct SlurmRunContext {
    /// The run folder, absolute.
    public let folder: String
    public let run: SlurmRun
    public let configuration: FarmConfiguration
    /// The job's plan, whole.
    public let plan: JobPlan
    /// The shards that run each input of the plan, in plan order (``JobPlan/shards(listedBy:)``):
    /// none for an input new since the split.
    public let inputShards: [[Int]]
    public let stateFolder: String
    public let jobFolder: JobStateFolder
    /// The plugin hashes of the job's recipes.
    public let plugins: [String: String]
    /// The versions the records' recipes name (``Farm/Settings/recipeVersions``).
    public let recipeVersions: String

    /// The run `run` in `folder`, its job planned as `plan` with `registry`, its state in
    /// `stateFolder`; reads the split of `folder`.
    /// - Throws: ``ClusterError`` when the split cannot be read or does not match the run.
    public init(
        folder: String, run: SlurmRun, configuration: FarmConfiguration, plan: JobPlan, registry: FilterRegistry,
        stateFolder: String, recipeVersions: String
    ) throws(ClusterError) {
        self.folder = folder
        self.run = run
        self.configuration = configuration
        self.plan = plan
        let split = try ShardSplit.read((folder as NSString).appendingPathComponent(SlurmRun.splitName), shards: run.shards)
        inputShards = try plan.shards(listedBy: split.shards(listing:))
        self.stateFolder = stateFolder
        jobFolder = JobStateFolder(state: stateFolder, jobName: plan.job.name, manifestPath: plan.manifestPath)
        plugins = registry.pluginHashes(of: [plan])
        self.recipeVersions = recipeVersions
    }

    /// Hands `body` each planned output's state against `records` (``IncrementalRun/status(of:records:versions:plugins:pixelLimit:)``)
    /// in plan order, with the shard that runs its input (each of them, for an input a split
    /// written by hand gives two); an input of no shard (new since the split) is left out, as
    /// are the sizes not made (``OutputState/notEnlarged``). The states are those of the whole
    /// plan, asked once: asked of each shard's part, each shard's walk listed every other
    /// shard's outputs as orphans, and stated them. Each file is stated as it is now: the plan
    /// was made when this was opened, and `status --wait` asks again as the shards write (taken
    /// as the plan saw them, outputs written since were missing).
    public func forEachStatus<Failure: Error>(
        _ records: IncrementalRun.StatusRecords, _ body: (_ shard: Int, OutputStatus) throws(Failure) -> Void
    ) throws(Failure) {
        let statuses = IncrementalRun.status(
            of: plan, records: records, versions: recipeVersions, plugins: plugins, pixelLimit: configuration.pixelLimit,
            trustingSeen: false)
        var pending = statuses.makeIterator()
        var status = pending.next()
        for (input, shards) in zip(plan.inputs, inputShards) {
            while let current = status, current.input == input.relativePath {
                status = pending.next()
                guard current.state != .wouldBePruned, current.state != .notEnlarged else { continue }
                for shard in shards { try body(shard, current) }
            }
        }
    }

    /// The records of the job and of its shards, merged as a run reads them
    /// (``IncrementalRun/StatusRecords/of(_:)``: the job's index, looked up as a run looks it
    /// up, once no shard's records wait to be merged).
    /// - Throws: ``ClusterError/state(_:)``.
    public func records() throws(ClusterError) -> IncrementalRun.StatusRecords {
        do throws(StateError) {
            return try IncrementalRun.StatusRecords.of(jobFolder)
        } catch {
            throw .state(error)
        }
    }

    /// The reports the array tasks wrote, in `reports/` (``ShardReports/of(folder:)``).
    /// - Throws: ``ClusterError/state(_:)`` when their index cannot be made or written.
    public func shardReports() throws(ClusterError) -> ShardReports {
        try ShardReports.of(folder: (folder as NSString).appendingPathComponent("reports"))
    }

    /// The Slurm states of a run: each shard's (its latest submission's task) and the latest finisher's.
    public struct SlurmStates: Sendable {
        /// By shard; a shard missing has not been submitted or is no longer known to Slurm.
        public var shards: [Int: SlurmClient.JobState]
        /// The latest finisher's, nil when there is none or Slurm no longer knows it.
        public var finisher: SlurmClient.JobState?

        /// Whether every shard and the finisher have ended.
        public var haveEnded: Bool { !shards.values.contains { !$0.hasEnded } && finisher?.hasEnded != false }
    }

    /// How often `slurm status --wait` asks Slurm again: scontrol is cheap, and a finished run
    /// is seen within half a second.
    public static let statusPollInterval = 0.5

    /// ``slurmStates()``, asked again every ``statusPollInterval`` seconds until every shard and
    /// the finisher have ended when `waiting`.
    /// - Throws: ``ClusterError`` when scontrol cannot be run or its answer read.
    public func slurmStates(waitingUntilEnded waiting: Bool) throws(ClusterError) -> SlurmStates {
        var states = try slurmStates()
        while waiting, !states.haveEnded {
            Thread.sleep(forTimeInterval: Self.statusPollInterval)
            states = try slurmStates()
        }
        return states
    }

    /// The Slurm state of each shard (its latest submission's task), and of the latest finisher.
    /// - Throws: ``ClusterError`` when `scontrol` fails.
    public func slurmStates() throws(ClusterError) -> SlurmStates {
        var shards: [Int: SlurmClient.JobState] = [:]
        var known: [String: [Int: SlurmClient.JobState]] = [:]
        for shard in 0..<run.shards {
            guard let submission = run.submission(of: shard) else { continue }
            if known[submission.array] == nil { known[submission.array] = try SlurmClient.states(ofJob: submission.array) }
            shards[shard] = known[submission.array]?[shard]
        }
        let finisher = try run.submissions.last.flatMap { submission throws(ClusterError) in
            try SlurmClient.states(ofJob: submission.finisher)[-1]
        }
        return SlurmStates(shards: shards, finisher: finisher)
    }
}
