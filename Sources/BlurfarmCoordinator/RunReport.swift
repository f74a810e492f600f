import BlurfarmState
import BlurfarmSystem
import BlurfarmCore
import BlurfarmImageIO
import Foundation

/// What happened to one output of a run.
public struct OutputReport: Sendable, Codable, Equatable {
    public enum Status: String, Sendable, Codable {
        /// Rendered, encoded and written.
        case written
        /// Not written; `error` says why. Any file already at the path is as it was.
        case failed
        /// Not started or not finished: the run was asked to stop (SIGINT, SIGTERM) first.
        case stopped
        /// Not written: its job was cancelled (a farm's ``Farm/cancel(_:)``).
        case cancelled
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
    /// What rendering it told, nil when it was not rendered and nothing else was said of it
    /// (an output up to date): a batch of outputs, most of them up to date, holds 64 bytes for
    /// each of those, not the 300 its every field took.
    private var rendering: Shared?

    /// Tiles rendered (0 when the image was not rendered).
    public var tiles: Int { rendering?.details.tiles ?? 0 }
    /// Of ``tiles``, those no region reaches, copied from the source without running the
    /// filters (``RegionMask/uniformCoverage(of:in:)``); 0 for a variant without regions.
    public var tilesCopied: Int { rendering?.details.tilesCopied ?? 0 }
    /// Pixels of the output rendered (width × height; 0 when it was not rendered).
    public var pixels: Int { rendering?.details.pixels ?? 0 }
    /// The bands the image was streamed in (decoded, filtered and encoded band by band, the
    /// outputs of one input sharing one decode); 0 when it was decoded whole.
    public var bands: Int { rendering?.details.bands ?? 0 }
    /// Seconds spent decoding the input (shared by the input's outputs), filtering and
    /// encoding+writing this output. For a streamed image the three overlap: the filter
    /// seconds are those during which some band of the output was rendering.
    public var decodeSeconds: Double { rendering?.details.decodeSeconds ?? 0 }
    public var filterSeconds: Double { rendering?.details.filterSeconds ?? 0 }
    public var encodeSeconds: Double { rendering?.details.encodeSeconds ?? 0 }
    /// Tile attempts that failed and were retried (a worker that died, hung, ran past the task
    /// timeout or sent a bad checksum); 0 in process.
    public var retries: Int { rendering?.details.retries ?? 0 }
    /// The ``PixelChecksum`` of the whole rendered image (before encoding), 16 hex digits; the
    /// same whatever rendered it (in process, any number of workers, any tile size). Nil when
    /// the image was not rendered.
    public var checksum: String? { rendering?.details.checksum }
    /// Why it was not written, when `status` is `failed` or `failedEarlier` (also `stopped` and
    /// `cancelled` when they cut it short).
    public var failure: OutputFailure? { rendering?.details.failure }
    /// The problem, one line naming the file, when `status` is `failed`.
    public var error: String? { failure?.description }
    /// The folders made for this output that were not there before (not in the JSON report):
    /// recorded, so that `--prune` may remove them once they are empty.
    public var createdFolders: [CreatedFolder] {
        get { rendering?.details.createdFolders ?? [] }
        set { change { $0.createdFolders = newValue } }
    }
    /// The written file's width and height in pixels, as its header says (not in the JSON
    /// report: `pixels` is their product); recorded, for the output map. Nil unless written.
    public var width: Int? {
        get { rendering?.details.width }
        set { change { $0.width = newValue } }
    }
    public var height: Int? {
        get { rendering?.details.height }
        set { change { $0.height = newValue } }
    }
    /// Whether the run never started it: its job ended (stopped or cancelled), or its disk
    /// stopped taking writes, before its input was read for it. Counted in the report, not
    /// listed (``ReportedOutputs``; not in the JSON report).
    public package(set) var notStarted: Bool {
        get { rendering?.details.notStarted ?? false }
        set { change { $0.notStarted = newValue } }
    }
    /// Why the input could not be decoded, when that is why this output failed: a run reports
    /// it once per input and remembers it (``IncrementalRun/recordFailures(of:)``).
    public var decodeError: ImageIOError? { failure?.decodeError }

