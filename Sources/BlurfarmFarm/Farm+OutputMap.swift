import BlurfarmCoordinator
import BlurfarmImageIO
import BlurfarmState

extension Farm {
    /// Writes the output map of `job` to `path` after its run, which wrote or found up to date
    /// the outputs `published`, and wrote, failed or pruned outputs when `changedOutputs`
    /// (``IncrementalRun/writeMap(to:plan:published:changedOutputs:limits:confinement:control:)``):
    /// a map that cannot be written is a problem of the job, an input without a placeholder a
    /// warning.
    func writeMap(
        _ path: String, of job: FarmJob, published: PublishedOutputs, changedOutputs: Bool, _ incremental: IncrementalRun,
        control: JobControl, _ problem: (JobProblem) -> Void
    ) {
        let configuration = settings.configuration
        do throws(IncrementalRun.MapFailure) {
            let result = try incremental.writeMap(
                to: path, plan: job.plan, published: published, changedOutputs: changedOutputs,
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
