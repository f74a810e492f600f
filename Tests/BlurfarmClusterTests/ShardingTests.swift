@testable import BlurfarmCluster
import Foundation
import Testing

/// What `run --shard` changes (``Sharding``), by value.
@Suite struct ShardingTests {
    @Test func noSelectorIsTheWholeJob() throws {
        let sharding = try Sharding(nil, environment: [:])
        #expect(sharding.shard == nil && sharding.split == nil)
        #expect(try sharding.select([]).isEmpty)
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

/// What `slurm resume` says of a submission (``SlurmRun/Submission/resubmitted(of:)``) and what
/// `slurm finish` says of outputs not done.
@Suite struct SlurmTextTests {
    @Test func aResubmissionNamesItsShardsAndJobs() {
        let one = SlurmRun.Submission(array: "12", finisher: "13", shards: [2], submitted: .now)
        #expect(one.resubmitted(of: 4) == "resubmitted shard 2 of 4: array job 12, finisher job 13")
        let two = SlurmRun.Submission(array: "12", finisher: "13", shards: [1, 3], submitted: .now)
        #expect(two.resubmitted(of: 4) == "resubmitted shards 1, 3 of 4: array job 12, finisher job 13")
    }
}
