/// The body of `POST /api/v1/jobs/{id}/priority`.
public struct PriorityChange: Codable, Sendable {
    /// 0–100, higher first.
    public var priority: Int

    public init(priority: Int) { self.priority = priority }
}
