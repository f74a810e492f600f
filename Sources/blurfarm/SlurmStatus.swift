import ArgumentParser
import BlurfarmCluster
import Foundation

extension Slurm {
    /// `blurfarm slurm status`.
    struct Status: FarmCommand {
        static let configuration = CommandConfiguration(
            commandName: "status",
            abstract: "Show a Slurm run: each shard's Slurm state, its outputs done, the failed outputs.",
            discussion: """
                Per shard: its state from `scontrol show job` (no accounting database needed; \
                Slurm forgets a job MinJobAge after it ends, then the state reads 'ended'), its \
                outputs done (up to date in the job's and the shard's records) of its total, and \
                each failed output with its input and why.

                With --wait, polls every 0.5 s until every shard and the finisher have ended, \
                then exits as `run` would: 0 every output done, 1 some are not.
                """)

        @OptionGroup var folder: RunFolder

        @Flag(help: "Wait until the shards and the finisher have ended; exit 0 when every output is done, else 1.")
        var wait = false

        func execute() throws {
            let context = try folder.context()
            let states = try context.slurmStates(waitingUntilEnded: wait)
            let status = try context.status(states)
            print(status.text(job: context.plan.job.name, shards: context.run.shards, folder: context.folder))
            if wait, !status.isDone { throw ExitCode(ExitStatus.someFailed) }
        }
    }

    /// `blurfarm slurm resume`.
    struct Resume: FarmCommand {
        static let configuration = CommandConfiguration(
            commandName: "resume",
            abstract: "Submit again the shards of a Slurm run that failed or were lost, and a new finisher.",
            discussion: """
                A shard is submitted again when some of its outputs are not up to date (it \
                failed, was cancelled, ran out of time or its node died); outputs already \
                written are up to date and not redone, and inputs that failed are tried again \
                (`run --retry-failed`). Refused while a shard or the finisher is still pending \
                or running.

                Exit status: 0 submitted, or nothing to resume; 1 still running, or sbatch \
                refused; 2 the run folder, the job or the configuration cannot be read.
                """)

        @OptionGroup var folder: RunFolder

        func execute() throws {
            let context = try folder.context()
            let unfinished = try context.shardsToResume(try context.slurmStates())
            guard !unfinished.isEmpty else {
                print("nothing to resume: every output of job '\(context.plan.job.name)' is up to date")
                return
            }
            var run = context.run
            let submission = try run.submit(unfinished, folder: context.folder, extra: ["--retry-failed"])
            print(submission.resubmitted(of: run.shards))
        }
    }
}
