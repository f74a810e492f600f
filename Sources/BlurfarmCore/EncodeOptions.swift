/// How an output file is encoded (BlurfarmImageIO's `ImageWriter`; the wire protocol carries it to
/// a worker as it is).
public struct EncodeOptions: Sendable, Hashable {
    /// JPEG and lossy WebP quality, 1...100.
    public var quality: Int
    /// WebP only: lossless compression (quality is then ignored).
    public var lossless: Bool
    /// Which metadata the output carries (libraries' default: all of it, `keep`).
    public var metadata: MetadataPolicy
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
    /// WebP (0...6) and AVIF (0...9) only: how hard the encoder works for a smaller file, nil
    /// for libvips's default (4 for both).
    public var effort: Int?
    /// JPEG only: Huffman tables computed for the image (smaller files, the same pixels).
    public var optimizeCoding: Bool

    /// Options with the given values; the defaults are quality 90, lossy, all metadata kept, white
    /// background, automatic bit depth, baseline JPEG with libvips's automatic subsampling.
    public init(
        quality: Int = 90, lossless: Bool = false, metadata: MetadataPolicy = .keep,
        background: SIMD3<Float> = SIMD3(1, 1, 1), bitDepth: Int? = nil, progressive: Bool = false,
        subsampling: ChromaSubsampling = .auto, effort: Int? = nil, optimizeCoding: Bool = false
    ) {
        self.effort = effort
        self.optimizeCoding = optimizeCoding
        self.progressive = progressive
        self.subsampling = subsampling
        self.quality = quality
        self.lossless = lossless
        self.metadata = metadata
        self.background = background
        self.bitDepth = bitDepth
    }
}

/// Which of the source's metadata an output carries (the manifest's `metadata:`, `apply
/// --metadata`; docs/image-io.md, "Metadata").
public enum MetadataPolicy: String, CaseIterable, Hashable, Sendable {
    /// The ICC profile, EXIF (orientation 1) and XMP.
    case keep
    /// The ICC profile alone, which says what the colours mean: no EXIF (camera, GPS
    /// position), XMP or IPTC. The web's default.
    case keepICC = "keep-icc"
    /// Nothing: the colours converted to sRGB first when the source has a profile (libvips's
    /// `icc_transform`), so that they mean the same without one.
    case strip
}
