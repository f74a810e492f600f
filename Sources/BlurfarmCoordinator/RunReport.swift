import BlurfarmImageIO
import Foundation

/// What happened to one output of a run.
public struct OutputReport: Sendable, Codable {
    public enum Status: String, Sendable, Codable {
        /// Rendered, encoded and written.
        case written
        /// Not written; `error` says why. Any file already at the path is as it was.
        case failed
        /// Not started: the run was asked to stop (SIGINT, SIGTERM) first.
        case stopped
        /// Up to date: the recorded output is still there and was made from the same input
        /// bytes with the same recipe (docs/scheduling.md); nothing was decoded for it.
        case skipped
        /// Not tried: its input failed to decode in an earlier run, through its own fault, and
        /// has not changed since (`error` says why; `run --retry-failed` tries it again).
        case failedEarlier
    }

    /// The input, relative to the manifest's folder.
    public let input: String
    public let output: String
    public let variant: String
    public let status: Status
    /// Tiles rendered (0 when the image was not rendered).
    public let tiles: Int
    /// Pixels of the output rendered (width × height; 0 when it was not rendered).
    public let pixels: Int
    /// Seconds spent decoding the input (shared by the input's outputs), filtering and
    /// encoding+writing this output.
    public let decodeSeconds: Double
    public let filterSeconds: Double
    public let encodeSeconds: Double
    /// Tile attempts that failed and were retried (a worker that died, hung, ran past the task
    /// timeout or sent a bad checksum); 0 in process.
    public let retries: Int
    /// The ``PixelChecksum`` of the whole rendered image (before encoding), 16 hex digits; the
    /// same whatever rendered it (in process, any number of workers, any tile size). Nil when
    /// the image was not rendered.
    public let checksum: String?
    /// The problem, one line naming the file, when `status` is `failed`.
    public let error: String?
    /// The folders made for this output that were not there before (not in the JSON report):
    /// recorded, so that `--prune` may remove them once they are empty.
    public var createdFolders: [CreatedFolder] = []
    /// Why the input could not be decoded, when that is why this output failed (not in the
    /// JSON report): a run reports it once per input and remembers it
    /// (``IncrementalRun/recordFailures(of:)``).
    public var decodeError: ImageIOError?

    private enum CodingKeys: String, CodingKey {
        case input, output, variant, status, tiles, pixels, decodeSeconds, filterSeconds, encodeSeconds, retries
        case checksum, error
    }

    public init(
        input: String, output: String, variant: String, status: Status, tiles: Int = 0, pixels: Int = 0,
        decodeSeconds: Double = 0, filterSeconds: Double = 0, encodeSeconds: Double = 0, retries: Int = 0,
        checksum: String? = nil, error: String? = nil
    ) {
        self.input = input
        self.output = output
        self.variant = variant
        self.status = status
        self.tiles = tiles
        self.pixels = pixels
        self.decodeSeconds = decodeSeconds
        self.filterSeconds = filterSeconds
        self.encodeSeconds = encodeSeconds
        self.retries = retries
        self.checksum = checksum
        self.error = error
    }
}

/// How a run was set up, as its report records it.
public struct RunSettings: Sendable, Codable {
    /// The configuration file used, or nil for the built-in defaults.
    public var configuration: String?
    /// Worker processes rendering tiles (0: in process).
    public var workers: Int
    /// Threads rendering tiles in process (the workers when there are workers).
    public var threads: Int
    /// Images decoded at once (`decoded-images`): the bound on pixel memory.
    public var decodedImages: Int
    /// Tile side in pixels (0: one tile per image).
    public var tile: Int
    /// The pixel limit checked before decoding.
    public var pixelLimit: Int
    /// The verification mode: checksum, decode or untiled.
    public var verify: String

    public init(
        configuration: String?, workers: Int, threads: Int, decodedImages: Int, tile: Int, pixelLimit: Int,
        verify: String
    ) {
        self.configuration = configuration
        self.workers = workers
        self.threads = threads
        self.decodedImages = decodedImages
        self.tile = tile
        self.pixelLimit = pixelLimit
        self.verify = verify
    }
}

