import BlurfarmCoordinator
import BlurfarmPlugins
import BlurfarmState
import BlurfarmCore
import BlurfarmEngine
import BlurfarmImageIO
import BlurfarmSystem

/// What a ``Farm`` tells as it works (``Farm/events()``, ``Farm/onEvent(_:)``).
public enum FarmEvent: Sendable {
    /// The job was accepted: `outputs` to render, `upToDate` skipped, of `inputs` inputs.
    case jobAccepted(FarmJobID, job: String, outputs: Int, upToDate: Int, inputs: Int)
    /// An output's tiles are about to go out (its input decoded).
    case outputStarted(FarmJobID, output: String, tiles: Int)
    /// Tiles of an output done so far.
    case tilesDone(FarmJobID, output: String, done: Int, total: Int)
    /// An output is done: written, failed, stopped or cancelled (its report says which).
    case outputFinished(FarmJobID, OutputReport)
    /// `count` outputs of the job not started, one after another of its batches, because it
    /// ended (`status`: stopped or cancelled) before they began: counted, not told one by one
    /// (a first run of a million photos stopped 16 s in told about 2,970,000 of them, for half
    /// a minute).
    case outputsNotStarted(FarmJobID, OutputReport.Status, count: Int)
    /// A batch of the job's inputs is done (``IncrementalRun/reportBatch`` of them, in plan
    /// order): every output of its inputs was finished, told before this. No input of the
    /// batch comes again, so a count of the inputs done holds no more than a batch's
    /// (`run`'s progress line). A job without records (`apply -o`) is not made in batches, and
    /// tells none.
    case batchFinished(FarmJobID)
    /// Something went wrong in the job beside its outputs, or is worth a warning.
    case problem(FarmJobID, JobProblem)
    /// `--prune` removed this output (or this folder, when `folder`).
    case pruned(FarmJobID, path: String, folder: Bool)
    /// A worker process started (`pid`); after a ``workerLost(id:pid:reason:)``, its replacement.
    case workerStarted(id: UInt32, pid: Int32)
    /// A worker process was lost (it died, hung, or broke the protocol) and killed.
    case workerLost(id: UInt32, pid: Int32, reason: String)
    /// The job is done.
    case jobFinished(FarmJobID, JobOutcome)
}

/// A problem of a job that is not one output's (those are in ``OutputReport/failure``).
public enum JobProblem: Sendable, CustomStringConvertible {
    /// An input the plan refused (a name that cannot be an output, an output over an input).
    case inputRefused(manifest: String, String)
    /// Input globs that matched nothing: warnings, or errors when no glob matched.
    case unmatchedGlobs(Diagnostics)
    /// The job's state folder (records, lock) failed.
    case state(StateError)
    /// Another run holds the job's lock (without ``FarmJob/waitForLock``).
    case locked(job: String, holder: Int32?, lock: String)
    /// An input could not be decoded: its outputs failed (reported once per input).
    case inputFailed(FailedInput)
    /// An output was written but its record could not be (it will run again).
    case notRecorded(output: String, StateError)
    /// `--prune` removed nothing: why.
    case pruneRefused(job: String, IncrementalRun.PruneRefusal)
    /// An output to prune was changed since it was written: left in place, its record removed.
    case prunedFileChanged(String)
    /// An output an earlier run made with regions this run could not have (its input failed
    /// for them): removed, so that it is not left published as current.
    case withdrawn(String)
    /// The workers could not start: nothing of the job ran.
    case workersUnavailable(RenderFailure)
    /// A detector the job's regions name could not be loaded or its model opened: nothing of
    /// the job ran.
    case detectorUnavailable(PluginError)
    /// The report could not be written to the state folder.
    case reportNotWritten(String)
    /// The job's output map could not be written (the one there, if any, is as it was).
    case mapNotWritten(path: String, String)
    /// The job's output map was left byte for byte as it was: inputs it lists may be out of
    /// sight, not gone (``IncrementalRun/mapRefusal()``).
    case mapKept(path: String, String)
    /// An input's placeholder could not be made: the output map lists it without one.
    case noPlaceholder(input: String, String)
    /// An output made from its source unfiltered: its input has no region file
    /// (``JobPlan/passedThrough``).
    case passedThrough(manifest: String, String)
    /// An output found its disk full or read-only (``ImageIOError/refusesEveryWriteThere``):
    /// the job wrote nothing more there (``JobControl/stopWriting(at:)``).
    case writingStopped(job: String, ImageIOError)

    /// A warning leaves the exit status as it is; the others fail the job.
    public var isWarning: Bool {
        switch self {
        case .prunedFileChanged, .noPlaceholder, .passedThrough, .withdrawn: true
        case .unmatchedGlobs(let diagnostics): !diagnostics.hasErrors
        default: false
        }
    }

    public var description: String {
        switch self {
        case .inputRefused(let manifest, let line): "\(manifest): \(line)"
        case .unmatchedGlobs(let diagnostics): diagnostics.map(\.description).joined(separator: "\n")
        case .state(let error): "\(error)"
        case .locked(let job, let holder, let lock):
            "job '\(job)' is already running (pid \(holder.map(String.init) ?? "unknown"), lock \(lock)); --wait waits for it"
        case .inputFailed(let input): input.description
        case .notRecorded(let output, let error): "\(output) was written but not recorded (it will run again): \(error)"
        case .pruneRefused(let job, let refusal):
            "\(job): --prune refused: \(refusal); nothing removed (--force-prune removes them)"
        case .prunedFileChanged(let output):
            "\(ShownName.of(output)): input gone but the file was changed since it was written: left in place, record removed"
        case .withdrawn(let output):
            "\(ShownName.of(output)): removed: made with regions this run could not have (its input failed, above); "
                + "made again once they can be had"
        case .workersUnavailable(let failure): "\(failure)"
        case .detectorUnavailable(let error): "the job's regions cannot be detected, so nothing of it ran: \(error)"
        case .reportNotWritten(let reason): "cannot write the report: \(reason)"
        case .mapNotWritten(let path, let reason): "\(ShownName.of(path)): cannot write the output map: \(reason)"
        case .mapKept(let path, let reason):
            "\(ShownName.of(path)): the output map is left as it was: \(reason); --force-prune if those inputs are really gone"
        case .noPlaceholder(let input, let reason): "\(ShownName.of(input)): no placeholder in the output map: \(reason)"
        case .passedThrough(let manifest, let line): "\(manifest): \(line)"
        case .writingStopped(let job, let error):
            "job '\(job)' stopped writing to the disk of \(error) (every output there would fail alike); its outputs "
                + "there not written are left for the next run, the others go on"
        }
    }
}

/// How a job ended: its report, and how many things failed (outputs and problems).
public struct JobOutcome: Sendable {
    public let report: RunReport
    /// Failed outputs plus the job's problems that are not warnings: 0 when all went well.
    public let failures: Int
    /// The inputs the job planned.
    public let inputs: Int
    /// Whether the job was to prune.
    public let pruneAsked: Bool
    /// Whether the job wrote, failed, stopped, cancelled or pruned anything.
    public var didWork: Bool { report.didWork }
}

extension RunReport {
    /// Whether the run wrote, failed, stopped, cancelled or pruned anything.
    public var didWork: Bool { written + failed + stopped + cancelled + pruned.count > 0 }
}
