import BlurfarmCore
import BlurfarmKernels
import BlurfarmState

extension FilterRegistry {
    /// The plugin filters among `specs`, by name, each once, sorted.
    public func plugins(in specs: [FilterSpec]) -> [String] {
        Set(specs.map(\.name).filter { descriptor(named: $0)?.isPlugin == true }).sorted()
    }

    /// The plugin filters the jobs `plans` use, by name, each once, sorted.
    public func plugins(usedBy plans: [JobPlan]) -> [String] {
        plugins(in: plans.flatMap { $0.job.outputs.flatMap(\.filters) })
    }

    /// The content hash of each plugin filter's library the jobs `plans` use, by filter name:
    /// part of their outputs' recipe (a rebuilt plugin makes them run again). Plugins whose
    /// library cannot be read are left out.
    public func pluginHashes(of plans: [JobPlan]) -> [String: String] {
        var hashes: [String: String] = [:]
        for name in plugins(usedBy: plans) {
            if case .plugin(let path) = descriptor(named: name)?.origin, let hash = try? ContentHash.ofFile(path) {
                hashes[name] = hash
            }
        }
        return hashes
    }
}
