import ArgumentParser
import BlurfarmCoordinator
import BlurfarmCore
import Foundation

extension Slurm {
    /// `blurfarm slurm status`.
    struct Status: ParsableCommand {
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

        @Argument(help: "The run folder (printed by submit).")
        var runFolder: String

        @Flag(help: "Wait until the shards and the finisher have ended; exit 0 when every output is done, else 1.")
        var wait = false

        func run() throws {
            let context = try SlurmRunContext(runFolder)
            let done: Bool
            do throws(CommandError) {
                var states = try context.slurmStates()
                while wait, states.shards.values.contains(where: { !$0.hasEnded }) || states.finisher?.hasEnded == false {
                    Thread.sleep(forTimeInterval: 0.5)
                    states = try context.slurmStates()
                }
                done = try Self.print(context, states: states)
            } catch {
                printError(error.message)
                throw ExitCode(error.exitCode)
            }
            if wait, !done { throw ExitCode(ExitStatus.someFailed) }
        }

        /// Prints the run's state; whether every output is done.
        private static func print(
            _ context: SlurmRunContext, states: (shards: [Int: SlurmClient.JobState], finisher: SlurmClient.JobState?)
        ) throws(CommandError) -> Bool {
            let records: OutputRecords.Contents
            do throws(StateError) {
                records = try ShardRecords.read(context.jobFolder)
            } catch {
                throw CommandError("\(error)")
            }
            let statuses = context.statuses(records)
            let reported = context.reportedOutputs(context.shardReports())
            let done = statuses.map { $0.filter { $0.state == .upToDate }.count }
            let total = statuses.map(\.count)
            Swift.print("job '\(context.plan.job.name)': \(counted(context.run.shards, "shard")), "
                + "\(done.reduce(0, +))/\(total.reduce(0, +)) outputs done; run folder \(context.folder)")
            for (shard, outputs) in statuses.enumerated() {
                let state =
                    context.run.submission(of: shard) == nil
                    ? "not submitted" : states.shards[shard]?.shown ?? "ended (no longer known to Slurm)"
                Swift.print("shard \(shard): \(state), \(done[shard])/\(total[shard]) outputs done")
                for status in outputs where status.state != .upToDate {
                    let entry = reported[status.output]
                    let error =
                        status.state == .failedEarlier
                        ? "failed earlier: \(status.reason ?? "")"
                        : entry?.status == .failed ? entry?.error : nil
                    guard let error else { continue }
                    Swift.print("  failed: \(ShownName.of(status.input)) -> \(ShownName.of(status.output)): \(error)")
                }
            }
            if let submission = context.run.submissions.last {
                Swift.print("finisher (job \(submission.finisher)): \(states.finisher?.shown ?? "ended (no longer known to Slurm)")")
            }
            return done == total
        }
    }

    /// `blurfarm slurm resume`.
    struct Resume: ParsableCommand {
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

        @Argument(help: "The run folder (printed by submit).")
        var runFolder: String

        func run() throws {
            let context = try SlurmRunContext(runFolder)
            do throws(CommandError) {
                let states = try context.slurmStates()
                let running = states.shards.filter { !$0.value.hasEnded }.keys.sorted()
                if !running.isEmpty || states.finisher?.hasEnded == false {
                    let which = running.isEmpty ? "the finisher" : "shards \(running.map(String.init).joined(separator: ", "))"
                    throw CommandError(
                        "\(context.folder): \(which) still pending or running: wait for them ('blurfarm slurm status --wait') "
                            + "or cancel them (scancel)")
                }
                let records: OutputRecords.Contents
                do throws(StateError) {
                    records = try ShardRecords.read(context.jobFolder)
                } catch {
                    throw CommandError("\(error)")
                }
                let unfinished = context.statuses(records).enumerated().filter { $0.1.contains { $0.state != .upToDate } }
                    .map(\.offset)
                guard !unfinished.isEmpty else {
                    print("nothing to resume: every output of job '\(context.plan.job.name)' is up to date")
                    return
                }
                var run = context.run
                let submission = try run.submit(unfinished, folder: context.folder, extra: ["--retry-failed"])
                print("resubmitted \(unfinished.count == 1 ? "shard" : "shards") "
                    + "\(unfinished.map(String.init).joined(separator: ", ")) of \(run.shards): "
                    + "array job \(submission.array), finisher job \(submission.finisher)")
            } catch {
                printError(error.message)
                throw ExitCode(error.exitCode)
            }
        }
    }
}