    /// The exact bytes of ``input`` and ``output`` in base64 when they are not UTF-8 (the JSON
    /// strings then show those bytes as `\xE9`: ``RunReport/json(_:)``); nil when they are.
    public var inputBytes: String? { ReportedText.bytes(of: input) }
    public var outputBytes: String? { ReportedText.bytes(of: output) }

    /// Everything but the names and the status, each at its default when not told.
    private struct Details: Equatable {
        var tiles = 0, tilesCopied = 0, pixels = 0, bands = 0
        var decodeSeconds = 0.0, filterSeconds = 0.0, encodeSeconds = 0.0
        var retries = 0
        var checksum: String?
        var failure: OutputFailure?
        var createdFolders: [CreatedFolder] = []
        var width: Int?
        var height: Int?
        var notStarted = false
    }

    /// ``Details`` held once, nil when each is at its default.
    private final class Shared: Sendable {
        let details: Details
        init(_ details: Details) { self.details = details }
        static func of(_ details: Details) -> Shared? { details == Details() ? nil : Shared(details) }
    }

    private mutating func change(_ edit: (inout Details) -> Void) {
        var details = rendering?.details ?? Details()
        edit(&details)
        rendering = Shared.of(details)
    }

    public static func == (a: OutputReport, b: OutputReport) -> Bool {
        a.input == b.input && a.output == b.output && a.variant == b.variant && a.status == b.status
            && (a.rendering?.details ?? Details()) == (b.rendering?.details ?? Details())
    }

    private enum CodingKeys: String, CodingKey {
        case input, output, variant, status, tiles, tilesCopied, pixels, bands, decodeSeconds, filterSeconds, encodeSeconds, retries
        case checksum, error, inputBytes, outputBytes
    }

    public init(
        input: String, output: String, variant: String, status: Status, tiles: Int = 0, tilesCopied: Int = 0,
        pixels: Int = 0, bands: Int = 0,
        decodeSeconds: Double = 0, filterSeconds: Double = 0, encodeSeconds: Double = 0, retries: Int = 0,
        checksum: String? = nil, failure: OutputFailure? = nil
    ) {
        self.input = input
        self.output = output
        self.variant = variant
        self.status = status
        rendering = Shared.of(Details(
            tiles: tiles, tilesCopied: tilesCopied, pixels: pixels, bands: bands, decodeSeconds: decodeSeconds,
            filterSeconds: filterSeconds, encodeSeconds: encodeSeconds, retries: retries, checksum: checksum,
            failure: failure))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(input, forKey: .input)
        try container.encode(output, forKey: .output)
        try container.encode(variant, forKey: .variant)
        try container.encode(status, forKey: .status)
        try container.encode(tiles, forKey: .tiles)
        try container.encode(tilesCopied, forKey: .tilesCopied)
        try container.encode(pixels, forKey: .pixels)
        try container.encode(bands, forKey: .bands)
        try container.encode(decodeSeconds, forKey: .decodeSeconds)
        try container.encode(filterSeconds, forKey: .filterSeconds)
        try container.encode(encodeSeconds, forKey: .encodeSeconds)
        try container.encode(retries, forKey: .retries)
        try container.encodeIfPresent(checksum, forKey: .checksum)
        if let failure {
            var error = container.nestedContainer(keyedBy: ErrorKeys.self, forKey: .error)
            try error.encode(failure.kind, forKey: .kind)
            try error.encodeIfPresent(failure.code, forKey: .code)
            try error.encode(failure.description, forKey: .message)
        }
        try container.encodeIfPresent(inputBytes, forKey: .inputBytes)
        try container.encodeIfPresent(outputBytes, forKey: .outputBytes)
    }

    private enum ErrorKeys: String, CodingKey { case kind, code, message }

