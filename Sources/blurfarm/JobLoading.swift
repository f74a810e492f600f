import BlurfarmState
import ArgumentParser
import BlurfarmCore
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
    var plans: [JobPlan] = []
    var problems = Diagnostics()
    var loader = jobLoader(configuration, registry: registry, farm: farm)
    loader.inputWidths = (farm.stateFolder(configuration), keepingWidths)
    for path in paths {
        switch loader.plan(fileAtPath: path) {
        case .failure(let diagnostics): problems.append(contentsOf: diagnostics)
        case .success(let plan): plans.append(tileOverride.map { plan.withTileSize($0) } ?? plan)
        }
    }
    if problems.hasErrors {
        throw problems
    }
    return (configuration, registry, plans)
}

/// The loader of every job command (`check`, `run`, `serve`): `configuration`, `registry`, and
/// the files every job reads besides its inputs (the configuration, the plugins' libraries),
/// which outputs may never overwrite either.
func jobLoader(_ configuration: FarmConfiguration, registry: FilterRegistry, farm: FarmOptions) -> JobLoader {
    let reads = [farm.configurationPath].compactMap { $0 } + registry.descriptors.compactMap { descriptor in
        if case .plugin(let path) = descriptor.origin { path } else { nil }
    }
    return JobLoader(configuration: configuration, registry: registry, reads: reads)
}

/// Plans `plan`'s job again over the file system as it is now, as ``loadJobs`` did (`run
/// --watch`); prints the diagnostics and returns nil when the plan is refused now (two
/// inputs that would write one output, say).
func replan(
    _ plan: JobPlan, configuration: FarmConfiguration, registry: FilterRegistry, farm: FarmOptions, tileOverride: Int?
) -> JobPlan? {
    var loader = jobLoader(configuration, registry: registry, farm: farm)
    loader.inputWidths = (farm.stateFolder(configuration), true)
    switch loader.plan(plan.job, manifestPath: plan.manifestPath) {
    case .failure(let diagnostics):
        printDiagnostics(diagnostics)
        return nil
    case .success(let new):
        return tileOverride.map { new.withTileSize($0) } ?? new
    }
}
