/// How a thumbnail fits the requested box.
public enum ThumbnailFit: String, Sendable, CaseIterable {
    /// The whole image inside the box, aspect ratio kept: the limiting side equals the box's,
    /// the other is at most the box's.
    case inside
    /// The box filled, aspect ratio kept, the overflow cut off equally on both sides (centred).
    /// Needs both a width and a height.
    case cover
    /// Exactly the box, aspect ratio not kept. Needs both a width and a height.
    case exact
}

/// What a `cover` thumbnail keeps of the scaled image: a gravity (the side or corner kept, as
/// sharp's `position`) or a libvips smart crop (`vips_smartcrop`, as vipsthumbnail's
/// `--smartcrop`).
public enum ThumbnailCrop: String, Sendable, CaseIterable {
    /// The middle: the overflow cut equally from both sides.
    case centre
    case north, northEast = "north-east", east, southEast = "south-east", south
    case southWest = "south-west", west, northWest = "north-west"
    /// libvips's `attention` strategy: the region with the most skin tone, saturation and edges.
    case attention
    /// libvips's `entropy` strategy: the region with the most detail.
    case entropy
}

/// How an input is decoded: whole, as one thumbnail, or as thumbnails at several widths from
/// one decode (ImageIO's `ImageReader.decode`). One value for every caller (the coordinator's
/// image lanes, the workers' image tasks, which the wire protocol carries it to), so that an
/// input decodes to the same pixels wherever it is decoded.
public enum DecodeRequest: Sendable, Equatable {
    /// ImageIO's `ImageReader.read`.
    case whole
    /// ImageIO's `ImageReader.thumbnail`.
    case thumbnail(width: Int?, height: Int?, fit: ThumbnailFit, upscale: Bool, crop: ThumbnailCrop, sharpen: Double?)
    /// ImageIO's `ImageReader.thumbnails`.
    case thumbnails(widths: [Int], upscale: Bool, sharpen: Double?)

    /// The largest side a thumbnail may be asked for: libvips's largest image side
    /// (`VIPS_MAX_COORD`). A manifest's `resize` refuses more, as the readers do.
    public static let largestThumbnailSide = 10_000_000

    /// Images the request decodes: one, or one per width.
    public var imageCount: Int {
        if case .thumbnails(let widths, _, _) = self { return widths.count }
        return 1
    }
}
