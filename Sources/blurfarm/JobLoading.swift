import BlurfarmCoordinator
import BlurfarmKernels
import BlurfarmManifest

/// Reads the configuration and its plugins, then reads, checks and plans every job named on
/// the command line, before anything runs; an output in a format this libvips cannot write
/// (AVIF without an AV1 encoder) is an error at its `path:`. On any problem prints every diagnostic of the
/// configuration or of every job and throws the exit status for an invalid manifest. A plugin
/// that fails to load is a warning: jobs that do not use it run.
///
/// The inputs' widths that `sizes` needs are kept in each job's state folder (``InputWidths``):
/// read, and written back when `keepingWidths` (`run`; `check` only reads them).
func loadJobs(_ paths: [String], farm: FarmOptions, tileOverride: Int?, keepingWidths: Bool = false) throws
    -> (FarmConfiguration, FilterRegistry, [JobPlan])
{
    let configuration = try farm.loadOrExit()
    let registry = farm.registry(for: configuration)
    var loader = jobLoader(configuration, registry: registry, farm: farm)
    loader.inputWidths = (farm.stateFolder(configuration), keepingWidths)
    return (configuration, registry, try loader.plans(ofFilesAt: paths, tileOverride: tileOverride).get())
}

/// The loader of every job command (`check`, `run`, `serve`, `apply -o`) with the configuration
/// in force (``JobLoader/init(configuration:registry:configurationPath:)``).
func jobLoader(_ configuration: FarmConfiguration, registry: FilterRegistry, farm: FarmOptions) -> JobLoader {
    JobLoader(configuration: configuration, registry: registry, configurationPath: farm.configurationPath)
}

/// Plans `plan`'s job again over the file system as it is now, as ``loadJobs`` did (`run
/// --watch`); prints the diagnostics and returns nil when the plan is refused now (two
/// inputs that would write one output, say).
func replan(
    _ plan: JobPlan, configuration: FarmConfiguration, registry: FilterRegistry, farm: FarmOptions, tileOverride: Int?
) -> JobPlan? {
    var loader = jobLoader(configuration, registry: registry, farm: farm)
    loader.inputWidths = (farm.stateFolder(configuration), true)
    switch loader.replan(plan, tileOverride: tileOverride) {
    case .failure(let diagnostics):
        printDiagnostics(diagnostics)
        return nil
    case .success(let new):
        return new
    }
}
