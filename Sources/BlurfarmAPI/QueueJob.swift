import Foundation

/// A job in the durable queue, as stored and as the API shows it (docs/api.md).
public struct QueueJob: Codable, Sendable, Equatable {
    /// The job's id: its place in submission order.
    public var id: Int64?
    /// The job's name, from its manifest.
    public var name: String
    /// The manifest's path: the file on the server, or the folder of a submitted text joined with its name.
    public var manifest: String
    /// `path` (a manifest on the server, read again on each start) or `text` (the text below).
    public var source: ManifestSource
    /// The manifest's text as submitted (empty for a manifest on the server).
    public var manifestText: String
    /// 0–100, higher first.
    public var priority: Int
    /// The state.
    public var state: JobState
    /// Whether the farm has it (see ``JobMachine``).
    public var inFarm: Bool
    /// Whether its next submission retries its failed outputs.
    public var retryFailed: Bool
    /// When it was submitted, started (last handed to the farm), finished.
    public var submittedAt: Date
    public var startedAt: Date?
    public var finishedAt: Date?
    /// Outputs planned, up to date when it started, written, failed, cancelled or stopped.
    public var outputsTotal: Int
    public var outputsUpToDate: Int
    public var outputsWritten: Int
    public var outputsFailed: Int
    public var outputsCancelled: Int
    /// Tiles rendered and to render, of the outputs started so far.
    public var tilesDone: Int
    public var tilesTotal: Int
    /// Pixels of the outputs written since it started (for the megapixels per second).
    public var pixelsWritten: Int
    /// Why the farm could not take it (its manifest no longer plans, say).
    public var error: String?
    /// Why nothing of it could run, when it failed for a reason a program may act on.
    public var refusal: JobRefusal?

    /// Outputs done: written, up to date or failed (not those cancelled or stopped).
    public var outputsDone: Int { outputsUpToDate + outputsWritten + outputsFailed }

    /// A job with every field given.
    public init(
        id: Int64?, name: String, manifest: String, source: ManifestSource, manifestText: String, priority: Int, state: JobState,
        inFarm: Bool, retryFailed: Bool, submittedAt: Date, startedAt: Date?, finishedAt: Date?, outputsTotal: Int,
        outputsUpToDate: Int, outputsWritten: Int, outputsFailed: Int, outputsCancelled: Int, tilesDone: Int, tilesTotal: Int,
        pixelsWritten: Int, error: String?, refusal: JobRefusal?
    ) {
        self.id = id
        self.name = name
        self.manifest = manifest
        self.source = source
        self.manifestText = manifestText
        self.priority = priority
        self.state = state
        self.inFarm = inFarm
        self.retryFailed = retryFailed
        self.submittedAt = submittedAt
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.outputsTotal = outputsTotal
        self.outputsUpToDate = outputsUpToDate
        self.outputsWritten = outputsWritten
        self.outputsFailed = outputsFailed
        self.outputsCancelled = outputsCancelled
        self.tilesDone = tilesDone
        self.tilesTotal = tilesTotal
        self.pixelsWritten = pixelsWritten
        self.error = error
        self.refusal = refusal
    }

    /// A job as the API's JSON or the queue's row gives it. `manifestText` is an event's job's
    /// `null` (docs/api.md, "Events": the text is not repeated by every event) or absent: it reads
    /// as empty; every other field as the encoder writes it.
    public init(from decoder: any Decoder) throws {
        let fields = try decoder.container(keyedBy: CodingKeys.self)
        id = try fields.decodeIfPresent(Int64.self, forKey: .id)
        name = try fields.decode(String.self, forKey: .name)
        manifest = try fields.decode(String.self, forKey: .manifest)
        source = try fields.decode(ManifestSource.self, forKey: .source)
        manifestText = try fields.decodeIfPresent(String.self, forKey: .manifestText) ?? ""
        priority = try fields.decode(Int.self, forKey: .priority)
        state = try fields.decode(JobState.self, forKey: .state)
        inFarm = try fields.decode(Bool.self, forKey: .inFarm)
        retryFailed = try fields.decode(Bool.self, forKey: .retryFailed)
        submittedAt = try fields.decode(Date.self, forKey: .submittedAt)
        startedAt = try fields.decodeIfPresent(Date.self, forKey: .startedAt)
        finishedAt = try fields.decodeIfPresent(Date.self, forKey: .finishedAt)
        outputsTotal = try fields.decode(Int.self, forKey: .outputsTotal)
        outputsUpToDate = try fields.decode(Int.self, forKey: .outputsUpToDate)
        outputsWritten = try fields.decode(Int.self, forKey: .outputsWritten)
        outputsFailed = try fields.decode(Int.self, forKey: .outputsFailed)
        outputsCancelled = try fields.decode(Int.self, forKey: .outputsCancelled)
        tilesDone = try fields.decode(Int.self, forKey: .tilesDone)
        tilesTotal = try fields.decode(Int.self, forKey: .tilesTotal)
        pixelsWritten = try fields.decode(Int.self, forKey: .pixelsWritten)
        error = try fields.decodeIfPresent(String.self, forKey: .error)
        refusal = try fields.decodeIfPresent(JobRefusal.self, forKey: .refusal)
    }
}
