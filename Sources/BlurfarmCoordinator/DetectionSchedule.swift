import BlurfarmCore

/// How an image is searched for a detector's objects (docs/manifest.md#regions-a-detector-finds): the
/// algorithm is ``RegionDetector``'s, the schedule is these tunables, as RenderSchedule is the
/// render's. A detector's network is trained on objects of a range of sizes in images of a
/// moderate size: a 20 px face in a 24 MP photo is lost when the photo is made small enough
/// for one pass, and a face filling the photo is not seen by a tile. So a large image is
/// searched twice: whole, made smaller (the large objects), and in overlapping tiles at full
/// size (the small ones), as the farm renders tiles with halos.
public struct DetectionSchedule: Hashable, Sendable {
    /// An image whose longer side is at most this is searched once, whole, at full size; a
    /// larger one is also searched whole made this size (its longer side). CenterFace keeps
    /// finding faces down to about 16 px: at 1024 px, every face of at least 1/64 of a photo's
    /// longer side (94 px in a 6000 px, 24 MP photo) is found here.
    public var wholeSide: Int
    /// The side of the square tiles a larger image is searched in at full size: the network's
    /// time is proportional to the pixels, its memory too (about 150 MB for a 1024 px tile).
    public var tileSide: Int
    /// How far neighbouring tiles overlap, as a halo does: every face up to this size lies
    /// whole in some tile (a box a tile cuts, touching an edge inside the image, is left to
    /// the tile that holds it whole). It overlaps the sizes the whole pass finds (faces from 94
    /// px in a 24 MP photo, 188 px in a 96 MP one) up to 256 MP photos (16384 px, 256 / 16).
    public var overlap: Int

    public init(wholeSide: Int = 1024, tileSide: Int = 1024, overlap: Int = 256) {
        precondition(wholeSide > 0 && tileSide > overlap && overlap >= 0, "a detection schedule of \(tileSide) px tiles overlapping \(overlap) px")
        self.wholeSide = wholeSide
        self.tileSide = tileSide
        self.overlap = overlap
    }

    public static let standard = DetectionSchedule()

    /// What the cached boxes of a schedule are named by: another schedule finds other boxes.
    public var key: String { "whole\(wholeSide)-tiles\(tileSide)-overlap\(overlap)" }

    /// Whether a `width` × `height` image is searched in tiles (and whole, made smaller), or
    /// once whole at full size.
    public func isTiled(width: Int, height: Int) -> Bool { max(width, height) > wholeSide }

    /// The tiles a `width` × `height` image is searched in at full size: rows and columns of
    /// ``tileSide`` squares stepping ``tileSide`` - ``overlap``, the last of each flush with the
    /// image's edge; none when the image is searched whole (``isTiled(width:height:)``).
    public func tiles(width: Int, height: Int) -> [Rect] {
        guard isTiled(width: width, height: height) else { return [] }
        let xs = starts(width), ys = starts(height)
        return ys.flatMap { y in
            xs.map { x in Rect(x: x, y: y, width: min(tileSide, width - x), height: min(tileSide, height - y)) }
        }
    }

    /// The starts of the tiles along an `extent`: 0, step, 2 step… and the last flush with the
    /// end (one tile when it fits).
    func starts(_ extent: Int) -> [Int] {
        if extent <= tileSide { return [0] }
        let step = tileSide - overlap
        var starts = Array(stride(from: 0, to: extent - tileSide, by: step))
        starts.append(extent - tileSide)
        return starts
    }
}
