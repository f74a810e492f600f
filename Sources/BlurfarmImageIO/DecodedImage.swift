import BlurfarmCore

/// A decoded image: premultiplied RGBA Float32 pixels in sRGB-encoded values, upright.
///
/// See ``ImageReader/read(_:pixelLimit:memoryLimit:allocator:)`` for exactly how file samples become these values.
public struct DecodedImage: Sendable {
    /// The pixels, with rectangle origin (0, 0) and the displayed (oriented) size.
    public let pixels: PixelBuffer
    /// Bits per sample of the source: 8 or 16.
    public let bitDepth: Int
    /// Whether the source had an alpha channel (images without one decode with alpha 1).
    public let hasAlpha: Bool
    /// The metadata to carry to outputs of this image.
    public let metadata: ImageMetadata
}
