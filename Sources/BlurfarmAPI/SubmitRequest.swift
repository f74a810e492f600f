/// A job to submit, as the API takes it: a manifest's text and the folder it is relative to,
/// or the path of a manifest on the server; a priority.
public struct SubmitRequest: Codable, Sendable {
    /// The manifest's text.
    public var manifest: String?
    /// The absolute folder the text's paths are relative to.
    public var folder: String?
    /// The file name diagnostics give the text (default `submitted.job`).
    public var name: String?
    /// The path of a manifest on the server (instead of a text).
    public var path: String?
    /// 0–100, higher first (default 50).
    public var priority: Int?

    /// A request.
    public init(manifest: String? = nil, folder: String? = nil, name: String? = nil, path: String? = nil, priority: Int? = nil) {
        self.manifest = manifest
        self.folder = folder
        self.name = name
        self.path = path
        self.priority = priority
    }
}
