import BlurfarmCoordinator
import BlurfarmCore
import BlurfarmKernels
import BlurfarmManifest
import BlurfarmState

extension JobLoader {
    /// The loader of every job command (`check`, `run`, `serve`, `apply -o`): `configuration`,
    /// `registry`, and the files every job reads besides its inputs (the configuration file at
    /// `configurationPath`, the plugins' libraries), which outputs may never overwrite either.
    public init(configuration: FarmConfiguration, registry: FilterRegistry, configurationPath: String?) {
        let reads = [configurationPath].compactMap { $0 } + registry.descriptors.compactMap { descriptor in
            if case .plugin(let path) = descriptor.origin { path } else { nil }
        }
        self.init(configuration: configuration, registry: registry, reads: reads)
    }

    /// Reads, checks and plans the job of every manifest of `paths`, each with the tile side
    /// `tileOverride` when given, and its output map at `map` (relative to the working folder:
    /// `run --map`) in place of its manifest's `map:` when given (planned as the manifest's
    /// is: never an input, never a file the job reads); every diagnostic of every job when one
    /// has an error. Once every manifest is read and valid, and before any is planned (its
    /// inputs walked), `beforePlanning` is handed each job's name and manifest's path: `run`
    /// takes their locks there, and finds another run's at once, whatever the library's size.
    public func plans(
        ofFilesAt paths: [String], tileOverride: Int?, map: String? = nil,
        beforePlanning: (_ jobs: [(name: String, manifestPath: String)]) throws -> Void = { _ in }
    ) rethrows -> Result<[JobPlan], Diagnostics> {
        var plans: [JobPlan] = []
        var problems = Diagnostics()
        let decoded = paths.map { path in
            JobDecoder.decode(fileAtPath: path, filters: registry.descriptors).map { job in
                guard let map else { return job }
                var overridden = job
                (overridden.map, overridden.mapLocation) = (RealPath.absolute(map), nil)
                return overridden
            }
        }
        let jobs = zip(decoded, paths).compactMap { job, path in (try? job.get()).map { ($0.name, path) } }
        if jobs.count == paths.count { try beforePlanning(jobs) }
        for (job, path) in zip(decoded, paths) {
            switch job.flatMap({ plan($0, manifestPath: path) }) {
            case .failure(let diagnostics): problems.append(contentsOf: diagnostics)
            case .success(let plan): plans.append(tileOverride.map { plan.withTileSize($0) } ?? plan)
            }
        }
        return problems.hasErrors ? .failure(problems) : .success(plans)
    }

    /// `plan`'s job planned again over the file system as it is now (`run --watch`), with the
    /// tile side `tileOverride` when given; its diagnostics when it is refused now (two inputs
    /// that would write one output, say).
    public func replan(_ plan: JobPlan, tileOverride: Int?) -> Result<JobPlan, Diagnostics> {
        self.plan(plan.job, manifestPath: plan.manifestPath).map { new in tileOverride.map { new.withTileSize($0) } ?? new }
    }
}
