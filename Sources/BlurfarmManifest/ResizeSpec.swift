/// How a variant scales its output, written as `resize:` with `width` and/or `height`.
public struct ResizeSpec: Hashable, Sendable {
    /// How the image is fitted to the box.
    public enum Fit: String, CaseIterable, Hashable, Sendable {
        /// Scale to fit inside the box, keeping the aspect ratio (the default). With only a
        /// width or a height, the other side follows the aspect ratio.
        case inside
        /// Scale to cover the whole box, keeping the aspect ratio, and crop the overflow
        /// equally on both sides. Needs both sides.
        case cover
        /// Scale to exactly `width` × `height`, changing the aspect ratio. Needs both sides.
        case exact
    }

    /// Which part of the scaled image `cover` keeps: a gravity (the side or corner kept, as
    /// sharp's `position`) or one of libvips's smart crops (`vips_smartcrop`'s `interesting`, as
    /// vipsthumbnail's `--smartcrop`).
    public enum Crop: String, CaseIterable, Hashable, Sendable {
        /// The middle: the overflow cut equally from both sides (the default).
        case centre
        case north, northEast = "north-east", east, southEast = "south-east", south
        case southWest = "south-west", west, northWest = "north-west"
        /// The region libvips finds most interesting to people: skin tones, saturated colour,
        /// strong edges.
        case attention
        /// The region with the most entropy (detail).
        case entropy
    }

    /// The sharpening sigma when `sharpen: true`: `vips_sharpen`'s default.
    public static let defaultSharpenSigma = 0.5

    /// The widths of a variant written at several sizes (`sizes: [256, 512, 1024]`, for
    /// `srcset`), ascending and distinct, each an output of its own whose path has `{size}`;
    /// empty for one size. With sizes, `width` and `height` are nil and the fit is `inside`.
    public var sizes: [Int]

    /// The box's width in pixels (≥ 1), `nil` when only the height is given.
    public var width: Int?
    /// The box's height in pixels (≥ 1), `nil` when only the width is given.
    public var height: Int?
    /// How the image is fitted to the box (default `inside`).
    public var fit: Fit
    /// Whether an image smaller than the box is scaled up; by default it keeps its size.
    public var upscale: Bool
    /// What `cover` keeps of the scaled image (default `centre`; `cover` only).
    public var crop: Crop
    /// The sigma of the sharpening applied after the resize (`vips_sharpen`), `nil` for none
    /// (the default).
    public var sharpen: Double?

    /// A resize to the box `width` × `height` (either may be `nil`, not both, unless `sizes` is
    /// given).
    public init(
        width: Int?, height: Int?, fit: Fit = .inside, upscale: Bool = false, crop: Crop = .centre,
        sharpen: Double? = nil, sizes: [Int] = []
    ) {
        self.sizes = sizes
        self.width = width
        self.height = height
        self.fit = fit
        self.upscale = upscale
        self.crop = crop
        self.sharpen = sharpen
    }
}

extension ResizeSpec {
    /// A box as `apply --resize` writes it: `WIDTHxHEIGHT`, `WIDTH` (or `WIDTHx`) or `xHEIGHT`, in
    /// pixels, each side at least 1; nil when `text` is none of these.
    public static func box(_ text: String) -> (width: Int?, height: Int?)? {
        let parts = text.split(separator: "x", maxSplits: 1, omittingEmptySubsequences: false)
        func side(_ text: Substring?) -> Int?? {
            guard let text, !text.isEmpty else { return .some(nil) }
            guard let value = Int(text), value >= 1 else { return nil }
            return .some(value)
        }
        guard let width = side(parts.first), let height = side(parts.count > 1 ? parts[1] : nil),
            width != nil || height != nil
        else { return nil }
        return (width, height)
    }
}
