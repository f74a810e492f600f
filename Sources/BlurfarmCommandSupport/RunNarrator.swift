import BlurfarmFarm
import BlurfarmCoordinator
import BlurfarmCore
import BlurfarmSystem
import Foundation

/// What `blurfarm run` (and `apply -o`) says of the farm's events, as lines the command prints:
/// the progress line on a terminal, a line per failure (and per output written with
/// `--verbose`), the summary of each job, and what goes in `--log`. It decides; it prints nothing.
public struct RunNarrator: Sendable {
    /// One thing to say, and where.
    public enum Line: Sendable {
        /// A line on standard output.
        case output(String)
        /// A failure: on standard error, and in the log.
        case failure(String)
        /// A warning: on standard error, and in the log.
        case warning(String)
        /// Diagnostics on standard error, compiler style, and each in the log.
        case diagnostics(Diagnostics)
        /// A line for the log only.
        case log(String)
        /// The progress line, drawn again.
        case progress(String)
        /// The progress line cleared, so that what follows prints on a clean line.
        case clearProgress
    }

    private let quiet: Bool
    /// A line per output written and pruned.
    private let verbose: Bool
    /// The summary even when nothing was to do.
    private let alwaysSummary: Bool
    /// Whether the jobs keep records (`run`'s), so that "up to date" means something; `apply`'s
    /// keep none and write every output.
    private let keepsRecords: Bool
    /// Whether the progress line is drawn (standard error is a terminal).
    private let showsProgress: Bool
    /// The job's progress line's counts, while a job runs on a terminal.
    private(set) var progress: JobProgress?
    /// The least time between two draws of the progress line (``progressInterval``).
    private let progressInterval: Duration
    /// When the progress line was last drawn.
    private var drawn: ContinuousClock.Instant?

    /// The least time between two draws of the progress line but after a line printed and at the
    /// job's last output: a tenth of a second. Drawn at every output, a first run of a million
    /// photos drew it 3,000,000 times, about 300 MB through the terminal.
    public static let progressInterval = Duration.milliseconds(100)

    public init(
        quiet: Bool, verbose: Bool, alwaysSummary: Bool, keepsRecords: Bool = true, showsProgress: Bool,
        progressInterval: Duration = RunNarrator.progressInterval
    ) {
        self.quiet = quiet
        self.verbose = verbose
        self.alwaysSummary = alwaysSummary
        self.keepsRecords = keepsRecords
        self.showsProgress = showsProgress
        self.progressInterval = progressInterval
    }

    /// What to say of another run holding a job's lock (exit 3: not a failure): a failure's
    /// line, or with `--quiet` the log's alone, so that cron, which mails what a run prints,
    /// mails nothing each time it comes round while a long run is busy.
    public func busy(_ line: String) -> Line { quiet ? .log(line) : .failure(line) }

    /// What to say of `event`, in order.
    public mutating func lines(for event: FarmEvent) -> [Line] {
        let clear: [Line] = progress == nil ? [] : [.clearProgress]
        switch event {
        case .jobAccepted(_, let job, let outputs, _, let inputs):
            if !quiet && showsProgress && outputs > 0 {
                progress = JobProgress(job: job, outputsTotal: outputs, inputsTotal: inputs)
            }
            return []
        case .outputFinished(_, let output):
            var printed: [Line] = []
            // A decoding failure is reported once per input, after the job.
            if output.status == .failed, let error = output.error, output.decodeError == nil {
                printed.append(.failure(error))
            } else if output.status == .written, verbose {
                let retried = output.retries > 0 ? ", \(counted(output.retries, "tile")) retried" : ""
                printed.append(.output(
                    "\(ShownName.of(output.output)): \(output.variant) of \(ShownName.of(output.input)), "
                        + "\(counted(output.tiles, "tile"))\(retried)"))
            }
            progress?.record(output)
            guard let progress else { return printed }
            // Drawn again after a line (which clears it), at the last output, else once an interval.
            let now = ContinuousClock.now
            guard !printed.isEmpty || progress.isComplete || drawn.map({ now - $0 >= progressInterval }) ?? true else { return [] }
            drawn = now
            return clear + printed + [.progress(progress.line)]
        case .problem(_, let problem):
            switch problem {
            case .unmatchedGlobs(let diagnostics): return clear + [.diagnostics(diagnostics)]
            case let warning where warning.isWarning: return clear + [.warning(warning.description)]
            default: return clear + [.failure(problem.description)]
            }
        case .batchFinished:
            progress?.endBatch()
            return []
        case .pruned(_, let path, let folder):
            return verbose ? [.output("pruned \(ShownName.of(path))\(folder ? "/" : "")")] : []
        case .jobFinished(_, let outcome):
            (progress, drawn) = (nil, nil)
            let summary = Self.summary(outcome, keepsRecords: keepsRecords)
            return clear + (!quiet && (outcome.didWork || alwaysSummary) ? [.output(summary)] : []) + [.log(summary)]
        case .outputStarted, .tilesDone, .outputsNotStarted, .workerStarted, .workerLost: return []
        }
    }

    /// A job's summary line: `job: 3 written, 0 failed, 2 inputs, in 1.20 s; 4 up to date, 2 decoded`,
    /// with what was stopped, failed earlier, not enlarged, published unredacted and pruned; "up to date" only for a
    /// job that `keepsRecords`.
    public static func summary(_ outcome: JobOutcome, keepsRecords: Bool) -> String {
        let report = outcome.report
        let stopped = report.stopped > 0 ? ", \(report.stopped) not started (stopped)" : ""
        let pruned = report.pruned.isEmpty && !outcome.pruneAsked ? "" : ", \(report.pruned.count) pruned"
        let earlier = report.failedEarlier > 0 ? ", \(report.failedEarlier) failed earlier" : ""
        let notEnlargedCount = report.counts.notEnlarged
        let notEnlarged = notEnlargedCount == 0 ? "" : ", \(notEnlargedCount) not enlarged (larger than the source)"
        let unredacted = report.unredacted.isEmpty
            ? "" : ", \(report.unredacted.count) published unredacted (no region file: missing: skip)"
        return "\(report.job): \(report.written) written, \(report.failed) failed\(stopped), "
            + "\(counted(outcome.inputs, "input")), in \(String(format: "%.2f", report.seconds)) s; "
            + (keepsRecords ? "\(report.skipped) up to date, " : "")
            + "\(report.decoded) decoded\(earlier)\(notEnlarged)\(unredacted)\(pruned)"
    }
}
