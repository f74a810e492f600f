import BlurfarmCore
import BlurfarmFarm
import BlurfarmSystem
import Foundation
import Synchronization

/// What `blurfarm run` shows, as a consumer of the farm's events: prints the lines
/// ``RunNarrator`` says (the progress line on a terminal, a line per failure, and per output
/// written with `--verbose`, the summary of each job), and the same in `--log`. Off a terminal
/// (cron) no progress line is drawn, so that only failures and the summary reach the log.
public final class RunPrinter: Sendable {
    private let log: RunLog?
    private let narrator: Mutex<RunNarrator>

    public init(quiet: Bool, verbose: Bool, alwaysSummary: Bool, keepsRecords: Bool = true, log: RunLog?) {
        self.log = log
        narrator = Mutex(RunNarrator(
            quiet: quiet, verbose: verbose, alwaysSummary: alwaysSummary, keepsRecords: keepsRecords,
            showsProgress: Self.isTerminal))
    }

    /// A failure: one line on standard error, and in the log.
    public func fail(_ line: String) { say(.failure(line)) }

    /// Another run holds a job's lock: what ``RunNarrator/busy(_:)`` says (with `--quiet`, the
    /// log's line alone).
    public func busy(_ line: String) { say(narrator.withLock { $0.busy(line) }) }

    /// A warning: one line on standard error, and in the log.
    public func warn(_ line: String) { say(.warning(line)) }

    /// Prints what ``RunNarrator`` says of `event`.
    public func handle(_ event: FarmEvent) {
        narrator.withLock { narrator in
            for line in narrator.lines(for: event) { say(line) }
        }
    }

    private func say(_ line: RunNarrator.Line) {
        switch line {
        case .output(let text): print(text)
        case .failure(let text):
            printError(text)
            log?.write(text)
        case .warning(let text):
            printWarning(ShownName.of(text))
            log?.write("warning: \(text)")
        case .diagnostics(let diagnostics):
            printDiagnostics(diagnostics)
            for diagnostic in diagnostics { log?.write(diagnostic.description) }
        case .log(let text): log?.write(text)
        case .progress(let text): Self.drawProgress(text)
        case .clearProgress: Self.clearProgress()
        }
    }

    /// Whether standard error is a terminal: the progress line is drawn only there.
    public static var isTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    /// Draws the progress line `line` (a run's, or `submit --wait`'s) over the one before, on standard error.
    public static func drawProgress(_ line: String) { FileHandle.standardError.write(Data("\r\u{1B}[K\(line)".utf8)) }

    /// Clears the progress line, so that the summary and failures print on a clean line.
    public static func clearProgress() { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
}

/// Prints `blurfarm: error: message` to standard error, on one line: control characters in
/// the message (a file's name may hold a newline) are escaped.
public func printError(_ message: String) {
    FileHandle.standardError.write(Data("blurfarm: error: \(ShownName.of(message))\n".utf8))
}

/// Prints `blurfarm: warning: message` to standard error.
public func printWarning(_ message: String) {
    FileHandle.standardError.write(Data("blurfarm: warning: \(message)\n".utf8))
}

/// Prints diagnostics, compiler style, to standard error.
public func printDiagnostics(_ diagnostics: Diagnostics) {
    FileHandle.standardError.write(Data(DiagnosticPrinter.render(diagnostics, program: "blurfarm").utf8))
}
