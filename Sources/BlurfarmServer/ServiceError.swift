import BlurfarmCore
import BlurfarmCoordinator
import BlurfarmManifest

/// Why the service refused a request; each is one HTTP status (docs/api.md).
public enum ServiceError: Error, Sendable, CustomStringConvertible {
    /// No job has this id (404).
    case notFound(Int64)
    /// The job's state does not allow it (409).
    case refused(RefusedTransition)
    /// The manifest is invalid: its diagnostics, compiler style (422).
    case invalidManifest(Diagnostics)
    /// A path of the job is outside the roots (403).
    case outsideRoots(PathOutsideRoots)
    /// The request is malformed (400).
    case badRequest(String)
    /// The queue database failed (500).
    case store(QueueStoreError)
    /// The server is stopping (503).
    case stopping

    public var description: String {
        switch self {
        case .notFound(let id): "no job \(id)"
        case .refused(let refusal): refusal.description
        case .invalidManifest(let diagnostics): DiagnosticPrinter.render(diagnostics, program: "blurfarm")
        case .outsideRoots(let path): path.description
        case .badRequest(let message): message
        case .store(let error): error.description
        case .stopping: "the server is stopping"
        }
    }
}
