/// The formats blurfarm writes, chosen by the output's extension: the one list, and the one
/// set of rules, that the manifest checker, `blurfarm apply` and the encoder share.
public enum ImageFormat: CaseIterable, Sendable {
    case jpeg, png, webp, tiff

    /// The extensions of output files, lower case, in the order messages list them.
    public static let extensions = ["jpg", "jpeg", "png", "webp", "tif", "tiff"]

    /// The format an extension (any case, without the dot) names, or nil.
    public init?(extension ext: String) {
        switch ext.lowercased() {
        case "jpg", "jpeg": self = .jpeg
        case "png": self = .png
        case "webp": self = .webp
        case "tif", "tiff": self = .tiff
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
        }
    }

    /// Whether the format stores 16-bit samples (else 8).
    public var stores16Bit: Bool { self == .png || self == .tiff }
    /// Whether the format stores an alpha channel.
    public var storesAlpha: Bool { self != .jpeg }

    /// Why a file ending in `.ext` cannot be asked for lossless compression, or nil when it
    /// can: only WebP has a lossless mode to ask for (PNG and TIFF are always lossless, JPEG
    /// never).
    public static func losslessProblem(extension ext: String) -> String? {
        ImageFormat(extension: ext) == .webp ? nil : "'lossless' applies to WebP outputs only; this path ends in '.\(ext)'"
    }
}
