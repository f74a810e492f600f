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

/// A decoded image at the file's depth: the interleaved samples of a ``DecodedImage``'s pixels
/// before they are made premultiplied `Float32` (8- or 16-bit, 3 bands or 4 with straight
/// alpha, as ``BandReader`` reads a file's bands), upright, in sRGB. A worker makes a
/// thumbnail's outputs from these, as the streamed path makes an image's: the same bytes as from
/// the ``DecodedImage`` (``ImageReader/decodeSamples(_:_:pixelLimit:memoryLimit:confinement:)``).
public struct DecodedSamples: Sendable {
    /// The samples, `.uint8` or `.uint16`, with rectangle origin (0, 0) and the displayed size.
    public let samples: AnyPixels
    /// Bits per sample of the source: 8 or 16.
    public let bitDepth: Int
    /// Whether the source had an alpha channel.
    public var hasAlpha: Bool { samples.channels == 4 }
    /// The metadata to carry to outputs of this image.
    public let metadata: ImageMetadata

    /// The ``DecodedImage`` of the same samples: each made premultiplied `Float32` as
    /// ``ImageReader/decode(_:_:pixelLimit:memoryLimit:allocator:confinement:)`` makes them.
    public var floats: DecodedImage {
        DecodedImage(pixels: samples.floats(in: samples.rect), bitDepth: bitDepth, hasAlpha: hasAlpha, metadata: metadata)
    }
}
