import ArgumentParser
import BlurfarmCoordinator
import BlurfarmCore
import BlurfarmKernels
import BlurfarmManifest
import Foundation

/// The value of `run --shard`: `I/N` (shard I, from 0, of N), or `env` / `env/N`, the index
/// (and the count) from the environment a cluster engine sets (docs/cluster.md):
/// `SLURM_ARRAY_TASK_ID`, else `JOB_COMPLETION_INDEX` (a Kubernetes Indexed Job); the count,
/// when not given, from `SLURM_ARRAY_TASK_COUNT`.
///
/// Parsing checks only the form (digits, `env`, one `/`): a form that is wrong is a usage error
/// (exit status 64). The numbers are checked by ``resolve(environment:)``, as those from the
/// environment are: a shard that does not exist (I not below N, N of 0) or a number beyond
/// ``largest`` is refused with exit status 2. Any N up to ``largest`` is accepted: the memory
/// and time a shard takes do not depend on it (``JobShards``); shards beyond the job's inputs are empty.
struct ShardOption: ExpressibleByArgument {
    /// The largest index or count: the largest `Int`, 9223372036854775807.
    static let largest = Int.max

    /// The shard's index as given (digits), or nil to read it from the environment.
    let index: Substring?
    /// The number of shards as given (digits), or nil to read it from the environment.
    let count: Substring?

    init?(argument: String) {
        func isNumber(_ text: Substring) -> Bool { !text.isEmpty && text.allSatisfy { ("0"..."9").contains($0) } }
        let parts = argument.split(separator: "/", omittingEmptySubsequences: false)
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

    static var defaultValueDescription: String { "I/N" }

    /// `text` (digits) as a number, or a ``CommandError`` (exit status 2) saying that `what` is
    /// too large.
    static func number(_ text: Substring, _ what: String) throws(CommandError) -> Int {
        guard let value = Int(text) else {
            throw CommandError(
                "--shard: \(what) \(ShownName.of(String(text))) is too large (at most \(largest))", exitCode: ExitStatus.invalid)
        }
        return value
    }

    /// The shard, with the index and count the environment gives where the option does not.
    /// - Throws: ``CommandError`` (exit status 2) naming the variable missing or inconsistent,
    ///   the number too large, or the shard that does not exist.
    func resolve(environment: [String: String]) throws(CommandError) -> JobShard {
        func number(_ name: String) throws(CommandError) -> Int? {
            guard let text = environment[name], !text.isEmpty else { return nil }
            guard let value = Int(text), value >= 0 else {
                throw CommandError(
                    "--shard: \(name)=\(ShownName.of(text)) is not a number from 0 to \(Self.largest)", exitCode: ExitStatus.invalid)
            }
            return value
        }
        let slurmIndex = try number("SLURM_ARRAY_TASK_ID")
        let kubernetesIndex = try number("JOB_COMPLETION_INDEX")
        let given = try index.map { text throws(CommandError) in try Self.number(text, "the shard") }
        guard let index = given ?? slurmIndex ?? kubernetesIndex else {
            throw CommandError(
                "--shard env: neither SLURM_ARRAY_TASK_ID nor JOB_COMPLETION_INDEX is set", exitCode: ExitStatus.invalid)
        }
        var count = try self.count.map { text throws(CommandError) in try Self.number(text, "the number of shards") }
        if count == nil {
            guard slurmIndex != nil, let tasks = try number("SLURM_ARRAY_TASK_COUNT") else {
                throw CommandError(
                    "--shard env: SLURM_ARRAY_TASK_COUNT is not set: give the number of shards, --shard env/N",
                    exitCode: ExitStatus.invalid)
            }
            // A partial array (some tasks resubmitted) counts only its own tasks.
            let first = try number("SLURM_ARRAY_TASK_MIN") ?? 0, last = try number("SLURM_ARRAY_TASK_MAX") ?? (tasks - 1)
            guard first == 0, last == tasks - 1 else {
                throw CommandError(
                    "--shard env: the array's tasks are not 0 to SLURM_ARRAY_TASK_COUNT-1: "
                        + "give the number of shards, --shard env/N", exitCode: ExitStatus.invalid)
            }
            count = tasks
        }
        guard let count, count > 0 else {
            throw CommandError("--shard: the number of shards is 0: it must be at least 1", exitCode: ExitStatus.invalid)
        }
        guard let shard = JobShard(index: index, count: count) else {
            throw CommandError("--shard: shard \(index) of \(count) does not exist (0 to N-1)", exitCode: ExitStatus.invalid)
        }
        return shard
    }
}

/// What `run --shard` changes in a run (nothing without it): the part of each plan it runs; the
/// farm then takes the shard's lock and keeps its records (``FarmJob/shard``, ``ShardRecords``).
struct Sharding {
    /// The shard run, or nil for a whole job.
    let shard: JobShard?
    /// The split fixed at submission (`--split`: each shard's outputs), or nil to split by pixels now.
    let split: [[String]]?

    /// The shard `option` names (none when nil), read from the environment where it says so;
    /// with the split in the file `splitFile` (a JSON list of each shard's outputs) when given.
    /// - Throws: ``ExitCode`` 2 after saying why on standard error.
    init(_ option: ShardOption?, splitFile: String? = nil) throws {
        do throws(CommandError) {
            let shard = try option?.resolve(environment: ProcessInfo.processInfo.environment)
            self.shard = shard
            split = try splitFile.map { path throws(CommandError) in try Self.readSplit(path, shards: shard?.count) }
        } catch {
            printError(error.message)
            throw ExitCode(error.exitCode)
        }
    }

    /// The split in the file at `path`: a JSON list of `shards` lists of output paths.
    static func readSplit(_ path: String, shards: Int?) throws(CommandError) -> [[String]] {
        guard let data = FileManager.default.contents(atPath: path),
            let split = try? JSONDecoder().decode([[String]].self, from: data)
        else {
            throw CommandError("\(path): cannot be read as a split (a JSON list of each shard's outputs)", exitCode: ExitStatus.invalid)
        }
        guard let shards, split.count == shards else {
            throw CommandError("\(path): the split has \(split.count) shards, not \(shards ?? 0) (--shard I/N)", exitCode: ExitStatus.invalid)
        }
        return split
    }

    /// `loaded` (``loadJobs(_:farm:tileOverride:)``'s result) with each plan cut to the shard.
    func select(
        _ loaded: (FarmConfiguration, FilterRegistry, [JobPlan])
    ) -> (FarmConfiguration, FilterRegistry, [JobPlan]) {
        guard let shard else { return loaded }
        return (loaded.0, loaded.1, loaded.2.map { plan in split.map { plan.shard(shard, split: $0) } ?? plan.shard(shard) })
    }
}
