@testable import BlurfarmCluster
import Testing

/// What `slurm status` prints, from a run's status (``SlurmRunContext/Status``).
@Suite struct SlurmStatusTextTests {
    @Test func eachShardWithItsStateOutputsAndFailuresThenTheFinisher() {
        let status = SlurmRunContext.Status(
            shards: [
                .init(index: 0, slurm: .forgotten, done: 3, total: 3, failures: []),
                .init(
                    index: 1, slurm: .notSubmitted, done: 1, total: 2,
                    failures: [(input: "in/b\tc.jpg", output: "out/b.jpg", error: "failed earlier: corrupt")]),
            ],
            finisher: (job: "77", state: nil))
        #expect(!status.isDone)
        #expect(
            status.text(job: "web", shards: 2, folder: "/state/slurm/1") == """
                job 'web': 2 shards, 4/5 outputs done; run folder /state/slurm/1
                shard 0: ended (no longer known to Slurm), 3/3 outputs done
                shard 1: not submitted, 1/2 outputs done
                  failed: in/b\\tc.jpg -> out/b.jpg: failed earlier: corrupt
                finisher (job 77): ended (no longer known to Slurm)
                """)
    }
}
