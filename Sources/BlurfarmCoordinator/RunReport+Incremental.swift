import Foundation

extension RunReport {
    /// This report (of the plan ``IncrementalRun/plan``) with the outputs `incremental` took out
    /// as up to date, in the full plan's order, the sizes it does not make
    /// (``IncrementalRun/notEnlarged``) and the outputs pruned; `started` (when the
    /// up-to-date check began, before the runner started) replaces the runner's start time.
    public func merging(_ incremental: IncrementalRun, started: Date, pruned: [String] = []) -> RunReport {
        // A run that rendered nothing (cron's usual one) reports the skipped as they are:
        // the same array, not a copy.
        let all = outputs.isEmpty ? incremental.skipped : merged(with: incremental.skipped, in: incremental)
        var merged = RunReport(
            job: job, manifest: manifest, started: min(started, self.started), finished: finished, settings: settings, outputs: all)
        merged.pruned = pruned
        merged.notEnlarged = incremental.notEnlarged
        merged.unredacted = unredacted
        return merged
    }

    /// This report's outputs with `skipped`, in the plan's order. The skipped are in that
    /// order already: they are walked beside the plan, with the outputs that ran (in the order
    /// they ended) found by path; those the plan does not name go last.
    private func merged(with skipped: [OutputReport], in incremental: IncrementalRun) -> [OutputReport] {
        // Nothing skipped and every output made in the plan's order (a first run's): the
        // outputs as they are, not a copy beside a dictionary of their paths.
        if skipped.isEmpty, outputs.lazy.map(\.output).elementsEqual(incremental.plannedOutputs) { return outputs }
        var ran = Dictionary(grouping: outputs.indices, by: { outputs[$0].output })
        var all: [OutputReport] = []
        all.reserveCapacity(outputs.count + skipped.count)
        var next = 0
        for path in incremental.plannedOutputs {
            if let indices = ran.removeValue(forKey: path) { all += indices.map { outputs[$0] } }
            if next < skipped.count, skipped[next].output == path {
                all.append(skipped[next])
                next += 1
            }
        }
        all += skipped[next...]
        all += outputs.indices.filter { ran[outputs[$0].output] != nil }.map { outputs[$0] }
        return all
    }
}
