import BlurfarmSystem

/// The header libvips's `webpload` (libwebp's demuxer) reads of a plain WebP, read from its
/// chunks' first bytes without starting libvips: its size and whether it has alpha (as
/// ``PNGHeader`` for a PNG: about 0.2 ms of GLib's type system a small file in libvips).
///
/// Plain means a still image whose libvips header is known (``read(_:)`` is nil otherwise, and
/// libvips is asked): `RIFF`, a size that is the file's own less 8, `WEBP`, then chunks that end
/// the file exactly, one of: a `VP8 ` or a `VP8L` alone (the simple format); `VP8X` then `VP8 `
/// (no alpha), `VP8X` then `ALPH` then `VP8 ` (alpha), or `VP8X` then `VP8L` (alpha as its bit
/// says), the `VP8X` flags saying alpha or nothing (no profile, EXIF, XMP nor animation) and
/// its canvas the image's size (what libvips's encoder writes). `VP8 ` (lossy): a key frame
/// shown, of version 0 to 3, whose first partition fits the chunk, the start code, a width and
/// height of 1 or more (their scale bits ignored, as libwebp does). `VP8L` (lossless): the
/// signature byte, version 0, the width and height, and the alpha bit. `WebPHeaderTests` holds
/// each to libvips's own header of the same file.
package struct WebPHeader: Sendable, Hashable {
    package var width: Int
    package var height: Int
    package var hasAlpha: Bool

    /// The header of the WebP open on `fd` (its size from `fstat`, its chunks' first bytes
    /// read), or nil when it is not a plain WebP, or cannot be read.
    package static func read(_ fd: Int32) -> WebPHeader? {
        guard let size = try? Syscalls.status(of: fd).st_size else { return nil }
        return parse(fileSize: Int(size)) { offset, count in
            (try? Syscalls.readBytes(fd, count: count, at: offset)).flatMap { $0.count == count ? $0 : nil }
        }
    }

    /// The header of the WebP of `fileSize` bytes whose bytes `read(offset, count)` gives (nil
    /// when it cannot), or nil (see the type).
    package static func parse(fileSize: Int, read: (Int, Int) -> [UInt8]?) -> WebPHeader? {
        func tag(_ bytes: [UInt8], _ at: Int) -> String { String(decoding: bytes[at..<(at + 4)], as: UTF8.self) }
        guard let riff = read(0, 12), tag(riff, 0) == "RIFF", tag(riff, 8) == "WEBP", little(riff, 4, 4) + 8 == fileSize
        else { return nil }
        // The chunks, each with its padding byte, to the file's end: at most three.
        var chunks: [(tag: String, offset: Int, size: Int)] = []
        var at = 12
        while at < fileSize {
            guard chunks.count < 3, let head = read(at, 8) else { return nil }
            let size = little(head, 4, 4)
            chunks.append((tag(head, 0), at + 8, size))
            at += 8 + size + (size & 1)
        }
        guard at == fileSize, let last = chunks.last else { return nil }
        guard let image = image(last.tag, size: last.size, read(last.offset, min(last.size, 10)) ?? []) else { return nil }
        switch chunks.map(\.tag) {
        case ["VP8 "], ["VP8L"]:
            return image
        case ["VP8X", "VP8 "], ["VP8X", "ALPH", "VP8 "], ["VP8X", "VP8L"]:
            guard chunks[0].size == 10, let extended = read(chunks[0].offset, 10) else { return nil }
            let alpha = chunks.count == 3 || image.hasAlpha
            guard extended[0] == (alpha ? 0x10 : 0), little(extended, 4, 3) + 1 == image.width,
                little(extended, 7, 3) + 1 == image.height
            else { return nil }
            return WebPHeader(width: image.width, height: image.height, hasAlpha: alpha)
        default:
            return nil
        }
    }

    /// The image of a `VP8 ` or `VP8L` chunk of `size` bytes that begins with `bytes`.
    private static func image(_ tag: String, size: Int, _ bytes: [UInt8]) -> WebPHeader? {
        func little(_ at: Int, _ count: Int) -> Int { Self.little(bytes, at, count) }
        switch tag {
        case "VP8 ":
            guard bytes.count == 10 else { return nil }
            let frame = little(0, 3)
            let (keyFrame, version, shown, partition) = (frame & 1 == 0, (frame >> 1) & 7, (frame >> 4) & 1 == 1, frame >> 5)
            guard keyFrame, version <= 3, shown, partition < size, bytes[3] == 0x9D, bytes[4] == 0x01, bytes[5] == 0x2A
            else { return nil }
            let (width, height) = (little(6, 2) & 0x3FFF, little(8, 2) & 0x3FFF)
            guard width > 0, height > 0 else { return nil }
            return WebPHeader(width: width, height: height, hasAlpha: false)
        case "VP8L":
            guard bytes.count >= 5, bytes[0] == 0x2F else { return nil }
            let bits = little(1, 4)
            guard bits >> 29 == 0 else { return nil }
            return WebPHeader(width: (bits & 0x3FFF) + 1, height: ((bits >> 14) & 0x3FFF) + 1, hasAlpha: (bits >> 28) & 1 == 1)
        default:
            return nil
        }
    }

    /// The little-endian number of `count` bytes at `at` in `bytes`.
    private static func little(_ bytes: [UInt8], _ at: Int, _ count: Int) -> Int {
        (0..<count).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) }
    }
}
