/// The one EXIF edit blurfarm makes: setting the orientation tag of IFD0 to 1.
///
/// EXIF is a TIFF structure (byte order mark, IFD0 offset, then 12-byte entries), here
/// optionally preceded by "Exif\0\0" as libvips stores it. Anything malformed is returned
/// unchanged: the writer also tells libvips the orientation is 1, and libvips rewrites the tag.
enum EXIF {
    static let orientationTag: UInt16 = 0x0112
    static let typeShort: UInt16 = 3

    /// `bytes` with IFD0's orientation tag (when present and well formed) set to 1.
    static func withOrientationReset(_ bytes: [UInt8]) -> [UInt8] {
        var out = bytes
        let exifHeader: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0, 0]  // "Exif\0\0"
        let tiff = out.starts(with: exifHeader) ? exifHeader.count : 0
        guard out.count >= tiff + 8 else { return bytes }
        let littleEndian: Bool
        switch (out[tiff], out[tiff + 1]) {
        case (0x49, 0x49): littleEndian = true  // "II"
        case (0x4D, 0x4D): littleEndian = false  // "MM"
        default: return bytes
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
        let ifd = tiff + u32(tiff + 4)
        guard ifd >= tiff + 8, ifd + 2 <= out.count else { return bytes }
        let count = Int(u16(ifd))
        for entry in 0..<count {
            let at = ifd + 2 + entry * 12
            guard at + 12 <= out.count else { return bytes }
            guard u16(at) == orientationTag else { continue }
            guard u16(at + 2) == typeShort else { return bytes }
            // A SHORT value of count 1 sits in the first two bytes of the value field.
            out[at + 8] = littleEndian ? 1 : 0
            out[at + 9] = littleEndian ? 0 : 1
            return out
        }
        return out
    }
}
