import ArgumentParser
import BlurfarmCoordinator
import BlurfarmCore
import Foundation

extension Slurm {
    /// `blurfarm slurm finish`: what the finisher job runs.
    struct Finish: ParsableCommand {
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

        @Argument(help: "The run folder (printed by submit).")
        var runFolder: String

        func run() throws {
            let context = try SlurmRunContext(runFolder)
            let began = Date()
            let contents: OutputRecords.Contents
            do throws(StateError) {
                guard case .acquired(let lock) = try JobLock.acquire(context.jobFolder.lockPath, wait: true) else {
                    throw StateError(path: context.jobFolder.lockPath, message: "cannot take the job's lock")
                }
                let records = try OutputRecords(folder: context.jobFolder.path)
                let running = try ShardRecords.merge(context.jobFolder, into: records)
                for folder in running { printWarning("\(folder): the shard is running: its records are merged later") }
                try records.compact()
                withExtendedLifetime(lock) {}
                contents = try ShardRecords.read(context.jobFolder)
            } catch {
                printError("\(error)")
                throw ExitCode(ExitStatus.someFailed)
            }
            let reports = context.shardReports()
            let report = Self.merged(context, records: contents, reports: reports, began: began)
            for output in report.outputs where output.status == .failed || output.status == .failedEarlier {
                printError(output.error ?? "\(output.output): not written")
            }
            let path = (context.folder as NSString).appendingPathComponent("report.json")
            do {
                try RunReport.write([report], to: path)
                try report.writeInStateFolder(context.stateFolder)
            } catch {
                printError("\(path): cannot write the report: \(error.localizedDescription)")
                throw ExitCode(ExitStatus.someFailed)
            }
            let notDone = report.failed + report.failedEarlier
            print("\(report.job): \(report.written) written, \(notDone) failed, \(report.skipped) up to date, "
                + "in \(counted(context.run.shards, "shard")); report \(path)")
            if notDone > 0 { throw ExitCode(ExitStatus.someFailed) }
        }

        /// The run's report: every planned output in plan order, as the latest shard report
        /// that wrote it says (with its checksum), up to date when the records say so and no
        /// report wrote it; failed, with why, when it is not up to date now.
        static func merged(
            _ context: SlurmRunContext, records: OutputRecords.Contents, reports: [Int: [RunReport]], began: Date
        ) -> RunReport {
            let reported = context.reportedOutputs(reports)
            var outputs: [OutputReport] = []
            for (shard, statuses) in context.statuses(records).enumerated() {
                for status in statuses {
                    let entry = reported[status.output]
                    let variant = status.variant ?? ""
                    if status.state == .upToDate {
                        outputs.append(
                            entry?.status == .written
                                ? entry!
                                : OutputReport(input: status.input, output: status.output, variant: variant, status: .skipped))
                    } else if let entry, entry.status == .failed || entry.status == .failedEarlier {
                        outputs.append(entry)
                    } else {
                        // The kind: `decode` (failed earlier), `lost` (its shard never wrote it), or
                        // `verification` (not as its shard recorded it).
                        let (kind, why): (String, String)
                        switch (entry?.status, status.state) {
                        case (_, .failedEarlier): (kind, why) = ("decode", "failed earlier: \(status.reason ?? "its input cannot be decoded")")
                        case (nil, _): (kind, why) = ("lost", "not written: shard \(shard) did not report it (lost, cancelled or out of time)")
                        case (.stopped, _), (.cancelled, _): (kind, why) = ("lost", "not written: shard \(shard) was stopped")
                        default: (kind, why) = ("verification", "\(status.state) after shard \(shard) ran")
                        }
                        outputs.append(OutputReport(
                            input: status.input, output: status.output, variant: variant, status: .failed,
                            failure: .reported(kind: kind, code: nil, message: "\(ShownName.of(status.output)): \(why)")))
                    }
                }
            }
            let order = Dictionary(
                context.plan.inputs.flatMap(\.outputs).enumerated().map { ($1.path, $0) }, uniquingKeysWith: { a, _ in a })
            let all = reports.values.flatMap { $0 }
            let settings =
                all.last?.settings
                ?? RunSettings(
                    configuration: context.run.config, workers: 0, threads: 0,
                    decodedImages: context.configuration.decodedImages, tile: context.plan.tileSize,
                    pixelLimit: context.configuration.pixelLimit, verify: context.plan.job.verify.rawValue)
            return RunReport(
                job: context.plan.job.name, manifest: context.plan.manifestPath,
                started: all.map(\.started).min() ?? context.run.submissions.first?.submitted ?? began, finished: Date(),
                settings: settings, outputs: outputs.sorted { (order[$0.output] ?? .max) < (order[$1.output] ?? .max) })
        }
    }
}
