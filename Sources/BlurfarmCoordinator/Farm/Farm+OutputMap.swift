import BlurfarmImageIO

extension Farm {
    /// Writes the output map of `job` to `path` after its run (``IncrementalRun/writeMap(to:plan:report:pixelLimit:memoryLimit:confinement:)``):
    /// a map that cannot be written is a problem of the job, an input without a placeholder a
    /// warning.
    func writeMap(
        _ path: String, of job: FarmJob, report: RunReport, _ incremental: IncrementalRun,
        _ problem: (JobProblem) -> Void
    ) {
        let configuration = settings.configuration
        do throws(IncrementalRun.MapFailure) {
            let result = try incremental.writeMap(
                to: path, plan: job.plan, report: report, pixelLimit: configuration.pixelLimit,
                memoryLimit: configuration.memoryLimit ?? ImageReader.usableMemory, confinement: job.confinement)
            for (input, reason) in result.missingPlaceholders { problem(.noPlaceholder(input: input, reason)) }
        } catch {
            problem(.mapNotWritten(path: error.path, error.message))
        }
    }
}
