import BlurfarmCore

/// How a variant scales its output, written as `resize:` with `width` and/or `height`.
public struct ResizeSpec: Hashable, Sendable {
    /// How the image fits the box (`fit:`): `inside` (the default: the aspect ratio kept, with
    /// only a width or a height the other side follows it), `cover` (the box filled, the
    /// overflow cropped as `crop` says; both sides) or `exact` (the box, the aspect ratio not
    /// kept; both sides): the image reader's own, one name for one concept.
    public typealias Fit = ThumbnailFit

    /// Which part of the scaled image `cover` keeps (`crop:`): a gravity (the side or corner
    /// kept, as sharp's `position`), the middle by default, or one of libvips's smart crops
    /// (`attention`, `entropy`): the image reader's own.
    public typealias Crop = ThumbnailCrop

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
