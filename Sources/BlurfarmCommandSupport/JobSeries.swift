import BlurfarmCoordinator
import BlurfarmFarm
import BlurfarmManifest
import BlurfarmWatch
import Foundation

/// The jobs of one `run`, each submitted to the farm in turn and waited for, once or (with a
/// ``JobWatch``) again whenever its inputs change: their failures counted, their reports kept
/// for `--report`.
public final class JobSeries {
    let farm: Farm
    /// The farm's job for the series' job at an index, planned as given (its lock, its shard,
    /// the run's options).
    let job: (Int, JobPlan) -> FarmJob
    /// Outputs that failed, over every job run so far.
    public private(set) var failures = 0
    /// Every job's report, in the order they ran.
    public private(set) var reports: [RunReport] = []

    public init(farm: Farm, job: @escaping (Int, JobPlan) -> FarmJob) {
        self.farm = farm
        self.job = job
    }

    /// Runs every job of `plans` once; with `watch`, then each again as its inputs change (planned
    /// anew by `replan`: nil for a plan refused now) until the watch's stop is requested.
    /// - Throws: ``FolderWatcher/Failure`` when a folder cannot be watched, or an input folder
    ///   went away and did not come back in time.
    public func run(_ plans: [JobPlan], watch: JobWatch?, replan: (JobPlan) -> JobPlan?) throws(FolderWatcher.Failure) {
        guard let watch else { return plans.enumerated().forEach(runJob) }
        try watch.run(plans, runJob: runJob, replan: replan)
    }

    private func runJob(_ index: Int, _ plan: JobPlan) {
        let outcome = farm.wait(farm.submit(job(index, plan)))!
        failures += outcome.failures
        reports.append(outcome.report)
        fflush(nil)  // each batch's lines now, also into a pipe or the journal
    }
}
