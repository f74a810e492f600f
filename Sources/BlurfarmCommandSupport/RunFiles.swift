import BlurfarmCoordinator
import BlurfarmState

/// The files `blurfarm run` writes besides the outputs: its `--report` and its `--log`.
public enum RunFiles {
    /// The files `--report` and `--log` name (either may be nil), for the plans to refuse where
    /// a job reads or writes them (a report written over the manifest, an input or an output
    /// lost it), and the log opened (``RunLog/open(_:)``).
    ///
    /// - Throws: ``OptionError`` when they are one file (the report would replace the log), or
    ///   the log cannot be opened.
    public static func open(report: String?, log: String?) throws(OptionError) -> (files: [JobPlanner.RunFile], log: RunLog?) {
        if let report, let log, RealPath.identity(of: report) == RealPath.identity(of: log) {
            throw OptionError("--report and --log name one file '\(report)': the report would replace the log")
        }
        let files = [("the report (--report)", report), ("the log (--log)", log)].compactMap { what, path in
            path.map { JobPlanner.RunFile(what, path: $0) }
        }
        return (files, try RunLog.open(log))
    }
}
