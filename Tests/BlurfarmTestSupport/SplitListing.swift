import BlurfarmState

/// A run's split held whole, as the tests' oracle for the split's index
/// (`ShardSplit.read(_:shards:only:)`) and for `JobPlan.shards(listedBy:)`.
package enum SplitListing {
    /// A `listing` for `JobPlan.shards(listedBy:)` of `split` (each shard's output paths), of
    /// every shard or of `only`: each output's absolute path, its folder resolved, by its bytes.
    package static func of(_ split: [[String]], only: Int? = nil) -> (_ outputs: [String]) -> [RealPath.Identity.Bytes: [Int]] {
        let folders = RealPath.Folders()
        var listing: [RealPath.Identity.Bytes: [Int]] = [:]
        for index in only.map({ [$0] }) ?? Array(split.indices) {
            for path in split[index] { listing[.init(RealPath.resolveFolder(of: path, using: folders)), default: []].append(index) }
        }
        return { outputs in outputs.reduce(into: [:]) { found, output in found[.init(output)] = listing[.init(output)] } }
    }
}
