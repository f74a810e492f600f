import Foundation

/// The live progress line of `blurfarm run` (``RunNarrator``'s) and of `submit --wait` on a
/// terminal, on standard error. Off a terminal (cron) nothing is drawn, so that only failures
/// and the summary reach the log.
enum ProgressLine {
    /// Whether standard error is a terminal: the line is drawn only there.
    static var isTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    /// Draws `line` over the one before.
    static func draw(_ line: String) {
        FileHandle.standardError.write(Data("\r\u{1B}[K\(line)".utf8))
    }

    /// Clears the line, so that the summary and failures print on a clean line.
    static func clear() {
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }
}
