import ArgumentParser
import BlurfarmCore
import BlurfarmCoordinator
import BlurfarmImageIO
import BlurfarmKernels
import BlurfarmManifest

/// Reads the configuration and its plugins, then reads, checks and plans every job named on
/// the command line, before anything runs; an output in a format this libvips cannot write
/// (AVIF without an AV1 encoder) is an error at its `path:`. On any problem prints every diagnostic of the
/// configuration or of every job and throws the exit status for an invalid manifest. A plugin
/// that fails to load is a warning: jobs that do not use it run.
func loadJobs(_ paths: [String], farm: FarmOptions, tileOverride: Int?) throws
    -> (FarmConfiguration, FilterRegistry, [JobPlan])
{
    let configuration = try farm.loadOrExit()
    let registry = farm.registry(for: configuration)
    var plans: [JobPlan] = []
    var problems = Diagnostics()
    // Outputs may never overwrite these either.
    let reads = [farm.configurationPath].compactMap { $0 } + registry.descriptors.compactMap { descriptor in
        if case .plugin(let path) = descriptor.origin { path } else { nil }
    }
    for path in paths {
        switch JobDecoder.decode(fileAtPath: path, filters: registry.descriptors) {
        case .failure(let diagnostics):
            problems.append(contentsOf: diagnostics)
        case .success(let job):
            let unwritable = job.unwritableOutputs(ImageWriter.unavailability)
            if unwritable.hasErrors {
                problems.append(contentsOf: unwritable)
                continue
            }
            switch JobPlanner.plan(job, manifestPath: path, defaultTile: configuration.tile, reads: reads) {
            case .failure(let diagnostics): problems.append(contentsOf: diagnostics)
            case .success(let plan): plans.append(tileOverride.map { plan.withTileSize($0) } ?? plan)
            }
        }
    }
    if problems.hasErrors {
        printDiagnostics(problems)
        throw ExitCode(ExitStatus.invalid)
    }
    return (configuration, registry, plans)
}
