import Foundation

/// One output of a job, as stored and as the API shows it.
public struct QueueOutput: Codable, Sendable, Equatable {
    /// Its job.
    public var jobId: Int64
    /// The output file's path.
    public var output: String
    /// Where it stands.
    public var state: JobOutputState
    /// Tiles rendered and in all.
    public var tilesDone: Int
    public var tiles: Int
    /// Pixels of the output.
    public var pixels: Int
    /// Seconds from start to written.
    public var seconds: Double?
    /// Times a tile of it was sent again after a worker was lost.
    public var retries: Int
    /// The output's checksum when written.
    public var checksum: String?
    /// Why it failed: the kind (`decode`, `render`, `write`, …) and the message.
    public var errorKind: String?
    public var error: String?
    /// When it started and finished.
    public var startedAt: Date?
    public var finishedAt: Date?

    /// A output with every field given.
    public init(
        jobId: Int64, output: String, state: JobOutputState, tilesDone: Int, tiles: Int, pixels: Int, seconds: Double?,
        retries: Int, checksum: String?, errorKind: String?, error: String?, startedAt: Date?, finishedAt: Date?
    ) {
        self.jobId = jobId
        self.output = output
        self.state = state
        self.tilesDone = tilesDone
        self.tiles = tiles
        self.pixels = pixels
        self.seconds = seconds
        self.retries = retries
        self.checksum = checksum
        self.errorKind = errorKind
        self.error = error
        self.startedAt = startedAt
        self.finishedAt = finishedAt
    }
}
