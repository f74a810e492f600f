import BlurfarmCoordinator

/// Which shard of a job a run takes, as `run --shard` writes it: `I/N` (shard I, from 0, of N),
/// or `env` / `env/N`, the index (and the count) from the environment a cluster engine sets
/// (docs/cluster.md): `SLURM_ARRAY_TASK_ID`, else `JOB_COMPLETION_INDEX` (a Kubernetes Indexed
/// Job); the count, when not given, from `SLURM_ARRAY_TASK_COUNT`.
///
/// Parsing checks only the form (digits, `env`, one `/`). The numbers are checked by
/// ``resolve(environment:)``, as those from the environment are: a shard that does not exist
/// (I not below N, N of 0) or a number beyond ``largest`` is refused. Any N up to ``largest`` is
/// accepted: the memory and time a shard takes do not depend on it (``JobShards``); shards
/// beyond the job's inputs are empty.
public struct ShardSelector: Sendable, Equatable {
    /// The largest index or count: the largest `Int`, 9223372036854775807.
    public static let largest = Int.max

    /// The shard's index as given (digits), or nil to read it from the environment.
    public let index: Substring?
    /// The number of shards as given (digits), or nil to read it from the environment.
    public let count: Substring?

    /// `text` in one of the forms `I/N`, `env`, `env/N`; nil in any other form.
    public init?(_ text: String) {
        func isNumber(_ text: Substring) -> Bool { !text.isEmpty && text.allSatisfy { ("0"..."9").contains($0) } }
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let first = parts.first, first == "env" || isNumber(first) else { return nil }
        index = first == "env" ? nil : first
        if parts.count == 2 {
            guard isNumber(parts[1]) else { return nil }
            count = parts[1]
        } else {
            guard index == nil else { return nil }
            count = nil
        }
    }

    /// `text` (digits) as a number.
    /// - Throws: ``ClusterError/shardNumberTooLarge(what:text:)`` naming `what` when it is beyond ``largest``.
    static func number(_ text: Substring, _ what: String) throws(ClusterError) -> Int {
        guard let value = Int(text) else { throw .shardNumberTooLarge(what: what, text: String(text)) }
        return value
    }

    /// The shard, with the index and count `environment` gives where the option does not.
    /// - Throws: ``ClusterError`` naming the variable missing or inconsistent, the number too
    ///   large, or the shard that does not exist.
    public func resolve(environment: [String: String]) throws(ClusterError) -> JobShard {
        func number(_ name: String) throws(ClusterError) -> Int? {
            guard let text = environment[name], !text.isEmpty else { return nil }
            guard let value = Int(text), value >= 0 else { throw .shardVariableNotANumber(name: name, value: text) }
            return value
        }
        let slurmIndex = try number("SLURM_ARRAY_TASK_ID")
        let kubernetesIndex = try number("JOB_COMPLETION_INDEX")
        let given = try index.map { text throws(ClusterError) in try Self.number(text, "the shard") }
        guard let index = given ?? slurmIndex ?? kubernetesIndex else { throw .shardIndexNotInEnvironment }
        var count = try self.count.map { text throws(ClusterError) in try Self.number(text, "the number of shards") }
        if count == nil {
            guard slurmIndex != nil, let tasks = try number("SLURM_ARRAY_TASK_COUNT") else {
                throw .shardCountNotInEnvironment
            }
            // A partial array (some tasks resubmitted) counts only its own tasks.
            let first = try number("SLURM_ARRAY_TASK_MIN") ?? 0, last = try number("SLURM_ARRAY_TASK_MAX") ?? (tasks - 1)
            guard first == 0, last == tasks - 1 else { throw .partialArray }
            count = tasks
        }
        guard let count, count > 0 else { throw .noShards }
        guard let shard = JobShard(index: index, count: count) else { throw .noSuchShard(index: index, count: count) }
        return shard
    }
}
