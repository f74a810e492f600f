/// The one EXIF edit blurfarm makes, setting the orientation tag of IFD0 to 1, and the one
/// EXIF reading: that tag.
///
/// EXIF is a TIFF structure (byte order mark, IFD0 offset, then 12-byte entries), here
/// optionally preceded by "Exif\0\0" as libvips stores it. Anything malformed is returned
/// unchanged: the writer also tells libvips the orientation is 1, and libvips rewrites the tag.
package enum EXIF {
    static let orientationTag: UInt16 = 0x0112
    static let typeShort: UInt16 = 3

    /// IFD0's orientation: 1 when the tag is absent, its value when it is a SHORT of 1...8;
    /// nil when the structure or the tag is not well formed (libvips's own reading decides).
    package static func orientation(_ bytes: [UInt8]) -> Int? {
        guard let entry = orientationEntry(bytes) else { return nil }
        guard let (at, littleEndian) = entry else { return 1 }
        let value = littleEndian ? Int(bytes[at + 8]) | Int(bytes[at + 9]) << 8 : Int(bytes[at + 8]) << 8 | Int(bytes[at + 9])
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

    /// Where IFD0's orientation entry is in `bytes` (a SHORT of count 1) and the byte order;
    /// .some(nil) when IFD0 has no such tag; nil when the structure or the tag is not well
    /// formed.
    private static func orientationEntry(_ bytes: [UInt8]) -> (at: Int, littleEndian: Bool)?? {
        let out = bytes
        let exifHeader: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0, 0]  // "Exif\0\0"
        let tiff = out.starts(with: exifHeader) ? exifHeader.count : 0
        guard out.count >= tiff + 8 else { return nil }
        let littleEndian: Bool
        switch (out[tiff], out[tiff + 1]) {
        case (0x49, 0x49): littleEndian = true  // "II"
        case (0x4D, 0x4D): littleEndian = false  // "MM"
        default: return nil
        }
        func u16(_ at: Int) -> UInt16 {
            let a = UInt16(out[at]), b = UInt16(out[at + 1])
            return littleEndian ? a | b << 8 : a << 8 | b
        }
        func u32(_ at: Int) -> Int {
            let v = (0..<4).map { Int(out[at + $0]) }
            return littleEndian
                ? v[0] | v[1] << 8 | v[2] << 16 | v[3] << 24
                : v[0] << 24 | v[1] << 16 | v[2] << 8 | v[3]
        }
        // TIFF's magic number: without it libexif reads nothing (libvips then says 1).
        guard u16(tiff + 2) == 42 else { return nil }
        let ifd = tiff + u32(tiff + 4)
        guard ifd >= tiff + 8, ifd + 2 <= out.count else { return nil }
        let count = Int(u16(ifd))
        for entry in 0..<count {
            let at = ifd + 2 + entry * 12
            guard at + 12 <= out.count else { return nil }
            guard u16(at) == orientationTag else { continue }
            guard u16(at + 2) == typeShort, u32(at + 4) == 1 else { return nil }
            return .some((at, littleEndian))
        }
        return .some(nil)
    }
}
