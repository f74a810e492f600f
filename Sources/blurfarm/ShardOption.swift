import ArgumentParser
import BlurfarmCluster
import BlurfarmCoordinator
import BlurfarmKernels
import BlurfarmManifest
import Foundation

/// The value of `run --shard`: a ``ShardSelector`` (`I/N`, `env`, `env/N`; docs/cluster.md).
/// A form that is wrong is a usage error (exit status 64); the numbers are checked when the run
/// resolves them (``Sharding``): a shard that does not exist, or a number too large, exits 2.
struct ShardOption: ExpressibleByArgument {
    let selector: ShardSelector

    init?(argument: String) {
        guard let selector = ShardSelector(argument) else { return nil }
        self.selector = selector
    }

    static var defaultValueDescription: String { "I/N" }
}

/// What `run --shard` changes in a run (nothing without it): the part of each plan it runs; the
/// farm then takes the shard's lock and keeps its records (``FarmJob/shard``, ``ShardRecords``).
struct Sharding {
    /// The shard run, or nil for a whole job.
    let shard: JobShard?
    /// The split fixed at submission (`--split`: each shard's outputs), or nil to split by pixels now.
    let split: [[String]]?

    /// The shard `option` names (none when nil), read from the environment where it says so;
    /// with the split in the file `splitFile` (``ShardSplit``) when given.
    /// - Throws: the ``ClusterError`` (``CommandFailure`` says it, exit status 2).
    init(_ option: ShardOption?, splitFile: String? = nil) throws {
        let shard = try option?.selector.resolve(environment: ProcessInfo.processInfo.environment)
        self.shard = shard
        split = try splitFile.map { path throws(ClusterError) in try ShardSplit.read(path, shards: shard?.count) }
    }

    /// `loaded` (``loadJobs(_:farm:tileOverride:)``'s result) with each plan cut to the shard.
    func select(
        _ loaded: (FarmConfiguration, FilterRegistry, [JobPlan])
    ) -> (FarmConfiguration, FilterRegistry, [JobPlan]) {
        guard let shard else { return loaded }
        return (loaded.0, loaded.1, loaded.2.map { plan in split.map { plan.shard(shard, split: $0) } ?? plan.shard(shard) })
    }
}
