import BlurfarmCoordinator
import Foundation

/// Each shard's outputs, fixed when a run was submitted (`run --split`, a Slurm run's
/// `split.json`): a shard run again runs the same outputs, even when a corrupt input was fixed
/// since (its pixels changed). A JSON list of each shard's list of output paths.
public enum ShardSplit {
    /// The split in the file at `path`, which must hold `shards` shards.
    /// - Throws: ``ClusterError/unreadableSplit(path:)`` or ``ClusterError/splitMismatch(path:shards:expected:)``
    ///   (also when `shards` is nil: a split needs `--shard I/N`).
    public static func read(_ path: String, shards: Int?) throws(ClusterError) -> [[String]] {
        guard let data = FileManager.default.contents(atPath: path),
            let split = try? JSONDecoder().decode([[String]].self, from: data)
        else { throw .unreadableSplit(path: path) }
        guard let shards, split.count == shards else {
            throw .splitMismatch(path: path, shards: split.count, expected: shards)
        }
        return split
    }

    /// The split of `plans` (one job split in shards): each shard's output paths.
    public static func of(_ plans: [JobPlan]) -> [[String]] {
        plans.map { $0.inputs.flatMap(\.outputs).map(\.path) }
    }

    /// Writes `split` to `path` atomically (as the reports are written).
    /// - Throws: ``ClusterError/cannotWrite(path:underlying:)``.
    public static func write(_ split: [[String]], to path: String) throws(ClusterError) {
        do {
            try RunReport.write(split, to: path)
        } catch {
            throw .cannotWrite(path: path, underlying: error)
        }
    }
}
