import BlurfarmCore
import BlurfarmDetection
import BlurfarmImageIO
import BlurfarmManifest
import BlurfarmPlugins
import BlurfarmState
import BlurfarmSystem
import Foundation

/// A detector plugin at work for a run (docs/manifest.md#regions-a-detector-finds): the boxes of each image,
/// found on the image as shown (upright) by `PhotoSearch` (in a worker process, or here), and kept
/// in the state folder by the image's content and the detector's identity, so that a rerun,
/// or another variant, does not detect again, while a changed photo, model, plugin or schedule
/// does. The boxes are kept down to the detector's lowest threshold, so that any job's
/// threshold reads them (suppression keeps the better box of two, so the boxes above a
/// threshold are the same whether found at it or below it).
///
/// Safe to use from several threads: each searching here takes a session of its own (a
/// detector's state serves one thread at a time).
public final class RegionDetector: Sendable {
    public var detector: Detector { sessions.detector }
    /// What the cached boxes are filed under (``DetectorSessions/identity(of:schedule:)``): the
    /// model's identity, the plugin library's content hash and the schedule. Part of the
    /// outputs' recipes, and what a worker searching for it must find too
    /// (``DetectionTask/identity``).
    public let identity: String
    /// Where the detector opens its model.
    public var modelFolder: String { sessions.modelFolder }
    public let schedule: DetectionSchedule
    /// `<state>/detections/<name>/<identity hash>/`: one JSON file per image content.
    let cacheFolder: String
    /// The sessions of searches in this process.
    private let sessions: DetectorSessions

    /// The detector `name` of the plugin folders of `loader`, its model opened from
    /// `modelFolder` once (to learn its identity: a missing model is an error here, before
    /// any input runs), its boxes cached below `stateFolder`.
    ///
    /// - Throws: ``PluginError``: no such detector, or its model cannot be opened (the
    ///   detector's message says how to install it).
    public init(
        named name: String, loader: PluginLoader, modelFolder: String, stateFolder: String,
        schedule: DetectionSchedule = .standard
    ) throws(PluginError) {
        let detector = try loader.detector(named: name)
        let session = try detector.session(modelFolder: modelFolder)
        sessions = try DetectorSessions(detector, modelFolder: modelFolder, opened: session)
        identity = sessions.identity(of: session, schedule: schedule)
        self.schedule = schedule
        cacheFolder = (stateFolder as NSString).appendingPathComponent(
            "detections/\(name)/\(ContentHash.of(identity).prefix(16))")
    }

    /// The boxes of the image at `path`, the file of `stamp` whose content hashes to
    /// `contentHash` (the stamp taken before the hash): the cached ones, else those `search`
    /// finds, cached (a cache that cannot be written is told to `cacheProblem`: the boxes are
    /// good, the next run detects again). Scores are the detector's; the boxes are in the pixels
    /// of the image as shown, whose size the result gives.
    ///
    /// The boxes are those of the file of `stamp` only if the file at `path` still has it once
    /// they are had: a photo replaced while it was hashed would have the boxes of its content
    /// filed under the hash of the one before, and given to every later photo with that
    /// content; replaced while it was searched, the boxes of one photo would go to another
    /// (each published a face unredacted). So the boxes are given, and cached, only then;
    /// otherwise this throws `changed()`. Their output is committed only while the input is
    /// still that file (``PlannedVariant/regionsOf``).
    ///
    /// - Throws: what `search` throws, or `changed()`.
    public func boxes<Failure: Error>(
        ofImageAt path: String, stamp: FileStamp, contentHash: String, changed: () -> Failure,
        cacheProblem: (StateError) -> Void = { _ in }, search: () throws(Failure) -> PhotoSearch.Found
    ) throws(Failure) -> RegionFile.Contents {
        let name = "\(contentHash).json"
        if let cached = cached(name) {
            guard FileStamp.of(path) == stamp else { throw changed() }
            return cached
        }
        let found = contents(try search())
        guard FileStamp.of(path) == stamp else { throw changed() }
        do throws(StateError) {
            try JobStateFolder.writeJSON(found, named: name, in: cacheFolder, what: "the boxes of \(ShownName.of(path))")
        } catch {
            cacheProblem(error)
        }
        return found
    }

