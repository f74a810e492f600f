import Logging

extension Logger {
    /// A logger labelled `label` writing lines on standard error at `level` and above: a
    /// command's (``FarmSettings/logger``).
    public static func standardError(label: String, level: Logger.Level) -> Logger {
        var logger = Logger(label: label) { label in StreamLogHandler.standardError(label: label) }
        logger.logLevel = level
        return logger
    }
}
