/// One problem found in a user's file (a manifest, the configuration), or a hint about one.
///
/// A diagnostic prints as a compiler's does: `jobs/a.job:12:7: error: unknown key 'sigam'`.
/// A `note` adds a hint to the error (or warning) before it and is never counted on its own;
/// warnings are not counted either.
public struct Diagnostic: Hashable, Sendable, CustomStringConvertible {
    /// How serious a diagnostic is.
    public enum Severity: String, Hashable, Sendable {
        /// The file cannot be used as it is.
        case error
        /// The file can be used, but probably does not say what its author meant (an input
        /// glob that matches no file).
        case warning
        /// A hint attached to the error printed before it (`did you mean 'sigma'?`).
        case note
    }

    /// Error or note.
    public var severity: Severity
    /// Where the problem is; `nil` when it concerns no place in a file (then only the
    /// severity and the message are printed).
    public var location: SourceLocation?
    /// One line, no trailing period, values in single quotes.
    public var message: String

    /// A diagnostic of `severity` at `location` saying `message`.
    public init(_ severity: Severity, at location: SourceLocation?, _ message: String) {
        self.severity = severity
        self.location = location
        self.message = message
    }

    /// An error at `location`.
    public static func error(_ message: String, at location: SourceLocation?) -> Diagnostic {
        Diagnostic(.error, at: location, message)
    }

    /// A warning at `location`.
    public static func warning(_ message: String, at location: SourceLocation?) -> Diagnostic {
        Diagnostic(.warning, at: location, message)
    }

    /// A note at `location`.
    public static func note(_ message: String, at location: SourceLocation?) -> Diagnostic {
        Diagnostic(.note, at: location, message)
    }

    /// `path:line:column: error: message`, or `error: message` without a location.
    public var description: String {
        if let location { "\(location): \(severity.rawValue): \(message)" } else { "\(severity.rawValue): \(message)" }
    }
}