    /// An output read back from a report (``RunReport/decode(_:from:)``): a name that is not
    /// UTF-8 comes back with its exact bytes (`inputBytes`, `outputBytes`), the failure as
    /// ``OutputFailure/init(kind:code:message:)`` reads it; ``createdFolders`` are not in reports.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func path(_ key: CodingKeys, bytes: CodingKeys) throws -> String { try Self.path(in: container, key, bytes: bytes) }
        let failure = try container.decodeIfPresent(ReportedFailure.self, forKey: .error)
        self.init(
            input: try path(.input, bytes: .inputBytes), output: try path(.output, bytes: .outputBytes),
            variant: try container.decode(String.self, forKey: .variant), status: try container.decode(Status.self, forKey: .status),
            tiles: try container.decode(Int.self, forKey: .tiles),
            tilesCopied: try container.decodeIfPresent(Int.self, forKey: .tilesCopied) ?? 0,
            pixels: try container.decode(Int.self, forKey: .pixels),
            bands: try container.decodeIfPresent(Int.self, forKey: .bands) ?? 0,
            decodeSeconds: try container.decode(Double.self, forKey: .decodeSeconds),
            filterSeconds: try container.decode(Double.self, forKey: .filterSeconds),
            encodeSeconds: try container.decode(Double.self, forKey: .encodeSeconds),
            retries: try container.decode(Int.self, forKey: .retries),
            checksum: try container.decodeIfPresent(String.self, forKey: .checksum),
            failure: failure.map { OutputFailure(kind: $0.kind, code: $0.code, message: $0.message) })
    }

    /// The name at `key` in `container`, or its exact bytes at `bytes` when it is not UTF-8.
    private static func path(in container: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys, bytes: CodingKeys) throws -> String {
        if let base64 = try container.decodeIfPresent(String.self, forKey: bytes), let data = Data(base64Encoded: base64) {
            return PathEncoding.decode(data).text
        }
        return try container.decode(String.self, forKey: key)
    }

    /// An output's path and status read from its report text, the rest left: what `slurm
    /// finish` asks of each output of its shards' reports (``init(from:)`` of every one of
    /// 300,000 outputs, twice, was a third of the finisher's time).
    package struct PathAndStatus: Decodable {
        package let output: String
        package let status: Status

        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            output = try OutputReport.path(in: container, .output, bytes: .outputBytes)
            status = try container.decode(Status.self, forKey: .status)
        }
    }

    /// The `error` object of a report's output.
    private struct ReportedFailure: Decodable {
        var kind: String
        var code: String?
        var message: String
    }
}

/// How a run was set up, as its report records it.
public struct RunSettings: Sendable, Codable, Equatable {
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
public struct RunReport: Sendable, Codable, Equatable {
    public let job: String
    public let manifest: String
    public let started: Date
    public let finished: Date
    public let settings: RunSettings
    /// The outputs the run did something to (all but those up to date, ``skipped``: counted,
    /// not listed), in plan order; those of a job the farm ran with records, read back from
    /// the state folder (``ReportedOutputs/Spilling``) as a report file gives them. Set, those
    /// up to date among them are counted and not kept.
    public var outputs: [OutputReport] {
        get { reported.all }
        set { reported = .of(newValue) }
    }
    /// The outputs as they are held.
    package private(set) var reported: ReportedOutputs
    /// Outputs removed by `--prune` (recorded outputs whose input is gone), absolute paths.
    public var pruned: [String] = []
    /// The sizes not made because their input is narrower (``NotEnlargedOutput``), in plan
    /// order; those of a job the farm ran, read from its plan as the report is written.
    public var notEnlarged: [NotEnlargedOutput] {
        get { notEnlargedList.all }
        set { notEnlargedList = .listed(newValue) }
    }
    /// The sizes not made as they are held.
    package var notEnlargedList = NotEnlargedList.listed([])
    /// The outputs written or up to date that are published unredacted: their variant takes
    /// regions from a file per input, theirs is missing, and `missing: skip` makes them their
    /// source, unfiltered (``JobPlan/unredacted``). In plan order.
    public var unredacted: [String] = []