/// The outcome of one run of one job: what `docs/report.md` describes, written as JSON.
public struct RunReport: Sendable, Codable {
    public let job: String
    public let manifest: String
    public let started: Date
    public let finished: Date
    public let settings: RunSettings
    public let outputs: [OutputReport]
    /// Outputs removed by `--prune` (recorded outputs whose input is gone), absolute paths.
    public var pruned: [String] = []

    /// A report of `outputs`.
    public init(
        job: String, manifest: String, started: Date, finished: Date, settings: RunSettings, outputs: [OutputReport],
        pruned: [String] = []
    ) {
        self.job = job
        self.manifest = manifest
        self.started = started
        self.finished = finished
        self.settings = settings
        self.outputs = outputs
        self.pruned = pruned
    }

    public var written: Int { outputs.filter { $0.status == .written }.count }
    public var failed: Int { outputs.filter { $0.status == .failed }.count }
    public var stopped: Int { outputs.filter { $0.status == .stopped }.count }
    public var skipped: Int { outputs.filter { $0.status == .skipped }.count }
    public var failedEarlier: Int { outputs.filter { $0.status == .failedEarlier }.count }
    /// Inputs the run decoded (or tried to): those with an output written or failed.
    public var decoded: Int { Set(outputs.filter { $0.status == .written || $0.status == .failed }.map(\.input)).count }
    public var seconds: Double { finished.timeIntervalSince(started) }

    /// The report's counts, as the JSON report's `counts` gives them.
    public struct Counts: Codable, Sendable, Equatable {
        public var written: Int
        public var failed: Int
        public var stopped: Int
        public var skipped: Int
        public var decoded: Int
        /// Recorded outputs removed by `--prune`.
        public var pruned: Int
        /// Outputs not tried because their input failed earlier (``OutputReport/Status/failedEarlier``).
        public var failedEarlier: Int
    }

    public var counts: Counts {
        Counts(
            written: written, failed: failed, stopped: stopped, skipped: skipped, decoded: decoded, pruned: pruned.count,
            failedEarlier: failedEarlier)
    }

    private enum EncodedKeys: String, CodingKey {
        case job, manifest, started, finished, settings, outputs, pruned, counts
    }

    /// The stored properties and ``counts``.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: EncodedKeys.self)
        try c.encode(job, forKey: .job)
        try c.encode(manifest, forKey: .manifest)
        try c.encode(started, forKey: .started)
        try c.encode(finished, forKey: .finished)
        try c.encode(settings, forKey: .settings)
        try c.encode(outputs, forKey: .outputs)
        try c.encode(pruned, forKey: .pruned)
        try c.encode(counts, forKey: .counts)
    }
}

extension RunReport {
    /// Writes `value` (a report, or a list of them) as JSON to `path` atomically (a temporary
    /// file beside it, then a rename), creating its folder if need be. Keys sorted, dates in
    /// ISO 8601 (UTC), indented.
    public static func write(_ value: some Encodable, to path: String) throws {
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try json(value).write(to: url, options: .atomic)
    }

    /// Writes this report to ``pathInStateFolder(_:)`` as ``write(_:to:)`` does, but in the
    /// state folder's way: the `reports` folder may not be a symbolic link and must belong to
    /// the running user, not writable by others, and the file is created relative to it,
    /// never through a link (``JobStateFolder/replace(_:in:with:)``). Returns the path.
    /// - Throws: ``StateError`` naming the file or folder.
    @discardableResult
    public func writeInStateFolder(_ state: String) throws -> String {
        let path = pathInStateFolder(state)
        let folder = try JobStateFolder.openFolder((path as NSString).deletingLastPathComponent)
        defer { close(folder) }
        try JobStateFolder.replace(path, in: folder, with: Array(Self.json(self)))
        return path
    }

    /// `value` as the reports and the read commands' `--json` write it (docs/json.md): keys
    /// sorted, dates in ISO 8601 (UTC), indented, strings escaped as JSON escapes them.
    public static func json(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return try encoder.encode(value)
    }

    /// Where the report goes in the state folder: `reports/<job>-<UTC start>-<pid>.json`.
    public func pathInStateFolder(_ state: String) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        let name = "\(job)-\(formatter.string(from: started))-\(ProcessInfo.processInfo.processIdentifier).json"
        return (state as NSString).appendingPathComponent("reports/" + name)
    }
}
