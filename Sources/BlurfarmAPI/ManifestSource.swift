/// Where a served job's manifest comes from (``QueueJob/source``).
public enum ManifestSource: String, Codable, Sendable, CaseIterable {
    /// Submitted as text (``QueueJob/manifestText``), relative to a folder on the server.
    case text
    /// A file on the server, read again each time the job starts.
    case path
}
