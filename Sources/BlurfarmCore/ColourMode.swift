/// Which values the filters average.
public enum ColourMode: String, CaseIterable, Sendable {
    /// Blur the stored (sRGB-encoded) values, as libvips, ImageMagick, Pillow and CSS `blur()` do.
    case gamma
    /// Decode sRGB to linear light, blur, encode back, as Core Image does by default.
    case linear
}
