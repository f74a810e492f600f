/// Why a worker's message loop ended, and the process exit status that stands for it.
///
/// The statuses are documented in docs/commands.md ("worker"); the coordinator reads them.
public enum WorkerExit: Equatable, Sendable {
    /// The coordinator sent `shutdown`.
    case shutdown
    /// The input ended between frames: the coordinator closed the pipe (or died).
    case endOfInput
    /// The input is not a valid conversation: a frame that does not decode, a frame cut off by
    /// the end of the input, or a message a coordinator never sends (e.g. `hello`, or a `task`
    /// while one runs). The text says which.
    case badInput(String)
    /// Reading the input failed.
    case inputFailed(String)
    /// The worker could not set itself up (its heartbeat thread refused): the text says why.
    case setupFailed(String)

    /// Exit status after `shutdown` or the end of the input.
    public static let successStatus: Int32 = 0
    /// Exit status after bad input (sysexits' `EX_DATAERR`).
    public static let badInputStatus: Int32 = 65
    /// Exit status at start when the coordinator named on the command line is no longer the
    /// parent: it died before the worker could ask to die with it (`EX_UNAVAILABLE`).
    public static let coordinatorGoneStatus: Int32 = 69
    /// Exit status at start when the process could not be set up (`EX_OSERR`): ignoring
    /// SIGPIPE or asking for the parent-death signal failed, or no thread for heartbeats.
    public static let setupFailedStatus: Int32 = 71
    /// Exit status when reading the input fails (`EX_IOERR`).
    public static let inputFailedStatus: Int32 = 74

    /// The process exit status for this ending.
    public var status: Int32 {
        switch self {
        case .shutdown, .endOfInput: Self.successStatus
        case .badInput: Self.badInputStatus
        case .inputFailed: Self.inputFailedStatus
        case .setupFailed: Self.setupFailedStatus
        }
    }

    /// The line to print on standard error, or nil for a normal ending.
    public var message: String? {
        switch self {
        case .shutdown, .endOfInput: nil
        case .badInput(let text): "bad input from the coordinator: \(text)"
        case .inputFailed(let text): "cannot read from the coordinator: \(text)"
        case .setupFailed(let text): text
        }
    }
}
