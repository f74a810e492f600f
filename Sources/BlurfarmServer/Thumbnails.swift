import BlurfarmImageIO

/// The web page's thumbnail of the last output written: a JPEG at most 320 px wide, made
/// from the file on demand (no metadata).
enum Thumbnails {
    /// The largest width.
    static let width = 320

    /// The JPEG bytes of the thumbnail of `path`, or nil when it cannot be read as an image.
    static func jpeg(of path: String) -> [UInt8]? {
        guard let image = try? ImageReader.thumbnail(path, width: width, height: nil, fit: .inside, upscale: false)
        else { return nil }
        var options = EncodeOptions()
        options.stripMetadata = true
        options.quality = 80
        return try? ImageWriter.encode(
            image.pixels, extension: "jpg", named: path, sourceBitDepth: 8, sourceHadAlpha: image.hasAlpha,
            metadata: nil, options: options
        ).bytes
    }
}