    /// A report of `outputs` (those up to date counted, not kept).
    public init(
        job: String, manifest: String, started: Date, finished: Date, settings: RunSettings, outputs: [OutputReport],
        pruned: [String] = []
    ) {
        self.job = job
        self.manifest = manifest
        self.started = started
        self.finished = finished
        self.settings = settings
        reported = .of(outputs)
        self.pruned = pruned
    }

    /// A report of the outputs `reported`.
    package init(
        job: String, manifest: String, started: Date, finished: Date, settings: RunSettings, reported: ReportedOutputs
    ) {
        self.init(job: job, manifest: manifest, started: started, finished: finished, settings: settings, outputs: [])
        self.reported = reported
    }

    // Counted, never filtered into a copy.
    public var written: Int { reported.count(of: .written) }
    public var failed: Int { reported.count(of: .failed) }
    public var stopped: Int { reported.count(of: .stopped) }
    public var cancelled: Int { reported.count(of: .cancelled) }
    public var skipped: Int { reported.count(of: .skipped) }
    public var failedEarlier: Int { reported.count(of: .failedEarlier) }
    /// Inputs the run decoded: those with an output written, or failed after its input was
    /// decoded (an input that is not an image, corrupt or missing was not).
    public var decoded: Int { reported.decoded }
    public var seconds: Double { finished.timeIntervalSince(started) }

    /// The report's counts, as the JSON report's `counts` gives them.
    public struct Counts: Codable, Sendable, Equatable {
        public var written: Int
        public var failed: Int
        public var stopped: Int
        /// Outputs not written because the job was cancelled.
        public var cancelled: Int
        public var skipped: Int
        public var decoded: Int
        /// Recorded outputs removed by `--prune`.
        public var pruned: Int
        /// Outputs not tried because their input failed earlier (``OutputReport/Status/failedEarlier``).
        public var failedEarlier: Int
        /// Sizes not made because their input is narrower (``RunReport/notEnlarged``).
        public var notEnlarged: Int
        /// Outputs published unredacted (``RunReport/unredacted``).
        public var unredacted: Int
    }

    public var counts: Counts {
        Counts(
            written: written, failed: failed, stopped: stopped, cancelled: cancelled, skipped: skipped, decoded: decoded, pruned: pruned.count,
            failedEarlier: failedEarlier, notEnlarged: notEnlargedList.count, unredacted: unredacted.count)
    }

    private enum EncodedKeys: String, CodingKey {
        case job, manifest, started, finished, settings, outputs, pruned, prunedBytes, notEnlarged, unredacted, counts
    }

    /// The stored properties and ``counts``.
    public func encode(to encoder: any Encoder) throws { try encode(to: encoder, withOutputs: true) }

    /// ``encode(to:)``, or without the outputs' and sizes not made's details (empty `outputs`
    /// and `notEnlarged`, the counts those of all): the rest of the report, into which
    /// ``writeJSON(_:list:to:)`` writes them.
    fileprivate func encode(to encoder: any Encoder, withOutputs: Bool) throws {
        var c = encoder.container(keyedBy: EncodedKeys.self)
        try c.encode(job, forKey: .job)
        try c.encode(manifest, forKey: .manifest)
        try c.encode(started, forKey: .started)
        try c.encode(finished, forKey: .finished)
        try c.encode(settings, forKey: .settings)
        try c.encode(withOutputs ? outputs : [], forKey: .outputs)
        try c.encode(pruned, forKey: .pruned)
        if pruned.contains(where: { !PathEncoding.isUTF8($0) }) {
            try c.encode(pruned.map(ReportedText.bytes(of:)), forKey: .prunedBytes)
        }
        try c.encode(withOutputs ? notEnlarged : [], forKey: .notEnlarged)
        try c.encode(unredacted, forKey: .unredacted)
        try c.encode(counts, forKey: .counts)
    }

