import BlurfarmState
import BlurfarmCore
import BlurfarmCoordinator
import BlurfarmImageIO
import Synchronization

/// The web page's thumbnail of the last output written: a JPEG at most 320 px wide (no
/// metadata), made from the file when first asked for and kept while the file is the same
/// one (its stamp: inode, size and times). Every page load and every open tab asks for it;
/// only a new output or a rewritten file is decoded again.
final class ThumbnailCache: Sendable {
    /// The largest width.
    static let width = 320

    private let render: @Sendable (String) -> [UInt8]?
    /// The last thumbnail made: its file's path and stamp, and its bytes.
    private let last = Mutex<(path: String, stamp: FileStamp, jpeg: [UInt8])?>(nil)

    /// A cache making thumbnails with `render` (the JPEG of a path, nil when it cannot be read
    /// as an image).
    init(render: @escaping @Sendable (String) -> [UInt8]? = ThumbnailCache.thumbnail(of:)) {
        self.render = render
    }

    /// The thumbnail of the file at `path`, read from `source` when given (the file opened,
    /// `/proc/self/fd/N`: its stamp and bytes are that file's, whatever `path` leads to now),
    /// or nil when it cannot be read as an image.
    func jpeg(of path: String, reading source: String? = nil) -> [UInt8]? {
        // The stamp is taken before the file is read: a file rewritten meanwhile has a newer one.
        guard let stamp = FileStamp.of(source ?? path) else { return nil }
        if let kept = last.withLock({ $0 }), kept.path == path, kept.stamp == stamp { return kept.jpeg }
        guard let jpeg = render(source ?? path) else { return nil }
        last.withLock { $0 = (path, stamp, jpeg) }
        return jpeg
    }

    /// The thumbnail of `path` made from the file.
    static func thumbnail(of path: String) -> [UInt8]? {
        guard let image = try? ImageReader.thumbnail(path, width: width, height: nil, fit: .inside, upscale: false)
        else { return nil }
        var options = EncodeOptions()
        options.metadata = .keepICC
        options.quality = 80
        return try? ImageWriter.encode(
            image.pixels, extension: "jpg", named: path, sourceBitDepth: 8, sourceHadAlpha: image.hasAlpha,
            metadata: nil, options: options
        ).bytes
    }
}
