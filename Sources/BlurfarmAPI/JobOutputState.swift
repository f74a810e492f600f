/// Where an output of a served job stands (docs/api.md, `GET /api/v1/jobs/{id}/outputs`).
public enum JobOutputState: String, Codable, Sendable, CaseIterable {
    /// Started: its tiles are rendering.
    case rendering
    /// Written.
    case written
    /// Up to date already: not rendered.
    case upToDate
    /// Not written; `error` says why.
    case failed
    /// Not written: its job was cancelled.
    case cancelled
    /// Not written: the server was stopping.
    case stopped
}
