import BlurfarmCommandSupport
import ArgumentParser
import BlurfarmCluster
import BlurfarmCore
import BlurfarmFarm
import BlurfarmState
import Foundation

/// `blurfarm slurm`: a job's shards as a Slurm array, over shared storage (docs/cluster.md).
struct Slurm: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "slurm",
        abstract: "Run a job's shards on a Slurm cluster: submit, status, resume, finish.",
        discussion: """
            The job's state folder, its inputs, outputs and the blurfarm executable must be on \
            storage every node shares (docs/cluster.md). Each array task runs \
            `blurfarm run JOB --shard I/N`; a finisher job merges their records and reports.
            """,
        subcommands: [Submit.self, Status.self, Resume.self, Finish.self])
}

extension Slurm {
    /// `blurfarm slurm submit`.
    struct Submit: FarmCommand {
        static let configuration = CommandConfiguration(
            commandName: "submit",
            abstract: "Check a job, then submit its shards as a Slurm array and a finisher after them.",
            discussion: """
                Checks the job as `check` does (an invalid manifest or configuration: exit \
                status 2, nothing submitted; an input whose header cannot be read is a warning: \
                its outputs will fail), writes the run folder in the job's state folder, submits \
                `sbatch --array=0-(N-1)%K` whose tasks run `blurfarm run JOB --shard I/N`, and \
                a finisher (`--dependency=afterany`) that runs `blurfarm slurm finish RUN`. \
                Prints the Slurm job ids and the run folder, and exits.

                Exit status: 0 submitted; 1 sbatch refused; 2 the job or configuration is invalid.
                """)

        @Argument(help: "The job manifest.")
        var job: String

        @OptionGroup var farm: FarmOptions

        @Option(help: "Shards to split the job into (array tasks; at most one per input).")
        var shards = 4

        @Option(help: "Array tasks running at once (sbatch --array=...%K; default: as many as Slurm allows).")
        var maxRunning: Int?

        @Option(help: "The Slurm partition (sbatch --partition).")
        var partition: String?

        @Option(help: "The time limit of each task (sbatch --time), e.g. 30:00.")
        var time: String?

        @Option(help: ArgumentHelp("One more option for sbatch (repeat for several), e.g. --sbatch-arg=--mem=8G.", valueName: "arg"))
        var sbatchArg: [String] = []

        func validate() throws {
            if shards < 1 { throw ValidationError("--shards must be at least 1") }
            if let maxRunning, maxRunning < 1 { throw ValidationError("--max-running must be at least 1") }
        }

        func execute() throws {
            let (loader, plans) = try loadJobs([FarmOptions.absolute(job)], farm: farm, tileOverride: nil)
            let configuration = loader.configuration
            let plan = plans[0]
            for line in plan.refused { printError("\(plan.manifestPath): \(line)") }
            printDiagnostics(Diagnostics(plan.unmatchedGlobs))
            // The split by pixels, fixed for every task (split.json); an unreadable input is named.
            var unreadable: [String] = []
            let weights = plan.weights { unreadable.append($0.description) }
            for error in unreadable { printWarning("\(error): its outputs will fail") }
            let shards = SlurmRun.shardCount(requested: self.shards, inputs: plan.inputs.count)
            if shards < self.shards {
                printWarning("--shards \(self.shards): the job has \(counted(plan.inputs.count, "input")); submitting \(counted(shards, "shard"))")
            }
            let jobFolder = JobStateFolder(state: farm.stateFolder(configuration), jobName: plan.job.name, manifestPath: plan.manifestPath)
            _ = try plan.inputSizes?.keepUnlessLocked(in: jobFolder)  // for the tasks: they read no header again
            let options = [partition.map { "--partition=\($0)" }, time.map { "--time=\($0)" }].compactMap { $0 }
            var run = SlurmRun(
                job: plan.job.name, manifest: plan.manifestPath, directory: FileManager.default.currentDirectoryPath,
                executable: Installation.executable, config: farm.absoluteConfigurationPath,
                shards: shards, maxRunning: maxRunning, sbatchArguments: options + sbatchArg)
            let folder = try SlurmRun.makeFolder(in: jobFolder)
            try run.prepare(in: folder, plan: plan, assigned: plan.shardAssignment(count: shards, weights: weights))
            let submission = try run.submit(Array(0..<shards), folder: folder)
            print("submitted job '\(plan.job.name)' in \(counted(shards, "shard")) (\(counted(plan.outputCount, "output"))): "
                + "array job \(submission.array), finisher job \(submission.finisher)")
            print("run folder: \(folder)")
        }
    }
}

extension Slurm {
    /// The run folder the commands after `submit` take (`status`, `resume`, `finish`).
    struct RunFolder: ParsableArguments {
        @Argument(help: "The run folder (printed by submit).")
        var runFolder: String

        /// Reads the run folder and plans its job again as its tasks plan it (with the
        /// configuration the run recorded).
        /// - Throws: the ``ClusterError`` or the job's problem (``CommandFailure`` says it) when the
        ///   folder or the job cannot be read.
        func context() throws -> SlurmRunContext {
            let folder = FarmOptions.absolute(runFolder)
            let run = try SlurmRun.read(folder)
            let farm = try FarmOptions.parse(run.config.map { ["--config", $0] } ?? [])
            let (loader, plans) = try loadJobs([run.manifest], farm: farm, tileOverride: nil)
            return try SlurmRunContext(
                folder: folder, run: run, configuration: loader.configuration, plan: plans[0], registry: loader.registry,
                stateFolder: farm.stateFolder(loader.configuration), recipeVersions: Release.recipeVersions)
        }
    }
}
