import Foundation

extension RunReport {
    /// This report (of the plan ``IncrementalRun/plan``) with the outputs `incremental` took out
    /// as up to date, in the full plan's order, the sizes it does not make
    /// (``IncrementalRun/notEnlarged``) and the outputs pruned; `started` (when the
    /// up-to-date check began, before the runner started) replaces the runner's start time.
    public func merging(_ incremental: IncrementalRun, started: Date, pruned: [String] = []) -> RunReport {
        let order = Dictionary(
            incremental.plannedOutputs.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        let all = (outputs + incremental.skipped).sorted { (order[$0.output] ?? .max) < (order[$1.output] ?? .max) }
        var merged = RunReport(
            job: job, manifest: manifest, started: min(started, self.started), finished: finished, settings: settings, outputs: all)
        merged.pruned = pruned
        merged.notEnlarged = incremental.notEnlarged
        merged.unredacted = unredacted
        return merged
    }
}
