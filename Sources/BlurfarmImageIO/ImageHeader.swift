/// What an image file's header says, read without decoding any pixel.
public struct ImageHeader: Sendable, Hashable {
    /// Width in pixels as the image displays, after its EXIF orientation is applied
    /// (a 1280×853 file with orientation 6 has width 853).
    public let width: Int
    /// Height in pixels as the image displays, after its EXIF orientation is applied.
    public let height: Int
    /// Bits per sample of the decoded pixels: 8, or 16 for 16-bit files (and for files whose
    /// samples are wider than 8 bits in another format, e.g. float TIFF).
    public let bitDepth: Int
    /// Whether the file has an alpha channel.
    public let hasAlpha: Bool
    /// The libvips loader that recognised the file, e.g. "jpegload", "pngload".
    public let loader: String
    /// Whether the file embeds an ICC profile.
    public let hasICCProfile: Bool
    /// The EXIF orientation stored in the file, 1...8 (1, upright, when there is none).
    public let orientation: Int
    /// The bytes ``ImageReader/read(_:pixelLimit:memoryLimit:allocator:)`` allocates decoding
    /// the file whole (``DecodeMemory/whole(_:width:height:copiesSource:)``), checked against
    /// its memory limit; nil when that is more than an `Int` holds.
    public let decodeMemory: Int?
    /// The image as the memory estimates see it (for ``DecodeMemory/streamed(_:_:)``).
    public let decodeSource: DecodeMemory.Source

    /// The number of pixels, `width * height`.
    public var pixelCount: Int { width * height }
}