    /// A report read back from its JSON (``decode(_:from:)``); `counts` are computed from
    /// `outputs`, not read, but for those counted and not listed: `skipped`, and the `stopped`
    /// and `cancelled` not started.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: EncodedKeys.self)
        var pruned = try c.decodeIfPresent([String].self, forKey: .pruned) ?? []
        if let bytes = try c.decodeIfPresent([String?].self, forKey: .prunedBytes), bytes.count == pruned.count {
            pruned = zip(pruned, bytes).map { shown, base64 in
                base64.flatMap { Data(base64Encoded: $0) }.map { PathEncoding.decode($0).text } ?? shown
            }
        }
        self.init(
            job: try c.decode(String.self, forKey: .job), manifest: try c.decode(String.self, forKey: .manifest),
            started: try c.decode(Date.self, forKey: .started), finished: try c.decode(Date.self, forKey: .finished),
            settings: try c.decode(RunSettings.self, forKey: .settings), outputs: try c.decode([OutputReport].self, forKey: .outputs),
            pruned: pruned)
        notEnlarged = try c.decodeIfPresent([NotEnlargedOutput].self, forKey: .notEnlarged) ?? []
        unredacted = try c.decodeIfPresent([String].self, forKey: .unredacted) ?? []
        // Those counted and not listed: up to date, and not started (a report written before
        // they were not listed lists them, and counts them too; a count it does not give is of
        // those it lists).
        if case .held(let listed, var unlisted) = reported, let counts = try c.decodeIfPresent(Unlisted.self, forKey: .counts) {
            for (status, count) in [(OutputReport.Status.skipped, counts.skipped), (.stopped, counts.stopped), (.cancelled, counts.cancelled)] {
                guard let count else { continue }
                unlisted[status] = max(0, count - listed.count { $0.status == status })
            }
            reported = .held(listed: listed, unlisted: unlisted)
        }
    }

    /// The counts of a report's `counts` read back whose outputs may not be listed, when it says.
    private struct Unlisted: Decodable {
        let skipped: Int?
        let stopped: Int?
        let cancelled: Int?
    }
}

extension RunReport {
    /// Writes `value` (a report, or a list of them) as JSON to `path` atomically (a temporary
    /// file beside it, then a rename), creating its folder if need be. Keys sorted, dates in
    /// ISO 8601 (UTC), indented.
    public static func write(_ value: some Encodable, to path: String) throws {
        let bytes = Array(try json(value))
        try replace(path) { write in try write(bytes) }
    }

    /// Writes a list of `count` lists of strings to `path` atomically, the bytes ``encoder()``
    /// makes of the list whole, list `i`'s strings handed to `add` by `strings(i, add)` a batch
    /// at a time: each batch encoded as it comes, nothing held but a piece of the file. A name's
    /// bytes that are not UTF-8 are kept as they are carried (U+F780…U+F7FF, ``PathEncoding``),
    /// not shown as `\xNN`: a file the farm reads back itself and matches names against (a run's
    /// split: shown, a non-UTF-8 output was read back as another name, and its input was in no
    /// shard).
    package static func writeExact(
        listsOf count: Int, to path: String, strings: (_ list: Int, _ add: ([String]) throws -> Void) throws -> Void
    ) throws {
        let encoder = encoder()
        try replace(path) { write in
            try withoutActuallyEscaping(write) { write in try writeLists(count, encoder: encoder, strings: strings, to: write) }
        }
    }

    /// ``writeExact(listsOf:to:strings:)``'s bytes, handed to `write` about 64 KB at a time
    /// (``IndentedPieces``).
    private static func writeLists(
        _ count: Int, encoder: JSONEncoder, strings: (_ list: Int, _ add: ([String]) throws -> Void) throws -> Void,
        to write: @escaping ([UInt8]) throws(SystemCallError) -> Void
    ) throws {
        var out = IndentedPieces(write: write)
        try out.append("[", indent: 0)
        for list in 0..<count {
            try out.append(list == 0 ? "\n  [" : ",\n  [", indent: 0)
            var empty = true
            try strings(list) { batch in
                guard !batch.isEmpty else { return }
                // `[\n  "a",\n  "b"\n]`: its lines between the brackets, two spaces deeper
                // (a string's own line breaks are escaped: each one here ends a line).
                let encoded = try encoder.encode(batch)
                if !empty { try out.append(",", indent: 0) }
                empty = false
                try out.append(encoded[1..<(encoded.count - 2)], indent: 2)
            }
            try out.append(empty ? "\n\n  ]" : "\n  ]", indent: 0)
        }
        try out.append(count == 0 ? "\n\n]" : "\n]", indent: 0)
        try out.flush()
    }