    /// The boxes of the image at `path`, as ``boxes(ofImageAt:stamp:contentHash:changed:cacheProblem:search:)``
    /// gives them (the file stated and hashed here), searched in this process with the network
    /// on at most `threads` threads.
    ///
    /// - Throws: ``PhotoSearch/Failure``: `decode` when the file cannot be read, or changed
    ///   while it was.
    public func boxes(
        ofImageAt path: String, threads: Int, pixelLimit: Int, memoryLimit: Int,
        confinement: RootConfinement?, cacheProblem: (StateError) -> Void = { _ in }
    ) throws(PhotoSearch.Failure) -> RegionFile.Contents {
        let (stamp, hash) = try Self.stampAndHash(of: path) { PhotoSearch.Failure.decode($0) }
        return try boxes(
            ofImageAt: path, stamp: stamp, contentHash: hash, changed: { .decode(Self.changed(path)) },
            cacheProblem: cacheProblem
        ) { () throws(PhotoSearch.Failure) in
            try search(path, threads: threads, pixelLimit: pixelLimit, memoryLimit: memoryLimit, confinement: confinement)
        }
    }

    /// The stamp of the file at `path`, then its content's hash, the file unchanged meanwhile
    /// (``FileFingerprint/take(_:)``); what cannot be read, or changed, as `failure` makes it of
    /// the reader's error.
    public static func stampAndHash<Failure: Error>(
        of path: String, _ failure: (ImageIOError) -> Failure
    ) throws(Failure) -> (FileStamp, String) {
        do {
            let fingerprint = try FileFingerprint.take(path)
            return (fingerprint.stamp, fingerprint.hash)
        } catch {
            throw failure(ImageIOError(code: .fileUnreadable, path: path, message: error.message))
        }
    }

    /// Why the boxes of the file at `path` are not had: it changed while it was read.
    public static func changed(_ path: String) -> ImageIOError {
        ImageIOError(
            code: .fileUnreadable, path: path,
            message: "changed while its regions were found (replaced or rewritten): nothing of it is written; "
                + "the next run finds them again")
    }

    /// The photo at `path` searched in this process, with a session no other thread uses, the
    /// network on at most `threads` threads.
    ///
    /// - Throws: ``PhotoSearch/Failure``.
    public func search(_ path: String, threads: Int, pixelLimit: Int, memoryLimit: Int, confinement: RootConfinement?)
        throws(PhotoSearch.Failure) -> PhotoSearch.Found
    {
        try sessions.withSession { (session) throws(PhotoSearch.Failure) in
            try PhotoSearch.boxes(
                ofImageAt: path, session: session, schedule: schedule, threads: threads, pixelLimit: pixelLimit,
                memoryLimit: memoryLimit, confinement: confinement)
        }
    }

    /// The cached boxes filed as `name`, when they read as a region file reads (anything else
    /// is detected again).
    func cached(_ name: String) -> RegionFile.Contents? {
        guard let bytes = JobStateFolder.readBytes(named: name, in: cacheFolder, maximumBytes: RegionFile.maximumBytes) else {
            return nil
        }
        return try? RegionFile.contents(of: bytes)
    }

    /// `found`'s boxes (best first, as `PhotoSearch` leaves them) as a region file says them,
    /// at most a region file's number (``RegionFile/maximumBoxes``; the rest score less:
    /// ``DetectedRegions`` fails a photo whose threshold reaches below the boxes kept).
    private func contents(_ found: PhotoSearch.Found) -> RegionFile.Contents {
        let kept = found.boxes.prefix(RegionFile.maximumBoxes)
        return RegionFile.Contents(
            width: Double(found.width), height: Double(found.height),
            boxes: kept.map {
                RegionFile.Contents.Box(
                    x: $0.x, y: $0.y, width: $0.width, height: $0.height, label: detector.label, score: $0.score)
            })
    }

    /// Closes the sessions of this process's searches no thread is using, with their
    /// networks' buffers (a tile's take hundreds of megabytes, kept for the next call): a run's
    /// detection step ends with them, so that its rendering does not carry them (the next step
    /// reopens one, its model read again).
    public func closeIdleSessions() { sessions.closeIdle() }
}
