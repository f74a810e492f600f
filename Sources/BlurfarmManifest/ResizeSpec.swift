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

    /// The box's width in pixels (≥ 1), `nil` when only the height is given.
    public var width: Int?
    /// The box's height in pixels (≥ 1), `nil` when only the width is given.
    public var height: Int?
    /// How the image is fitted to the box (default `inside`).
    public var fit: Fit
    /// Whether an image smaller than the box is scaled up; by default it keeps its size.
    public var upscale: Bool

    /// A resize to the box `width` × `height` (either may be `nil`, not both).
    public init(width: Int?, height: Int?, fit: Fit = .inside, upscale: Bool = false) {
        self.width = width
        self.height = height
        self.fit = fit
        self.upscale = upscale
    }
}