    /// Writes `reports` as JSON to `path` as ``write(_:to:)`` does, the bytes
    /// ``json(_:)`` makes, each output encoded as it is written (``writeJSON(_:list:to:)``).
    public static func write(_ reports: [RunReport], to path: String) throws {
        try replace(path) { write in try writeJSON(reports, list: true, to: write) }
    }

    /// Writes the report in the file at `single` (as ``writeInStateFolder(_:)`` wrote it) to
    /// `path` as a list of that one report, as ``write(_:to:)`` writes `[report]`, byte for
    /// byte: the file's lines read 64 KB at a time and indented, its outputs not encoded again
    /// (`slurm finish` wrote its 300,000 outputs' report twice: a quarter of its time).
    public static func write(listOfReportIn single: String, to path: String) throws {
        try replace(path) { write in
            try withoutActuallyEscaping(write) { write in
                var out = IndentedPieces(write: write)
                try out.append("[", indent: 0)
                try out.append("\n", indent: 2)
                try Syscalls.forEachChunk(of: single) { chunk in try out.append(Data(chunk), indent: 2) }
                try out.append("\n]", indent: 0)
                try out.flush()
            }
        }
    }

    /// Replaces the file at `path` with what `produce` writes, creating its folder if need be.
    private static func replace(
        _ path: String, producing produce: (_ write: ([UInt8]) throws(SystemCallError) -> Void) throws -> Void
    ) throws {
        let folder = PathName.folder(of: path)
        try FileManager.default.createDirectory(atPath: folder.isEmpty ? "." : folder, withIntermediateDirectories: true)
        let descriptor = try Syscalls.openFolder(folder.isEmpty ? "." : folder, followingLinks: true)
        defer { Syscalls.close(descriptor) }
        try JobStateFolder.replace(path, in: descriptor, producing: produce)
    }

    /// Writes this report to ``pathInStateFolder(_:)`` as ``write(_:to:)`` does, but in the
    /// state folder's way: the `reports` folder may not be a symbolic link and must belong to
    /// the running user, not writable by others, and the file is created relative to it,
    /// never through a link (``JobStateFolder/replace(_:in:with:)``). Then the job's reports
    /// there but this one and the newest `kept - 1` others are removed
    /// (``removeOldReports(of:in:descriptor:keeping:except:)``). Returns the path.
    /// - Throws: ``StateError`` naming the file or folder.
    @discardableResult
    public func writeInStateFolder(_ state: String, keeping kept: Int) throws -> String {
        let path = pathInStateFolder(state)
        let reports = PathName.folder(of: path)
        let folder = try JobStateFolder.openFolder(reports)
        defer { Syscalls.close(folder) }
        try JobStateFolder.replace(path, in: folder) { write in
            try Self.writeJSON([self], list: false, to: write)
        }
        Self.removeOldReports(
            of: job, in: reports, descriptor: folder, keeping: kept, except: PathName.lastName(of: path))
        return path
    }

    /// The start of a report of job `job` in the state folder, named as
    /// ``pathInStateFolder(_:)`` names it (`<job>-<UTC start>-<pid>.json`), as its name gives
    /// it; nil for any other name (another job's report, whose name may begin with this one's).
    static func start(ofReportNamed name: String, job: String) -> String? {
        guard let match = name.wholeMatch(of: /(.+)-([0-9]{8}T[0-9]{6}Z)-[0-9]+\.json/), match.1 == job else { return nil }
        return String(match.2)
    }

