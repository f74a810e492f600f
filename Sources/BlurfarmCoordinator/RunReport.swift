import Foundation

/// What happened to one output of a run.
public struct OutputReport: Sendable, Codable {
    public enum Status: String, Sendable, Codable {
        /// Rendered, encoded and written.
        case written
        /// Not written; `error` says why. Any file already at the path is as it was.
        case failed
    }

    /// The input, relative to the manifest's folder.
    public let input: String
    public let output: String
    public let variant: String
    public let status: Status
    /// Tiles rendered (0 when the image was not rendered).
    public let tiles: Int
    /// Seconds spent decoding the input (shared by the input's outputs), filtering and
    /// encoding+writing this output.
    public let decodeSeconds: Double
    public let filterSeconds: Double
    public let encodeSeconds: Double
    /// The problem, one line naming the file, when `status` is `failed`.
    public let error: String?
}

/// The outcome of one run of one job.
public struct RunReport: Sendable, Codable {
    public let job: String
    public let manifest: String
    public let started: Date
    public let finished: Date
    public let outputs: [OutputReport]

    public var written: Int { outputs.filter { $0.status == .written }.count }
    public var failed: Int { outputs.filter { $0.status == .failed }.count }
    public var seconds: Double { finished.timeIntervalSince(started) }
}
