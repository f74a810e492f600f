import BlurfarmCoordinator
import BlurfarmState
import BlurfarmCore
import BlurfarmSystem

extension SlurmRunContext {
    /// Where a run stands: each shard's Slurm state and outputs done, and the finisher's state.
    public struct Status {
        /// Where one shard stands.
        public struct Shard {
            /// What Slurm says of the shard.
            public enum Slurm {
                /// No submission ran this shard.
                case notSubmitted
                /// The state of its latest submission's task.
                case known(SlurmClient.JobState)
                /// Slurm no longer knows the task (it ended more than `MinJobAge` ago).
                case forgotten
            }

            public let index: Int
            public let slurm: Slurm
            /// Its outputs up to date in the job's and the shard's records.
            public let done: Int
            /// Its planned outputs.
            public let total: Int
            /// Its outputs that failed (in plan order), with why.
            public let failures: [(input: String, output: String, error: String)]
        }

        public let shards: [Shard]
        /// The latest finisher's job id and state (nil: forgotten by Slurm); nil when never submitted.
        public let finisher: (job: String, state: SlurmClient.JobState?)?

        /// Whether every planned output is up to date.
        public var isDone: Bool { shards.allSatisfy { $0.done == $0.total } }
        public var done: Int { shards.map(\.done).reduce(0, +) }
        public var total: Int { shards.map(\.total).reduce(0, +) }
    }

    /// Where the run stands, with the Slurm states `states`: the outputs counted as their
    /// states are walked, the shards' reports read, and looked up, for those not up to date
    /// alone (a run done reads none).
    /// - Throws: ``ClusterError/state(_:)`` when the records or the reports' index cannot be read.
    public func status(_ states: SlurmStates) throws(ClusterError) -> Status {
        var reports: ShardReports?
        var done = Array(repeating: 0, count: run.shards), total = done
        var failures = Array(repeating: [(input: String, output: String, error: String)](), count: run.shards)
        var notDone: [(shard: Int, status: OutputStatus)] = []
        func add() throws(ClusterError) {
            guard !notDone.isEmpty else { return }
            if reports == nil { reports = try shardReports() }
            guard let gathered = reports else { return }
            let reported = try gathered.outputs(notDone.map(\.status.output))
            for (shard, status) in notDone {
                let error =
                    status.state == .failedEarlier
                    ? "failed earlier: \(status.reason ?? "")"
                    : reported[.init(status.output)]?.status == .failed ? reported[.init(status.output)]?.output?.error : nil
                if let error { failures[shard].append((status.input, status.output, error)) }
            }
            notDone.removeAll(keepingCapacity: true)
        }
        try forEachStatus(try records()) { (shard, status) throws(ClusterError) in
            total[shard] += 1
            if status.state == .upToDate {
                done[shard] += 1
            } else {
                notDone.append((shard, status))
                if notDone.count == Self.mergeBatch { try add() }
            }
        }
        try add()
        let shards = (0..<run.shards).map { shard in
            let slurm: Status.Shard.Slurm =
                run.submission(of: shard) == nil ? .notSubmitted : states.shards[shard].map { .known($0) } ?? .forgotten
            return Status.Shard(index: shard, slurm: slurm, done: done[shard], total: total[shard], failures: failures[shard])
        }
        return Status(shards: shards, finisher: run.submissions.last.map { ($0.finisher, states.finisher) })
    }

    /// The shards `resume` submits again: those with some output not up to date (failed,
    /// cancelled, out of time, their node dead); empty when every output is up to date.
    /// - Throws: ``ClusterError/stillRunning(folder:shards:)`` while a shard or the finisher is
    ///   pending or running; ``ClusterError/state(_:)`` when the records cannot be read.
    public func shardsToResume(_ states: SlurmStates) throws(ClusterError) -> [Int] {
        let running = states.shards.filter { !$0.value.hasEnded }.keys.sorted()
        if !running.isEmpty || states.finisher?.hasEnded == false { throw .stillRunning(folder: folder, shards: running) }
        var resumed = Set<Int>()
        forEachStatus(try records()) { shard, status in if status.state != .upToDate { resumed.insert(shard) } }
        return resumed.sorted()
    }
}

extension SlurmRunContext.Status {
    /// What `slurm status` prints: a line for job `job` (its `shards` shards, outputs done of
    /// all, the run folder `folder`), a line per shard with its Slurm state and outputs done,
    /// each failed output under it, and the finisher's state. Lines separated by newlines, none
    /// after the last; names shown escaped.
    public func text(job: String, shards count: Int, folder: String) -> String {
        let forgotten = "ended (no longer known to Slurm)"
        var lines = ["job '\(job)': \(counted(count, "shard")), \(done)/\(total) outputs done; run folder \(folder)"]
        for shard in shards {
            let state: String
            switch shard.slurm {
            case .notSubmitted: state = "not submitted"
            case .known(let job): state = job.shown
            case .forgotten: state = forgotten
            }
            lines.append("shard \(shard.index): \(state), \(shard.done)/\(shard.total) outputs done")
            for failure in shard.failures {
                lines.append("  failed: \(ShownName.of(failure.input)) -> \(ShownName.of(failure.output)): \(failure.error)")
            }
        }
        if let finisher { lines.append("finisher (job \(finisher.job)): \(finisher.state?.shown ?? forgotten)") }
        return lines.joined(separator: "\n")
    }
}