    /// Removes job `job`'s reports from the state folder's `reports` folder (at `folder`, open
    /// as `descriptor`) but `except` and the newest `kept - 1` others: newest by their start
    /// (their names'), then by when they were written. Only regular files named as the job's
    /// reports are removed; one that cannot be removed stays (a cron job's folder kept to a
    /// size, never a run failed for it).
    static func removeOldReports(of job: String, in folder: String, descriptor: Int32, keeping kept: Int, except: String) {
        let reports = Syscalls.names(inFolder: folder).compactMap { name -> (name: String, start: String, written: Int64)? in
            guard name != except, let start = start(ofReportNamed: name, job: job),
                let info = Syscalls.linkStatus((folder as NSString).appendingPathComponent(name)),
                info.st_mode & S_IFMT == S_IFREG
            else { return nil }
            return (name, start, Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec))
        }
        let newestFirst = reports.sorted { ($0.start, $0.written, $0.name) > ($1.start, $1.written, $1.name) }
        for report in newestFirst.dropFirst(max(0, kept - 1)) { Syscalls.removeQuietly(report.name, in: descriptor) }
    }

    /// `reports` as ``json(_:)`` writes them (`list`: as a list, else the one report alone),
    /// handed to `write` in pieces of about 64 KB: each output and each size not made is
    /// encoded as it is written, into the rest of its report. Encoded whole, a report of
    /// 300,000 outputs took 660 MB of its run; this holds a piece.
    package static func writeJSON(
        _ reports: [RunReport], list: Bool, to write: ([UInt8]) throws(SystemCallError) -> Void
    ) throws {
        try withoutActuallyEscaping(write) { write in try writeJSON(reports, list: list, into: IndentedPieces(write: write)) }
    }

    private static func writeJSON(_ reports: [RunReport], list: Bool, into pieces: IndentedPieces) throws {
        let encoder = encoder()
        var out = pieces
        if list { try out.append(reports.isEmpty ? "[\n\n" : "[", indent: 0) }
        for (index, report) in reports.enumerated() {
            let base = list ? 2 : 0
            if list { try out.append("\n", indent: base) }
            // The report without its two lists, and where each goes in it, in the order they come.
            let head = ReportedText.showingBytes(in: try encoder.encode(Head(report: report)))
            let lists: [(key: String, count: Int, each: ((Data) throws -> Void) throws -> Void)] = [
                ("notEnlarged", report.notEnlargedList.count, { body in
                    try report.notEnlargedList.forEach { try body(ReportedText.showingBytes(in: try encoder.encode($0))) }
                }),
                ("outputs", report.reported.count, { body in try report.reported.forEachEncoded(encoder, body) }),
            ]
            let slots = lists.compactMap { list in
                head.firstRange(of: Data("\n  \"\(list.key)\" : [\n\n  ]".utf8)).map { (list, $0) }
            }
            guard slots.count == lists.count else {
                try out.append(json(report), indent: base)
                continue
            }
            var rest = head.startIndex
            for (list, slot) in slots.sorted(by: { $0.1.lowerBound < $1.1.lowerBound }) {
                try out.append(head[rest..<slot.lowerBound], indent: base)
                rest = slot.upperBound
                if list.count == 0 {
                    try out.append(head[slot], indent: base)
                    continue
                }
                try out.append("\n  \"\(list.key)\" : [", indent: base)
                var position = 0
                try list.each { piece in
                    try out.append("\n", indent: base)
                    try out.append(piece, indent: base + 4)
                    if position < list.count - 1 { try out.append(",", indent: base) }
                    position += 1
                }
                try out.append("\n  ]", indent: base)
            }
            try out.append(head[rest...], indent: base)
            if list, index < reports.count - 1 { try out.append(",", indent: base) }
        }
        if list { try out.append(reports.isEmpty ? "]" : "\n]", indent: 0) }
        try out.flush()
    }

    /// A report as it is encoded without its outputs (``writeJSON(_:list:to:)``).
    private struct Head: Encodable {
        let report: RunReport
        func encode(to encoder: any Encoder) throws { try report.encode(to: encoder, withOutputs: false) }
    }

    /// JSON text written in pieces, each indented by its own number of spaces (as
    /// `JSONEncoder` indents what it nests: every line but an empty one), kept until about
    /// 64 KB are there.
    private struct IndentedPieces {
        let write: ([UInt8]) throws(SystemCallError) -> Void
        var buffer: [UInt8] = []
        /// Whether the last byte written ended a line: the next line's spaces are written
        /// before its first byte, none when it is empty.
        var atLineStart = true

        init(write: @escaping ([UInt8]) throws(SystemCallError) -> Void) { self.write = write }

        mutating func append(_ text: String, indent: Int) throws(SystemCallError) {
            try append(Data(text.utf8), indent: indent)
        }

        /// `bytes`, each line that is not empty after `indent` spaces: line by line, not byte
        /// by byte (byte by byte, through `Data`'s iterator, it was a fifth of the time a
        /// cancelled million-output job took to write its report).
        mutating func append(_ bytes: Data, indent: Int) throws(SystemCallError) {
            bytes.withUnsafeBytes { bytes in
                let newline = UInt8(ascii: "\n")
                var start = bytes.startIndex
                while start < bytes.endIndex {
                    if atLineStart, bytes[start] != newline {
                        buffer.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent))
                    }
                    let end = bytes[start...].firstIndex(of: newline).map { $0 + 1 } ?? bytes.endIndex
                    buffer.append(contentsOf: bytes[start..<end])
                    atLineStart = bytes[end - 1] == newline
                    start = end
                }
            }
            if buffer.count >= 1 << 16 { try flush() }
        }

        mutating func flush() throws(SystemCallError) {
            if !buffer.isEmpty { try write(buffer) }
            buffer.removeAll(keepingCapacity: true)
        }
    }

    /// `value` as the reports and the read commands' `--json` write it (docs/json.md): keys
    /// sorted, dates in ISO 8601 (UTC), indented, strings escaped as JSON escapes them, and
    /// bytes of names that are not UTF-8 as messages show them (``ReportedText``).
    public static func json(_ value: some Encodable) throws -> Data {
        ReportedText.showingBytes(in: try encoder().encode(value))
    }

    /// The encoder of ``json(_:)``.
    package static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    /// `type` (a report, or a list of them) read from `data`, JSON as ``json(_:)`` writes it.
    /// - Throws: `DecodingError` when it is not.
    public static func decode<Value: Decodable>(_ type: Value.Type, from data: Data) throws -> Value {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(type, from: data)
    }

    /// Where the report goes in the state folder: `reports/<job>-<UTC start>-<pid>.json`.
    public func pathInStateFolder(_ state: String) -> String {
        let name = "\(job)-\(started.stateFolderStamp)-\(ProcessInfo.processInfo.processIdentifier).json"
        return (state as NSString).appendingPathComponent("reports/" + name)
    }
}

/// How JSON output gives names that are not UTF-8 (docs/report.md): in every string, each byte
/// that is not UTF-8 (carried as U+F780…U+F7FF, ``PathEncoding``) as messages show it, `\xE9`;
/// a run report adds a path's exact bytes in base64 beside it.
package enum ReportedText {
    /// `json` (UTF-8 JSON text) with every character that stands for a byte written as `\\xNN`
    /// (a JSON backslash, then `xNN`); the same data when it holds none.
    static func showingBytes(in json: Data) -> Data {
        let text = String(decoding: json, as: UTF8.self)
        if PathEncoding.isUTF8(text) { return json }
        var shown = ""
        for scalar in text.unicodeScalars {
            if let byte = PathEncoding.byte(escapedBy: scalar) {
                shown += "\\\\x" + String(byte, radix: 16, uppercase: true)
            } else {
                shown.unicodeScalars.append(scalar)
            }
        }
        return Data(shown.utf8)
    }

    /// The bytes of `path` in base64, or nil when it is UTF-8 (the text says it all).
    static func bytes(of path: String) -> String? {
        PathEncoding.isUTF8(path) ? nil : Data(PathEncoding.bytes(path)).base64EncodedString()
    }
}
