import BlurfarmState
import BlurfarmCoordinator
import BlurfarmCore
import BlurfarmSystem

/// Why a cluster operation failed: a shard that cannot be resolved, a run folder that cannot be
/// read or written, a Slurm client that failed. Each case carries what its message names; the
/// message is ``description`` (one line, the file or tool first). Which exit status a failure
/// ends a command with is the command's business, not this module's.
public enum ClusterError: Error, CustomStringConvertible {
    /// `--shard`: a number (`what`: "the shard", "the number of shards") beyond ``ShardSelector/largest``.
    case shardNumberTooLarge(what: String, text: String)
    /// `--shard env`: the environment variable `name` holds `value`, not a number from 0.
    case shardVariableNotANumber(name: String, value: String)
    /// `--shard env`: neither `SLURM_ARRAY_TASK_ID` nor `JOB_COMPLETION_INDEX` is set.
    case shardIndexNotInEnvironment
    /// `--shard env`: no count given and `SLURM_ARRAY_TASK_COUNT` is not set.
    case shardCountNotInEnvironment
    /// `--shard env`: the array's tasks are not 0 to `SLURM_ARRAY_TASK_COUNT`-1 (a partial array).
    case partialArray
    /// `--shard I/0`.
    case noShards
    /// `--shard I/N` with I not below N.
    case noSuchShard(index: Int, count: Int)
    /// The split file at `path` is not a JSON list of lists of outputs.
    case unreadableSplit(path: String)
    /// The split file at `path` holds `shards` shards, not `expected` (nil: no `--shard` given).
    case splitMismatch(path: String, shards: Int, expected: Int?)
    /// `folder` holds no readable `run.json`.
    case notARunFolder(folder: String)
    /// The run description at `path` cannot be decoded.
    case unreadableRun(path: String, underlying: any Error)
    /// The file at `path` cannot be written (`underlying`: why, when known).
    case cannotWrite(path: String, underlying: (any Error)?)
    /// The merged report cannot be written to `path`.
    case cannotWriteReport(path: String, underlying: any Error)
    /// The state folder refused something (a lock, the records, a folder).
    case state(StateError)
    /// A Slurm client (`sbatch`, `scontrol`) cannot be started.
    case toolCannotStart(tool: String, underlying: any Error)
    /// A Slurm client is not installed (`env` exited 127); `said` is its standard error.
    case toolMissing(tool: String, said: String)
    /// A Slurm client exited with `status`; `said` is its standard error, trimmed.
    case toolFailed(tool: String, status: Int32, said: String)
    /// `sbatch --parsable` answered `answer`, which is not a job id.
    case notAJobID(answer: String)
    /// The finisher was refused (`error`) after the shards were submitted as array job `array`.
    indirect case finisherRefused(ClusterError, array: String, folder: String)
    /// `resume` while shards `shards` (none: the finisher) of the run in `folder` are pending or running.
    case stillRunning(folder: String, shards: [Int])

    public var description: String {
        switch self {
        case .shardNumberTooLarge(let what, let text):
            "--shard: \(what) \(ShownName.of(text)) is too large (at most \(ShardSelector.largest))"
        case .shardVariableNotANumber(let name, let value):
            "--shard: \(name)=\(ShownName.of(value)) is not a number from 0 to \(ShardSelector.largest)"
        case .shardIndexNotInEnvironment: "--shard env: neither SLURM_ARRAY_TASK_ID nor JOB_COMPLETION_INDEX is set"
        case .shardCountNotInEnvironment:
            "--shard env: SLURM_ARRAY_TASK_COUNT is not set: give the number of shards, --shard env/N"
        case .partialArray:
            "--shard env: the array's tasks are not 0 to SLURM_ARRAY_TASK_COUNT-1: give the number of shards, --shard env/N"
        case .noShards: "--shard: the number of shards is 0: it must be at least 1"
        case .noSuchShard(let index, let count): "--shard: shard \(index) of \(count) does not exist (0 to N-1)"
        case .unreadableSplit(let path): "\(path): cannot be read as a split (a JSON list of each shard's outputs)"
        case .splitMismatch(let path, let shards, let expected):
            "\(path): the split has \(shards) shards, not \(expected ?? 0) (--shard I/N)"
        case .notARunFolder(let folder):
            "\(folder): not the run folder of a 'blurfarm slurm submit' (no readable \(SlurmRun.fileName))"
        case .unreadableRun(let path, let underlying): "\(path): cannot be read: \(underlying)"
        case .cannotWrite(let path, let underlying?): "\(path): cannot write: \(underlying.localizedDescription)"
        case .cannotWrite(let path, nil): "\(path): cannot write"
        case .cannotWriteReport(let path, let underlying):
            "\(path): cannot write the report: \(underlying.localizedDescription)"
        case .state(let error): "\(error)"
        case .toolCannotStart(let tool, let underlying): "cannot start \(tool): \(underlying.localizedDescription)"
        case .toolMissing(let tool, let said): "\(tool) is not installed here (this must run on a Slurm submit host): \(said)"
        case .toolFailed(let tool, let status, let said): "\(tool) failed (status \(status)): \(said.isEmpty ? "no message" : said)"
        case .notAJobID(let answer): "sbatch answered '\(answer)', not a job id"
        case .finisherRefused(let error, let array, let folder):
            "\(error); the shards run as array job \(array): finish with 'blurfarm slurm finish \(folder)'"
        case .stillRunning(let folder, let shards):
            "\(folder): \(shards.isEmpty ? "the finisher" : "shards \(shards.map(String.init).joined(separator: ", "))") "
                + "still pending or running: wait for them ('blurfarm slurm status --wait') or cancel them (scancel)"
        }
    }
}

extension ClusterError {
    /// Whether what was asked cannot be read or does not exist (the shard, the split, the run
    /// folder: an invalid request, exit status 2), rather than Slurm or the state folder refusing.
    public var isInvalidRequest: Bool {
        switch self {
        case .shardNumberTooLarge, .shardVariableNotANumber, .shardIndexNotInEnvironment, .shardCountNotInEnvironment,
            .partialArray, .noShards, .noSuchShard, .unreadableSplit, .splitMismatch, .notARunFolder, .unreadableRun:
            true
        case .cannotWrite, .cannotWriteReport, .state, .toolCannotStart, .toolMissing, .toolFailed, .notAJobID,
            .finisherRefused, .stillRunning:
            false
        }
    }
}
