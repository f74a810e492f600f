import BlurfarmCluster
import BlurfarmCoordinator
import Testing

/// `--shard` as written and as resolved against the environment a cluster engine sets: the
/// shard, or the error naming what is wrong (the messages `run --shard` prints).
@Suite struct ShardSelectorTests {
    @Test(arguments: ["", "1", "1/", "/2", "a/2", "env/", "env/x", "1/2/3", "-1/2", "1/+2", "envx"])
    func aWrongFormIsNotASelector(_ text: String) {
        #expect(ShardSelector(text) == nil)
    }

    @Test func givenNumbersNeedNoEnvironment() throws {
        #expect(try ShardSelector("2/4")!.resolve(environment: [:]) == JobShard(index: 2, count: 4))
        #expect(try ShardSelector("0/1")!.resolve(environment: ["SLURM_ARRAY_TASK_ID": "5"]) == JobShard(index: 0, count: 1))
    }

    @Test func envTakesSlurmsIndexThenKubernetesAndSlurmsCount() throws {
        let slurm = ["SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "8", "JOB_COMPLETION_INDEX": "1"]
        #expect(try ShardSelector("env")!.resolve(environment: slurm) == JobShard(index: 3, count: 8))
        #expect(try ShardSelector("env/2")!.resolve(environment: ["JOB_COMPLETION_INDEX": "1"]) == JobShard(index: 1, count: 2))
    }

    @Test(arguments: [
        ("4/4", [:], "--shard: shard 4 of 4 does not exist (0 to N-1)"),
        ("0/0", [:], "--shard: the number of shards is 0: it must be at least 1"),
        ("99999999999999999999/2", [:], "--shard: the shard 99999999999999999999 is too large (at most 9223372036854775807)"),
        ("env", [:], "--shard env: neither SLURM_ARRAY_TASK_ID nor JOB_COMPLETION_INDEX is set"),
        ("env", ["JOB_COMPLETION_INDEX": "1"], "--shard env: SLURM_ARRAY_TASK_COUNT is not set: give the number of shards, --shard env/N"),
        ("env", ["SLURM_ARRAY_TASK_ID": "x"], "--shard: SLURM_ARRAY_TASK_ID=x is not a number from 0 to 9223372036854775807"),
        (
            "env", ["SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "2", "SLURM_ARRAY_TASK_MIN": "2", "SLURM_ARRAY_TASK_MAX": "3"],
            "--shard env: the array's tasks are not 0 to SLURM_ARRAY_TASK_COUNT-1: give the number of shards, --shard env/N"
        ),
    ] as [(String, [String: String], String)])
    func aShardThatCannotBeResolvedSaysWhy(_ text: String, _ environment: [String: String], _ message: String) {
        let error = #expect(throws: ClusterError.self) { try ShardSelector(text)!.resolve(environment: environment) }
        #expect(error?.description == message)
    }
}
