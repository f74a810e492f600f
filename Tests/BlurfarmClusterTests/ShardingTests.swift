import BlurfarmCluster
import Testing

/// What `run --shard` changes (``Sharding``), by value.
@Suite struct ShardingTests {
    @Test func noSelectorIsTheWholeJob() throws {
        let sharding = try Sharding(nil, environment: [:])
        #expect(sharding.shard == nil && sharding.split == nil)
        #expect(sharding.select([]).isEmpty)
    }

    @Test func envTakesTheShardFromSlurm() throws {
        let sharding = try Sharding(
            ShardSelector("env"), environment: ["SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "4"])
        #expect(sharding.shard.map { "\($0.index)/\($0.count)" } == "1/4")
    }

    @Test func aMissingSplitFileIsAClusterError() {
        #expect(throws: ClusterError.self) {
            try Sharding(ShardSelector("0/2"), splitFile: "/nonexistent/split.json", environment: [:])
        }
    }
}

/// Which cluster errors are about what was asked (``ClusterError/isInvalidRequest``: exit status 2).
@Suite struct ClusterErrorKindTests {
    @Test func aRunFolderThatIsNoneIsTheRequestASlurmStillRunningIsNot() {
        #expect(ClusterError.notARunFolder(folder: "/x").isInvalidRequest)
        #expect(!ClusterError.stillRunning(folder: "/x", shards: [1]).isInvalidRequest)
        #expect(!ClusterError.toolMissing(tool: "sbatch", said: "").isInvalidRequest)
    }
}
