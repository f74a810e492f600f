/// The EXIF edits blurfarm makes, setting the orientation tag of IFD0 to 1 and taking out
/// the images it embeds, and the one EXIF reading: that tag.
///
/// EXIF is a TIFF structure (byte order mark, IFD0 offset, then 12-byte entries), here
/// optionally preceded by "Exif\0\0" as libvips stores it. A malformed structure is left as it
/// is (the writer also tells libvips the orientation is 1, and libvips rewrites the tag); only
/// the pictures in it are zeroed wherever they are.
package enum EXIF {
    static let orientationTag = 0x0112
    static let typeShort = 3
    static let typeLong = 4
    static let stripOffsetsTag = 0x0111, stripByteCountsTag = 0x0117
    static let jpegOffsetTag = 0x0201, jpegLengthTag = 0x0202  // JPEGInterchangeFormat(Length)
    static let exifIFDTag = 0x8769, makerNoteTag = 0x927C

    /// IFD0's orientation: 1 when the tag is absent, its value when it is a SHORT of 1...8;
    /// nil when the structure or the tag is not well formed (libvips's own reading decides).
    package static func orientation(_ bytes: [UInt8]) -> Int? {
        guard let entry = orientationEntry(bytes) else { return nil }
        guard let (at, littleEndian) = entry else { return 1 }
        let value = TIFFView(bytes: bytes, littleEndian: littleEndian).u16(at + 8)
        return (1...8).contains(value) ? value : nil
    }

    /// `bytes` with IFD0's orientation tag (when present and well formed) set to 1.
    package static func withOrientationReset(_ bytes: [UInt8]) -> [UInt8] {
        guard let entry = orientationEntry(bytes), let (at, littleEndian) = entry else { return bytes }
        var out = bytes
        // A SHORT value of count 1 sits in the first two bytes of the value field.
        out[at + 8] = littleEndian ? 1 : 0
        out[at + 9] = littleEndian ? 0 : 1
        return out
    }

    /// `bytes` without the pictures of the original it carries: IFD1 (the thumbnail, a small
    /// copy of the whole photo) unlinked and its image bytes zeroed, and every other image file
    /// in it (a maker note's preview: JPEG, PNG or any ``PictureSignature`` found anywhere)
    /// zeroed. An output's pixels are filtered, redacted or resized: its EXIF must not hold the
    /// photo as it was (docs/image-io.md, "Metadata"). Offsets stay as they were; libvips,
    /// re-reading the block, drops what nothing points to. Malformed structure is left alone,
    /// but the pictures are zeroed wherever they are.
    package static func withoutPictures(_ bytes: [UInt8]) -> [UInt8] {
        var out = bytes
        let tiff = tiffStart(out)
        var makerNotes: [Range<Int>] = []
        if let tiff {
            unlinkThumbnail(&out, tiff: tiff.at, littleEndian: tiff.littleEndian)
            makerNotes = makerNoteRanges(out, tiff: tiff.at, littleEndian: tiff.littleEndian)
        }
        zeroPictures(&out, header: tiff?.at, makerNotes: makerNotes)
        return out
    }

    /// Sets IFD0's link to IFD1 to 0 and zeroes the bytes IFD1's thumbnail entries point to
    /// (JPEGInterchangeFormat and its length; StripOffsets and StripByteCounts).
    private static func unlinkThumbnail(_ out: inout [UInt8], tiff: Int, littleEndian: Bool) {
        let view = TIFFView(bytes: out, littleEndian: littleEndian)
        let u16 = view.u16, u32 = view.u32
        func zero(from start: Int, count: Int) {
            let lower = tiff + start
            guard start >= 0, count > 0, lower < out.count else { return }
            for i in lower..<min(out.count, lower + count) { out[i] = 0 }
        }
        let ifd0 = tiff + u32(tiff + 4)
        guard ifd0 >= tiff + 8, ifd0 + 2 <= out.count else { return }
        let link = ifd0 + 2 + u16(ifd0) * 12
        guard link + 4 <= out.count else { return }
        let ifd1 = tiff + u32(link)
        for i in link..<(link + 4) { out[i] = 0 }
        guard ifd1 > tiff, ifd1 + 2 <= out.count else { return }
        // An entry's values: inline when they fit in its 4-byte field, else at its offset.
        func values(_ entry: Int) -> [Int] {
            let type = u16(entry + 2), count = u32(entry + 4)
            let size = type == typeShort ? 2 : type == typeLong ? 4 : 0
            guard size > 0, count > 0, count <= 1 << 16 else { return [] }
            let start = count * size <= 4 ? entry + 8 : tiff + u32(entry + 8)
            guard start >= 0, start + count * size <= out.count else { return [] }
            return (0..<count).map { size == 2 ? u16(start + $0 * 2) : u32(start + $0 * 4) }
        }
        var tags: [Int: [Int]] = [:]
        for index in 0..<u16(ifd1) {
            let entry = ifd1 + 2 + index * 12
            guard entry + 12 <= out.count else { break }
            tags[u16(entry)] = values(entry)
        }
        for (offsets, lengths) in [(jpegOffsetTag, jpegLengthTag), (stripOffsetsTag, stripByteCountsTag)] {
            for (start, count) in zip(tags[offsets] ?? [], tags[lengths] ?? []) { zero(from: start, count: count) }
        }
    }

    /// Zeroes every image file in `out` but the EXIF's own TIFF header at `header`: from its
    /// signature (``PictureSignature/signature(in:at:anywhere:)``) over the length its
    /// structure gives, or, when that is not known (a JPEG without its end, a TIFF, a GIF…),
    /// to the end of the maker note it is in, or of the block (fail closed).
    private static func zeroPictures(_ out: inout [UInt8], header: Int?, makerNotes: [Range<Int>]) {
        var at = 0
        while at < out.count {
            guard at != header, let signature = PictureSignature.signature(in: out, at: at, anywhere: true) else {
                at += 1
                continue
            }
            let end = makerNotes.first { $0.contains(at) }?.upperBound ?? out.count
            let length = signature.length(in: out, at: at, end: end) ?? (end - at)
            for i in at..<(at + length) { out[i] = 0 }
            at += max(length, 1)
        }
    }

    /// Where the values of the maker notes (tag 0x927C, in IFD0 or the EXIF IFD) are.
    private static func makerNoteRanges(_ bytes: [UInt8], tiff: Int, littleEndian: Bool) -> [Range<Int>] {
        let view = TIFFView(bytes: bytes, littleEndian: littleEndian)
        let u16 = view.u16, u32 = view.u32
        /// The entries of the IFD at TIFF offset `offset`: tag, count, and where the value is.
        func entries(_ offset: Int) -> [(tag: Int, count: Int, value: Int)] {
            let ifd = tiff + offset
            guard offset >= 8, ifd + 2 <= bytes.count else { return [] }
            return (0..<u16(ifd)).compactMap { index in
                let entry = ifd + 2 + index * 12
                guard entry + 12 <= bytes.count else { return nil }
                let count = u32(entry + 4)
                return (tag: u16(entry), count: count, value: count <= 4 ? entry + 8 : tiff + u32(entry + 8))
            }
        }
        let ifd0 = entries(u32(tiff + 4))
        let exifIFD = ifd0.first { $0.tag == exifIFDTag && $0.count == 1 }.map { entries(u32($0.value)) } ?? []
        return (ifd0 + exifIFD).compactMap { entry in
            guard entry.tag == makerNoteTag, entry.value >= 0, entry.value < bytes.count else { return nil }
            return entry.value..<min(bytes.count, entry.value + entry.count)
        }
    }

    /// Where the TIFF structure starts in `bytes` (after an "Exif\0\0" header) and its byte
    /// order; nil when it has no byte order mark and magic number.
    private static func tiffStart(_ bytes: [UInt8]) -> (at: Int, littleEndian: Bool)? {
        let exifHeader: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0, 0]  // "Exif\0\0"
        let tiff = bytes.starts(with: exifHeader) ? exifHeader.count : 0
        guard bytes.count >= tiff + 8 else { return nil }
        let littleEndian: Bool
        switch (bytes[tiff], bytes[tiff + 1]) {
        case (0x49, 0x49): littleEndian = true  // "II"
        case (0x4D, 0x4D): littleEndian = false  // "MM"
        default: return nil
        }
        return TIFFView(bytes: bytes, littleEndian: littleEndian).u16(tiff + 2) == 42 ? (tiff, littleEndian) : nil
    }

    /// Where IFD0's orientation entry is in `bytes` (a SHORT of count 1) and the byte order;
    /// .some(nil) when IFD0 has no such tag; nil when the structure or the tag is not well
    /// formed.
    private static func orientationEntry(_ bytes: [UInt8]) -> (at: Int, littleEndian: Bool)?? {
        let out = bytes
        // TIFF's byte order mark and magic number: without them libexif reads nothing (libvips then says 1).
        guard let (tiff, littleEndian) = tiffStart(out) else { return nil }
        let view = TIFFView(bytes: out, littleEndian: littleEndian)
        let u16 = view.u16, u32 = view.u32
        let ifd = tiff + u32(tiff + 4)
        guard ifd >= tiff + 8, ifd + 2 <= out.count else { return nil }
        for entry in 0..<u16(ifd) {
            let at = ifd + 2 + entry * 12
            guard at + 12 <= out.count else { return nil }
            guard u16(at) == orientationTag else { continue }
            guard u16(at + 2) == typeShort, u32(at + 4) == 1 else { return nil }
            return .some((at, littleEndian))
        }
        return .some(nil)
    }
}

/// Reads a TIFF structure's integers in its byte order; the caller checks the bounds.
private struct TIFFView {
    let bytes: [UInt8]
    let littleEndian: Bool

    func u16(_ at: Int) -> Int {
        let a = Int(bytes[at]), b = Int(bytes[at + 1])
        return littleEndian ? a | b << 8 : a << 8 | b
    }

    func u32(_ at: Int) -> Int {
        let v = (0..<4).map { Int(bytes[at + $0]) }
        return littleEndian ? v[0] | v[1] << 8 | v[2] << 16 | v[3] << 24 : v[0] << 24 | v[1] << 16 | v[2] << 8 | v[3]
    }
}
