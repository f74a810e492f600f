import BlurfarmCoordinator
import BlurfarmKernels
import BlurfarmManifest

/// Reads the configuration and its plugins, then reads, checks and plans every job named on
/// the command line, before anything runs; an output in a format this libvips cannot write
/// (AVIF without an AV1 encoder) is an error at its `path:`. On any problem prints every diagnostic of the
/// configuration or of every job and throws the exit status for an invalid manifest. A plugin
/// that fails to load is a warning: jobs that do not use it run.
///
/// The inputs' sizes that `sizes` and a shard's split need are kept in each job's records
/// (``InputSizes``): read here, and kept by the run, under its lock (`check` only reads them). Returns the
/// loader too (its configuration and registry), which plans a job again (`run --watch`).
/// `map` (`run --map`) is the job's output map in place of its manifest's; `admission`, the
/// command line's limits, in place of the configuration's (the loader's configuration has them);
/// `beforePlanning` runs before any job is planned (`run`'s locks); `runFiles` are refused where jobs read or write.
func loadJobs(
    _ paths: [String], farm: FarmOptions, admission: AdmissionOptions? = nil, tileOverride: Int?, map: String? = nil,
    runFiles: [JobPlanner.RunFile] = [], beforePlanning: (JobLoader, _ jobs: [(name: String, manifestPath: String)]) throws -> Void = { _, _ in }
)
    throws -> (JobLoader, [JobPlan])
{
    // The command line's limits before anything is planned (`--max-outputs` refuses a plan).
    let loaded = try farm.loadOrExit()
    let configuration = admission?.applied(to: loaded) ?? loaded
    let registry = farm.registry(for: configuration)
    var loader = JobLoader(configuration: configuration, registry: registry, configurationPath: farm.configurationPath)
    loader.inputSizes = farm.stateFolder(configuration)
    loader.planFolder = loader.inputSizes
    loader.runFiles = runFiles
    return (loader, try loader.plans(ofFilesAt: paths, tileOverride: tileOverride, map: map) { try beforePlanning(loader, $0) }.get())
}
