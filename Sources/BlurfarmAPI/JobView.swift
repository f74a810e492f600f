import Foundation

/// A job as the API shows it (docs/api.md): its record and its progress.
public struct JobView: Codable, Sendable {
    /// The job.
    public var job: QueueJob
    /// Where it stands, computed at `now`.
    public var progress: Progress
    /// Whether `manifestText` is shown: not in events, which are changes of a job's state or
    /// counts (a submitted manifest would otherwise be repeated by every one of them): there it
    /// is `null`, and the job's own answer has it.
    public var withManifest: Bool

    /// Outputs done of all, tiles, speed and the estimated time left.
    public struct Progress: Codable, Sendable, Equatable {
        /// Outputs done (written, up to date, failed) and in all.
        public var outputsDone: Int
        public var outputsTotal: Int
        /// 0…1.
        public var fraction: Double
        /// Tiles rendered and to render, of the outputs started.
        public var tilesDone: Int
        public var tilesTotal: Int
        /// Megapixels written per second since it started.
        public var megapixelsPerSecond: Double?
        /// Seconds left at the pace so far; absent until an output is finished.
        public var etaSeconds: Double?
    }

    /// `job` with its progress at `now` (and its manifest's text unless `withManifest` is false).
    public init(_ job: QueueJob, withManifest: Bool = true, now: Date = Date()) {
        self.job = job
        self.withManifest = withManifest
        let done = job.outputsDone
        let total = job.outputsTotal
        var progress = Progress(
            outputsDone: done, outputsTotal: total,
            fraction: total == 0 ? (job.state == .completed ? 1 : 0) : Double(done) / Double(total),
            tilesDone: job.tilesDone, tilesTotal: job.tilesTotal)
        if let started = job.startedAt, job.state == .active || job.state == .paused || job.state.isFinished {
            let elapsed = (job.finishedAt ?? now).timeIntervalSince(started)
            if elapsed > 0 {
                progress.megapixelsPerSecond = Double(job.pixelsWritten) / 1_000_000 / elapsed
                let rendered = job.outputsWritten + job.outputsFailed + job.outputsCancelled
                if !job.state.isFinished, rendered > 0 {
                    progress.etaSeconds = elapsed / Double(rendered) * Double(max(0, total - done - job.outputsCancelled))
                } else if job.state.isFinished {
                    progress.etaSeconds = 0
                }
            }
        }
        self.progress = progress
    }

    public func encode(to encoder: any Encoder) throws {
        try job.encode(to: encoder)
        var container = encoder.container(keyedBy: Key.self)
        if !withManifest { try container.encodeNil(forKey: .manifestText) }
        try container.encode(progress, forKey: .progress)
        try container.encode(job.outputsDone, forKey: .outputsDone)
    }

    /// A job as the server's ``encode(to:)`` writes it; `outputsDone` is computed again from the
    /// counts. An event's job (`"manifestText": null`) reads as not shown (``withManifest``
    /// false, ``QueueJob/manifestText`` empty).
    public init(from decoder: any Decoder) throws {
        job = try QueueJob(from: decoder)
        let fields = try decoder.container(keyedBy: Key.self)
        progress = try fields.decode(Progress.self, forKey: .progress)
        withManifest = try fields.decodeIfPresent(String.self, forKey: .manifestText) != nil
    }

    /// The job an event of the stream carries (docs/api.md, "Events"): the data of a `job` or
    /// `output` event, or the `job` of a `progress` event's data; its manifest's text is not
    /// shown (``withManifest`` false, ``QueueJob/manifestText`` empty). Nil when `data` is not
    /// such a job.
    public init?(event data: Data) {
        /// A `progress` event's data: the job under `job`.
        struct Wrapped: Decodable { let job: JobView }
        let decoder = APIJSON.decoder()
        guard let view = (try? decoder.decode(JobView.self, from: data)) ?? (try? decoder.decode(Wrapped.self, from: data))?.job
        else { return nil }
        self = view
    }

    private enum Key: String, CodingKey { case progress, outputsDone, manifestText }
}
