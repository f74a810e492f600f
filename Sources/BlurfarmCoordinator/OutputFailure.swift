import BlurfarmEngine
import BlurfarmImageIO

/// Why an output was not written, kept typed from where it happened to the report: the
/// report's `error` carries its ``kind``, ImageIO's error ``code`` when ImageIO failed, and the
/// one-line ``message`` naming the file.
public enum OutputFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The input could not be read or decoded (missing, corrupt, over a limit).
    case decode(ImageIOError)
    /// A decoding failure remembered from an earlier run (`failedEarlier`): its message.
    case decodedEarlier(String)
    /// The filters could not render it: a filter's error, tiles that failed every attempt,
    /// workers that cannot run. `output` names the file.
    case render(output: String, RenderFailure)
    /// A plugin's answers were refused, or made the output too large: the message.
    case plugin(String)
    /// `output: region`, and every region lies outside the image: the message.
    case regions(String)
    /// The image rendered, but verification found it wrong: the message.
    case verification(String)
    /// It could not be encoded or written (a missing folder, a full disk).
    case write(ImageIOError)
    /// Its job was cancelled before it was written.
    case cancelled
    /// The run was asked to stop (SIGINT, SIGTERM) before it was written.
    case stopped
    /// A failure another process reported, read back from its JSON report (`slurm finish`
    /// merging its shards' reports): the report's `error.kind`, `code` and `message`.
    case reported(kind: String, code: String?, message: String)

    /// The kind, as the JSON report's `error.kind` names it.
    public var kind: String {
        switch self {
        case .decode, .decodedEarlier: "decode"
        case .render: "render"
        case .plugin: "plugin"
        case .regions: "regions"
        case .verification: "verification"
        case .write: "write"
        case .cancelled: "cancelled"
        case .stopped: "stopped"
        case .reported(let kind, _, _): kind
        }
    }

    /// ImageIO's error code, when ImageIO failed (e.g. `decodeFailed`, `outputFolderMissing`).
    public var code: String? {
        switch self {
        case .decode(let error), .write(let error): "\(error.code)"
        case .reported(_, let code, _): code
        default: nil
        }
    }

    /// One line naming the file and the problem.
    public var description: String {
        switch self {
        case .decode(let error), .write(let error): error.description
        case .decodedEarlier(let message), .plugin(let message), .regions(let message), .verification(let message): message
        case .render(let output, let failure): "\(output): \(failure)"
        case .cancelled: "cancelled"
        case .stopped: "stopped"
        case .reported(_, _, let message): message
        }
    }

    /// A failure as a report's `error` gives it: ``cancelled`` and ``stopped``, which carry
    /// nothing more, as themselves; any other as ``reported(kind:code:message:)``.
    public init(kind: String, code: String?, message: String) {
        switch (kind, code, message) {
        case ("cancelled", nil, "cancelled"): self = .cancelled
        case ("stopped", nil, "stopped"): self = .stopped
        default: self = .reported(kind: kind, code: code, message: message)
        }
    }

    /// The decoding failure this is, if it is one (reported once per input, remembered).
    public var decodeError: ImageIOError? {
        if case .decode(let error) = self { return error }
        return nil
    }
}

extension ImageIOError: Equatable {
    public static func == (a: ImageIOError, b: ImageIOError) -> Bool {
        a.code == b.code && a.path == b.path && a.message == b.message
    }
}
