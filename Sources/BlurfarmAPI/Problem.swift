/// An error answer of the API: `{"error": "…"}`, with the diagnostics of an invalid manifest.
public struct Problem: Codable, Sendable {
    /// What went wrong.
    public var error: String
    /// An invalid manifest's diagnostics, as `blurfarm check` prints them.
    public var diagnostics: String?

    public init(error: String, diagnostics: String?) {
        self.error = error
        self.diagnostics = diagnostics
    }
}
