/// The formats blurfarm writes, chosen by the output's extension: the one list, and the one
/// set of rules, that the manifest checker, `blurfarm apply` and the encoder share.
public enum ImageFormat: CaseIterable, Sendable {
    case jpeg, png, webp, tiff
    /// AV1 in HEIF (libvips's `heifsave` with AV1 compression), lossy, 8 bits. Only where the
    /// libvips in use has an AV1 encoder: see `ImageWriter.unavailability(of:)`.
    case avif

    /// The extensions of output files, lower case, in the order messages list them.
    public static let extensions = ["jpg", "jpeg", "png", "webp", "tif", "tiff", "avif"]

    /// The format an extension (any case, without the dot) names, or nil.
    public init?(extension ext: String) {
        switch ext.lowercased() {
        case "jpg", "jpeg": self = .jpeg
        case "png": self = .png
        case "webp": self = .webp
        case "tif", "tiff": self = .tiff
        case "avif": self = .avif
        default: return nil
        }
    }

    /// The format's name as people write it.
    public var name: String {
        switch self {
        case .jpeg: "JPEG"
        case .png: "PNG"
        case .webp: "WebP"
        case .tiff: "TIFF"
        case .avif: "AVIF"
        }
    }

    /// Whether the format stores 16-bit samples (else 8).
    public var stores16Bit: Bool { self == .png || self == .tiff }
    /// Whether the format stores an alpha channel.
    public var storesAlpha: Bool { self != .jpeg }

    /// Why a file ending in `.ext` cannot be asked for `option`, or nil when it can: only WebP
    /// has a lossless mode to ask for (PNG and TIFF are always lossless, JPEG never), and only
    /// JPEG has progressive scans and a choice of chroma subsampling.
    public static func problem(with option: FormatOption, extension ext: String) -> String? {
        ImageFormat(extension: ext) == option.format
            ? nil : "'\(option.rawValue)' applies to \(option.format.name) outputs only; this path ends in '.\(ext)'"
    }
}

/// An encoder setting that only one format has, named as the manifest's key.
public enum FormatOption: String, CaseIterable, Sendable {
    /// WebP's lossless mode.
    case lossless
    /// JPEG's progressive (interlaced) scans.
    case progressive
    /// JPEG's chroma subsampling.
    case subsampling

    /// The one format that has the setting.
    public var format: ImageFormat {
        switch self {
        case .lossless: .webp
        case .progressive, .subsampling: .jpeg
        }
    }
}

/// How a JPEG stores its colour (chroma) channels, as libvips's `jpegsave` `subsample_mode`.
public enum ChromaSubsampling: String, CaseIterable, Hashable, Sendable {
    /// libvips's rule: 4:2:0 below quality 90, 4:4:4 from 90 up.
    case auto
    /// Chroma at half the resolution both ways (smaller files, softer colour edges).
    case halved = "4:2:0"
    /// Chroma at full resolution.
    case full = "4:4:4"
}
