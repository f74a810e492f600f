import BlurfarmCore
import BlurfarmCoordinator
import BlurfarmKernels
import BlurfarmManifest

/// Reads, checks and plans every job named on the command line, before anything runs.
/// Returns the plans, or prints every problem of every job and returns nil.
func loadJobs(_ paths: [String], configuration: FarmConfiguration, registry: FilterRegistry, tileOverride: Int?)
    -> [JobPlan]?
{
    var plans: [JobPlan] = []
    var problems = Diagnostics()
    for path in paths {
        switch JobDecoder.decode(fileAtPath: path, filters: registry.descriptors) {
        case .failure(let diagnostics):
            problems.append(contentsOf: diagnostics)
        case .success(let job):
            switch JobPlanner.plan(job, manifestPath: path, defaultTile: configuration.tile) {
            case .failure(let diagnostics): problems.append(contentsOf: diagnostics)
            case .success(let plan): plans.append(tileOverride.map { plan.withTileSize($0) } ?? plan)
            }
        }
    }
    if problems.hasErrors {
        printDiagnostics(problems)
        return nil
    }
    return plans
}
