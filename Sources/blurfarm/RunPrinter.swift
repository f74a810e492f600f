import BlurfarmFarm
import BlurfarmCoordinator
import BlurfarmCore
import BlurfarmSystem
import Foundation
import Synchronization

/// What `blurfarm run` shows, as a consumer of the farm's events: the progress line on a
/// terminal, a line per failure (and per output written with `--verbose`), the summary of
/// each job, and the same in `--log`.
final class RunPrinter: Sendable {
    private let quiet: Bool
    /// A line per output written and pruned.
    private let verbose: Bool
    /// The summary even when nothing was to do.
    private let alwaysSummary: Bool
    /// Whether the jobs keep records (`run`'s), so that "up to date" means something; `apply`'s
    /// keep none and write every output.
    private let keepsRecords: Bool
    private let log: RunLog?
    private let progress = Mutex<ProgressLine?>(nil)

    init(quiet: Bool, verbose: Bool, alwaysSummary: Bool, keepsRecords: Bool = true, log: RunLog?) {
        self.quiet = quiet
        self.verbose = verbose
        self.alwaysSummary = alwaysSummary
        self.keepsRecords = keepsRecords
        self.log = log
    }

    /// A failure: one line on standard error, and in the log.
    func fail(_ line: String) {
        printError(line)
        log?.write(line)
    }

    /// A warning: one line on standard error, and in the log.
    func warn(_ line: String) {
        printWarning(ShownName.of(line))
        log?.write("warning: \(line)")
    }

    func handle(_ event: FarmEvent) {
        progress.withLock { progress in
            switch event {
            case .jobAccepted(_, let job, let outputs, _, let inputs):
                if !quiet && ProgressLine.isTerminal && outputs > 0 {
                    progress = ProgressLine(job: job, outputsTotal: outputs, inputsTotal: inputs)
                }
            case .outputFinished(_, let output):
                progress?.clear()
                // A decoding failure is reported once per input, after the job.
                if output.status == .failed, let error = output.error, output.decodeError == nil {
                    fail(error)
                } else if output.status == .written, verbose {
                    let retried = output.retries > 0 ? ", \(counted(output.retries, "tile")) retried" : ""
                    print(
                        "\(ShownName.of(output.output)): \(output.variant) of \(ShownName.of(output.input)), "
                            + "\(counted(output.tiles, "tile"))\(retried)")
                }
                progress?.record(output)
            case .problem(_, let problem):
                progress?.clear()
                switch problem {
                case .unmatchedGlobs(let diagnostics):
                    printDiagnostics(diagnostics)
                    for diagnostic in diagnostics { log?.write(diagnostic.description) }
                case let warning where warning.isWarning:
                    warn(warning.description)
                default: fail(problem.description)
                }
            case .pruned(_, let path, let folder):
                if verbose { print("pruned \(ShownName.of(path))\(folder ? "/" : "")") }
            case .jobFinished(_, let outcome):
                progress?.clear()
                progress = nil
                summarise(outcome)
            case .outputStarted, .tilesDone, .workerStarted, .workerLost: break
            }
        }
    }

    private func summarise(_ outcome: JobOutcome) {
        let report = outcome.report
        let stopped = report.stopped > 0 ? ", \(report.stopped) not started (stopped)" : ""
        let pruned = report.pruned.isEmpty && !outcome.pruneAsked ? "" : ", \(report.pruned.count) pruned"
        let earlier = report.failedEarlier > 0 ? ", \(report.failedEarlier) failed earlier" : ""
        let notEnlarged = report.notEnlarged.isEmpty ? "" : ", \(report.notEnlarged.count) not enlarged (larger than the source)"
        let summary = "\(report.job): \(report.written) written, \(report.failed) failed\(stopped), "
            + "\(counted(outcome.inputs, "input")), in \(String(format: "%.2f", report.seconds)) s; "
            + (keepsRecords ? "\(report.skipped) up to date, " : "")
            + "\(report.decoded) decoded\(earlier)\(notEnlarged)\(pruned)"
        if !quiet && (outcome.didWork || alwaysSummary) { print(summary) }
        log?.write(summary)
    }
}
