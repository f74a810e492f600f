import BlurfarmState
import BlurfarmCoordinator
import BlurfarmCore
import BlurfarmSystem
import Foundation

extension SlurmRunContext {
    /// What the finisher's merge of the records did.
    public struct MergedRecords {
        /// The shard folders whose shard is running: their records are merged later.
        public let running: [String]
        /// The records of the job and of its shards after the merge (``SlurmRunContext/records()``).
        public let records: IncrementalRun.StatusRecords
    }

    /// Takes the job's lock (waiting for it) and merges the records of every shard not running
    /// into the job's, so that a plain `blurfarm run` finds their outputs up to date.
    /// - Throws: ``ClusterError/state(_:)`` naming the lock or the records.
    public func mergeRecords() throws(ClusterError) -> MergedRecords {
        do throws(StateError) {
            guard case .acquired(let lock) = try JobLock.acquire(jobFolder.lockPath, wait: true) else {
                throw StateError(path: jobFolder.lockPath, message: "cannot take the job's lock")
            }
            let records = try OutputRecords(folder: jobFolder.path)
            let running = try ShardRecords.merge(jobFolder, into: records)
            withExtendedLifetime(lock) {}
            return MergedRecords(running: running, records: try IncrementalRun.StatusRecords.of(jobFolder))
        } catch {
            throw .state(error)
        }
    }

    /// The run's report: every planned output in plan order, as the latest shard report
    /// that wrote it says (with its checksum), up to date when the records say so and no
    /// report wrote it; failed, with why, when it is not up to date now.
    public func mergedReport(records: IncrementalRun.StatusRecords, reports: [Int: [RunReport]], began: Date) -> RunReport {
        let reported = reportedOutputs(reports)
        var outputs: [OutputReport] = []
        for (shard, statuses) in statuses(records).enumerated() {
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
            plan.inputs.flatMap(\.outputs).enumerated().map { ($1.path, $0) }, uniquingKeysWith: { a, _ in a })
        let all = reports.values.flatMap { $0 }
        let settings =
            all.last?.settings
            ?? RunSettings(
                configuration: run.config, workers: 0, threads: 0, decodedImages: configuration.decodedImages,
                tile: plan.tileSize, pixelLimit: configuration.pixelLimit, verify: plan.job.verify.rawValue)
        var report = RunReport(
            job: plan.job.name, manifest: plan.manifestPath,
            started: all.map(\.started).min() ?? run.submissions.first?.submitted ?? began, finished: Date(),
            settings: settings, outputs: outputs.sorted { (order[$0.output] ?? .max) < (order[$1.output] ?? .max) })
        report.notEnlarged = plan.notEnlarged
        return report
    }

    /// Writes `report` as `report.json` in the run folder and in the state folder's reports; the
    /// first path.
    /// - Throws: ``ClusterError/cannotWriteReport(path:underlying:)`` naming `report.json`.
    public func write(_ report: RunReport) throws(ClusterError) -> String {
        let path = (folder as NSString).appendingPathComponent("report.json")
        do {
            try RunReport.write([report], to: path)
            try report.writeInStateFolder(stateFolder)
        } catch {
            throw .cannotWriteReport(path: path, underlying: error)
        }
        return path
    }
}

extension RunReport {
    /// Its outputs not done: failed, now or earlier.
    public var notDone: Int { failed + failedEarlier }

    /// What `slurm finish` says of each output not done, one line each: its error.
    public var notDoneLines: [String] {
        outputs.filter { $0.status == .failed || $0.status == .failedEarlier }.map { $0.error ?? "\($0.output): not written" }
    }
}
