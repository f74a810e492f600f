/// Removes the metadata blocks libvips 8.14 writes even when it was given none: its JPEG and
/// WebP savers make an EXIF block of their own (orientation, resolution) for any image not
/// saved with `strip`, and `strip` would also drop the ICC profile, which a stripped output
/// keeps (docs/image-io.md, "Metadata"). PNG and TIFF write only what the image carries, so
/// they need no edit.
///
/// Each function walks the container's own structure (JPEG marker segments before the scan,
/// WebP's RIFF chunks) and returns the bytes without the EXIF, XMP and IPTC blocks, or nil
/// when the bytes do not have that structure.
enum MetadataStripping {
    /// A JPEG without APP1 segments holding EXIF ("Exif\0\0") or XMP (Adobe's namespace) and
    /// without APP13 (Photoshop, IPTC). Everything from the start of the scan on is kept as
    /// it is.
    static func jpegKeepingOnlyColourProfile(_ bytes: [UInt8]) -> [UInt8]? {
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return nil }
        let exif: [UInt8] = Array("Exif\0\0".utf8)
        let xmp: [UInt8] = Array("http://ns.adobe.com/xap/1.0/\0".utf8)
        var out: [UInt8] = [0xFF, 0xD8]
        out.reserveCapacity(bytes.count)
        var at = 2
        while at + 1 < bytes.count {
            guard bytes[at] == 0xFF else { return nil }
            let marker = bytes[at + 1]
            if marker == 0xFF { at += 1; continue }  // a fill byte
            if marker == 0xDA || marker == 0xD9 {  // start of scan, end of image: the rest as it is
                out += bytes[at...]
                return out
            }
            if marker == 0x01 || (0xD0...0xD7).contains(marker) {  // no length
                out += bytes[at..<(at + 2)]
                at += 2
                continue
            }
            guard at + 4 <= bytes.count else { return nil }
            let length = Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
            let end = at + 2 + length
            guard length >= 2, end <= bytes.count else { return nil }
            let payload = bytes[(at + 4)..<end]
            let isMetadata =
                (marker == 0xE1 && (payload.starts(with: exif) || payload.starts(with: xmp))) || marker == 0xED
            if !isMetadata { out += bytes[at..<end] }
            at = end
        }
        return nil
    }

    /// A WebP without its EXIF and XMP chunks, the extended header's flags for them cleared
    /// and the RIFF size set to what remains.
    static func webpKeepingOnlyColourProfile(_ bytes: [UInt8]) -> [UInt8]? {
        guard bytes.count >= 12, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WEBP".utf8)
        else { return nil }
        var out = Array(bytes[0..<12])
        var at = 12
        while at < bytes.count {
            guard at + 8 <= bytes.count else { return nil }
            let fourCC = bytes[at..<(at + 4)]
            let size = (0..<4).reduce(0) { $0 | Int(bytes[at + 4 + $1]) << (8 * $1) }
            let end = at + 8 + size + size % 2  // chunks are padded to an even length
            guard end <= bytes.count else { return nil }
            if !(fourCC.elementsEqual("EXIF".utf8) || fourCC.elementsEqual("XMP ".utf8)) {
                var chunk = bytes[at..<end]
                if fourCC.elementsEqual("VP8X".utf8), size >= 1 {
                    chunk[at + 8] &= ~UInt8(0x08 | 0x04)  // the EXIF and XMP flags
                }
                out += chunk
            }
            at = end
        }
        let riffSize = out.count - 8
        guard riffSize <= Int(UInt32.max) else { return nil }
        for i in 0..<4 { out[4 + i] = UInt8(truncatingIfNeeded: riffSize >> (8 * i)) }
        return out
    }
}
