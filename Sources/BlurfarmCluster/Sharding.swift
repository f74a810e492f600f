import BlurfarmCoordinator

/// What `run --shard` changes in a run (nothing without it): the part of each plan it runs; the
/// farm then takes the shard's lock and keeps its records (`FarmJob.shard`, ``ShardRecords``).
public struct Sharding: Sendable {
    /// The shard run, or nil for a whole job.
    public let shard: JobShard?
    /// The split fixed at submission (`--split`: this shard's outputs), or nil to split by pixels now.
    public let split: ShardSplit.Index?

    /// The shard `selector` names (none when nil), read from `environment` where it says so;
    /// with the split in the file `splitFile` (``ShardSplit``) when given.
    /// - Throws: the ``ClusterError`` when the shard or the split cannot be read.
    public init(_ selector: ShardSelector?, splitFile: String? = nil, environment: [String: String]) throws(ClusterError) {
        let shard = try selector?.resolve(environment: environment)
        self.shard = shard
        split = try splitFile.map { path throws(ClusterError) in try ShardSplit.read(path, shards: shard?.count, only: shard?.index) }
    }

    /// `plans` each cut to the shard (all of each without one).
    /// - Throws: ``ClusterError/state(_:)`` when the split's index cannot be read.
    public func select(_ plans: [JobPlan]) throws(ClusterError) -> [JobPlan] {
        guard let shard else { return plans }
        return try plans.map { plan throws(ClusterError) in
            try split.map { split throws(ClusterError) in try plan.shard(shard, listedBy: split.shards(listing:)) } ?? plan.shard(shard)
        }
    }
}
