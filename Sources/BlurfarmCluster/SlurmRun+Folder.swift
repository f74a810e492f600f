import BlurfarmState
import BlurfarmCoordinator
import Foundation

extension SlurmRun {
    /// A new run folder in the job's state folder `job`, `slurm/<UTC time>-<pid>`, with its
    /// `reports` and `logs` folders; its path.
    /// - Throws: ``ClusterError/state(_:)`` when a folder cannot be made.
    public static func makeFolder(in job: JobStateFolder) throws(ClusterError) -> String {
        let folder = (job.path as NSString).appendingPathComponent(
            "slurm/\(Date().stateFolderStamp)-\(ProcessInfo.processInfo.processIdentifier)")
        do throws(StateError) {
            for sub in ["reports", "logs"] { try JobStateFolder.makeFolder((folder as NSString).appendingPathComponent(sub)) }
        } catch {
            throw .state(error)
        }
        return folder
    }

    /// Writes what the tasks read in the new run folder `folder`: the split (each shard's
    /// outputs: `plan`'s inputs, each in the shard `assigned` gives it), the batch scripts and
    /// this description.
    /// - Throws: ``ClusterError/cannotWrite(path:underlying:)`` naming the file.
    public func prepare(in folder: String, plan: JobPlan, assigned: [Int]) throws(ClusterError) {
        let split = (folder as NSString).appendingPathComponent(Self.splitName)
        try ShardSplit.write(plan, assigned: assigned, shards: shards, to: split)
        try writeScripts(in: folder)
        try write(in: folder)
    }

    /// Writes `shard.sh` (one array task: `blurfarm run JOB --shard $SLURM_ARRAY_TASK_ID/N`,
    /// its report in `reports/`, its arguments appended) and `finish.sh` in `folder`.
    private func writeScripts(in folder: String) throws(ClusterError) {
        let q = SlurmClient.quoted
        let config = self.config.map { " --config \(q($0))" } ?? ""
        let reports = (folder as NSString).appendingPathComponent("reports")
        let scripts = [
            "shard.sh": """
                #!/bin/sh
                # One shard of job '\(job)' (blurfarm slurm submit): array task I runs shard I of \(shards).
                exec \(q(executable)) run \(q(manifest))\(config) --shard "$SLURM_ARRAY_TASK_ID/\(shards)" \\
                  --split \(q(folder + "/" + Self.splitName)) --report \(q(reports + "/shard-"))"$SLURM_ARRAY_TASK_ID-$SLURM_JOB_ID".json "$@"

                """,
            "finish.sh": """
                #!/bin/sh
                # The finisher of job '\(job)' (blurfarm slurm submit): after every shard, however it ended.
                exec \(q(executable)) slurm finish \(q(folder))

                """,
        ]
        for (name, text) in scripts {
            let path = (folder as NSString).appendingPathComponent(name)
            guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o755])
            else { throw .cannotWrite(path: path, underlying: nil) }
        }
    }
}
