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
    /// that wrote it says (with its checksum), up to date (counted) when the records say so and
    /// no report wrote it; failed, with why, when it is not up to date now. Made a batch of
    /// inputs at a time into the state folder's unnamed file, as a run's report is
    /// (``ReportedOutputs/Spilling``): its outputs are not held.
    /// - Throws: ``ClusterError/state(_:)`` when the reports' index cannot be read.
    public func mergedReport(records: IncrementalRun.StatusRecords, reports: ShardReports, began: Date) throws(ClusterError) -> RunReport {
        let outputs = ReportedOutputs.Spilling(state: stateFolder)
        var batch: [(shard: Int, status: OutputStatus)] = []
        func add() throws(ClusterError) {
            let reported = try reports.outputs(batch.map(\.status.output))
            outputs.add(batch.map { shard, status in
                Self.merged(
                    status, shard: shard, reported: reported[.init(status.output)], shardEnded: reports.end(of: shard))
            })
            batch.removeAll(keepingCapacity: true)
        }
        try forEachStatus(records) { (shard, status) throws(ClusterError) in
            // Whole inputs a batch: a new input once the batch is full.
            if batch.count >= Self.mergeBatch, batch.last?.status.input != status.input { try add() }
            batch.append((shard, status))
        }
        try add()
        let settings =
            reports.settings
            ?? RunSettings(
                configuration: run.config, workers: 0, threads: 0, decodedImages: configuration.decodedImages,
                tile: plan.tileSize, pixelLimit: configuration.pixelLimit, verify: plan.job.verify.rawValue)
        var report = RunReport(
            job: plan.job.name, manifest: plan.manifestPath, started: reports.started ?? run.submissions.first?.submitted ?? began,
            finished: Date(), settings: settings, reported: outputs.finish())
        report.notEnlargedList = .ofPlan(plan.inputs)
        return report
    }

    /// Outputs merged a batch (``mergedReport(records:reports:began:)``): their reports looked
    /// up in one transaction.
    static let mergeBatch = 1024

    /// What the merged report says of the output whose state is `status`, run by shard
    /// `shard`, of which the shards' reports say `reported` (`shardEnded`: how the shard's
    /// latest report says it ended; a run's report names every output it did not find up to
    /// date, but those it did not start, stopped): an output
    /// written, by its names and its report's text, not decoded (put in the merged report as
    /// it is: ``ReportedOutputs/Spilling``); one failed, decoded.
    static func merged(
        _ status: OutputStatus, shard: Int, reported: ShardReports.Reported?, shardEnded: ShardReports.ShardEnd
    ) -> (output: OutputReport, text: Data?) {
        let variant = status.variant ?? ""
        if status.state == .upToDate {
            if reported?.status == .written, let text = reported?.text {
                return (OutputReport(input: status.input, output: status.output, variant: variant, status: .written), text)
            }
            return (OutputReport(input: status.input, output: status.output, variant: variant, status: .skipped), nil)
        }
        if reported?.status == .failed || reported?.status == .failedEarlier, let output = reported?.output {
            return (output, reported?.text)
        }
        // The kind: `decode` (failed earlier), `lost` (its shard never wrote it), or
        // `verification` (not as its shard recorded it, or found up to date).
        let (kind, why): (String, String)
        switch (reported?.status, status.state) {
        case (_, .failedEarlier): (kind, why) = ("decode", "failed earlier: \(status.reason ?? "its input cannot be decoded")")
        case (nil, _) where shardEnded == .unreported:
            (kind, why) = ("lost", "not written: shard \(shard) did not report it (lost, cancelled or out of time)")
        case (nil, _) where shardEnded == .stopped: (kind, why) = ("lost", "not written: shard \(shard) was stopped")
        case (.stopped, _), (.cancelled, _): (kind, why) = ("lost", "not written: shard \(shard) was stopped")
        default: (kind, why) = ("verification", "\(status.state) after shard \(shard) ran")
        }
        let failed = OutputReport(
            input: status.input, output: status.output, variant: variant, status: .failed,
            failure: .reported(kind: kind, code: nil, message: "\(ShownName.of(status.output)): \(why)"))
        return (failed, nil)
    }

    /// Writes `report` in the state folder's reports, and as `report.json` in the run folder
    /// (a list of the one report, made from the first file: its outputs encoded once); the
    /// second path.
    /// - Throws: ``ClusterError/cannotWriteReport(path:underlying:)`` naming `report.json`.
    public func write(_ report: RunReport) throws(ClusterError) -> String {
        let path = (folder as NSString).appendingPathComponent("report.json")
        do {
            try RunReport.write(listOfReportIn: try report.writeInStateFolder(stateFolder, keeping: configuration.reportsKept), to: path)
        } catch {
            throw .cannotWriteReport(path: path, underlying: error)
        }
        return path
    }
}

extension RunReport {
    /// Its outputs not done: failed, now or earlier.
    public var notDone: Int { failed + failedEarlier }

    /// Hands `body` what `slurm finish` says of each output not done, one line each: its
    /// error. The outputs are read back a piece at a time, and only when one is not done.
    public func forEachNotDoneLine(_ body: (String) -> Void) {
        guard notDone > 0 else { return }
        reported.forEach { output in
            if output.status == .failed || output.status == .failedEarlier { body(output.error ?? "\(output.output): not written") }
        }
    }
}
