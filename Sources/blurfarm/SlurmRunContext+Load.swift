import ArgumentParser
import BlurfarmCluster
import Foundation

extension SlurmRunContext {
    /// Reads the run folder `folder` and plans its job again as its tasks plan it (with the
    /// configuration the run recorded).
    /// - Throws: ``ExitCode`` 2 (said on standard error) when the folder or the job cannot be read.
    static func load(_ folder: String) throws -> SlurmRunContext {
        let folder = FarmOptions.absolute(folder)
        let run: SlurmRun
        do {
            run = try SlurmRun.read(folder)
        } catch {
            throw ExitCode.reporting(error)
        }
        let farm = try FarmOptions.parse(run.config.map { ["--config", $0] } ?? [])
        let (configuration, registry, plans) = try loadJobs([run.manifest], farm: farm, tileOverride: nil)
        do {
            return try SlurmRunContext(
                folder: folder, run: run, configuration: configuration, plan: plans[0], registry: registry,
                stateFolder: farm.stateFolder(configuration), recipeVersions: Blurfarm.recipeVersions)
        } catch {
            throw ExitCode.reporting(error)
        }
    }
}
