import BlurfarmCoordinator
import BlurfarmImageIO

extension Farm {
    /// Writes the output map of `job` to `path` after its run (``IncrementalRun/writeMap(to:plan:report:limits:confinement:control:)``):
    /// a map that cannot be written is a problem of the job, an input without a placeholder a
    /// warning.
    func writeMap(
        _ path: String, of job: FarmJob, report: RunReport, _ incremental: IncrementalRun, control: JobControl,
        _ problem: (JobProblem) -> Void
    ) {
        let configuration = settings.configuration
        do throws(IncrementalRun.MapFailure) {
            let result = try incremental.writeMap(
                to: path, plan: job.plan, report: report,
                limits: (
                    configuration.pixelLimit, configuration.memoryLimit ?? ImageReader.usableMemory,
                    configuration.decodedImages
                ),
                confinement: job.confinement, control: control)
            for (input, reason) in result.missingPlaceholders { problem(.noPlaceholder(input: input, reason)) }
        } catch {
            problem(.mapNotWritten(path: error.path, error.message))
        }
    }
}
