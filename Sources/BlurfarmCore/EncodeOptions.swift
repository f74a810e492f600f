/// How an output file is encoded (BlurfarmImageIO's `ImageWriter`; the wire protocol carries it to
/// a worker as it is).
public struct EncodeOptions: Sendable, Hashable {
    /// JPEG and lossy WebP quality, 1...100.
    public var quality: Int
    /// WebP only: lossless compression (quality is then ignored).
    public var lossless: Bool
    /// Write no ICC profile, EXIF or XMP.
    public var stripMetadata: Bool
    /// The colour transparent pixels are composited over when the output has no alpha channel
    /// (JPEG): sRGB-encoded red, green, blue in 0...1. White by default.
    public var background: SIMD3<Float>
    /// Bits per sample of the output, 8 or 16 (16 only for PNG and TIFF). nil chooses: 16 for
    /// PNG and TIFF when the source was 16-bit, 8 otherwise.
    public var bitDepth: Int?
    /// JPEG only: progressive (interlaced) scans instead of one baseline scan.
    public var progressive: Bool
    /// JPEG only: how the colour channels are subsampled (default libvips's rule).
    public var subsampling: ChromaSubsampling

    /// Options with the given values; the defaults are quality 90, lossy, metadata kept, white
    /// background, automatic bit depth, baseline JPEG with libvips's automatic subsampling.
    public init(
        quality: Int = 90, lossless: Bool = false, stripMetadata: Bool = false,
        background: SIMD3<Float> = SIMD3(1, 1, 1), bitDepth: Int? = nil, progressive: Bool = false,
        subsampling: ChromaSubsampling = .auto
    ) {
        self.progressive = progressive
        self.subsampling = subsampling
        self.quality = quality
        self.lossless = lossless
        self.stripMetadata = stripMetadata
        self.background = background
        self.bitDepth = bitDepth
    }
}
