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
    /// has a lossless mode to ask for (PNG and TIFF are always lossless, JPEG never), only JPEG
    /// has progressive scans, a choice of chroma subsampling and optimized coding, and only
    /// WebP and AVIF an effort.
    public static func problem(with option: FormatOption, extension ext: String) -> String? {
        ImageFormat(extension: ext).map(option.formats.contains) == true
            ? nil : "'\(option.rawValue)' applies to \(option.formatNames) outputs only; this path ends in '.\(ext)'"
    }

    /// The largest `effort` the format's encoder takes (libvips's `webpsave` 0–6, `heifsave`
    /// 0–9), or nil when it has none.
    public var maximumEffort: Int? {
        switch self {
        case .webp: 6
        case .avif: 9
        default: nil
        }
    }
}

/// An encoder setting that only some formats have, named as the manifest's key.
public enum FormatOption: String, CaseIterable, Sendable {
    /// WebP's lossless mode.
    case lossless
    /// JPEG's progressive (interlaced) scans.
    case progressive
    /// JPEG's chroma subsampling.
    case subsampling
    /// JPEG's optimized Huffman coding.
    case optimizeCoding = "optimize-coding"
    /// The effort of WebP's and AVIF's encoders.
    case effort

    /// The formats that have the setting.
    public var formats: [ImageFormat] {
        switch self {
        case .lossless: [.webp]
        case .progressive, .subsampling, .optimizeCoding: [.jpeg]
        case .effort: [.webp, .avif]
        }
    }

    /// ``formats`` as a message names them: "JPEG", "WebP and AVIF".
    public var formatNames: String { formats.map(\.name).joined(separator: " and ") }
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
