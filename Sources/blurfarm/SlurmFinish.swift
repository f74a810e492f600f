import BlurfarmCommandSupport
import ArgumentParser
import BlurfarmCluster
import BlurfarmCore
import Foundation

extension Slurm {
    /// `blurfarm slurm finish`: what the finisher job runs.
    struct Finish: FarmCommand {
        static let configuration = CommandConfiguration(
            commandName: "finish",
            abstract: "Merge the shards' records and reports of a Slurm run, and verify every output (the finisher job).",
            discussion: """
                Takes the job's lock (waiting for it), merges the records of every shard not \
                running into the job's (so that a plain `blurfarm run` finds their outputs up to \
                date), merges the shards' reports into one, `report.json` in the run folder and \
                in the state folder's reports (the schema of `run --report`, docs/report.md), \
                and checks that every planned output is there with the bytes its shard recorded \
                (the up-to-date check of `run`). Names every output that is not on standard \
                error.

                Exit status: 0 every output written or up to date; 1 some are not (failed, or \
                their shard lost); 2 the run folder, the job or the configuration cannot be read.
                """)

        @OptionGroup var folder: RunFolder

        func execute() throws {
            let context = try folder.context()
            let began = Date()
            let records = try context.mergeRecords()
            for folder in records.running { printWarning("\(folder): the shard is running: its records are merged later") }
            let report = try context.mergedReport(records: records.records, reports: try context.shardReports(), began: began)
            report.forEachNotDoneLine { printError($0) }
            let path = try context.write(report)
            print("\(report.job): \(report.written) written, \(report.notDone) failed, \(report.skipped) up to date, "
                + "in \(counted(context.run.shards, "shard")); report \(path)")
            if report.notDone > 0 { throw ExitCode(ExitStatus.someFailed) }
        }
    }
}
