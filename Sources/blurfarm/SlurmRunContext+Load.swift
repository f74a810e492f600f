import ArgumentParser
import BlurfarmCluster
import Foundation

extension SlurmRunContext {
    /// Reads the run folder `folder` and plans its job again as its tasks plan it (with the
    /// configuration the run recorded).
    /// - Throws: the ``ClusterError`` or the job's problem (``CommandFailure`` says it) when the folder or the job cannot be read.
    static func load(_ folder: String) throws -> SlurmRunContext {
        let folder = FarmOptions.absolute(folder)
        let run = try SlurmRun.read(folder)
        let farm = try FarmOptions.parse(run.config.map { ["--config", $0] } ?? [])
        let (configuration, registry, plans) = try loadJobs([run.manifest], farm: farm, tileOverride: nil)
        return try SlurmRunContext(
            folder: folder, run: run, configuration: configuration, plan: plans[0], registry: registry,
            stateFolder: farm.stateFolder(configuration), recipeVersions: Blurfarm.recipeVersions)
    }
}
