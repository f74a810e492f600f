/// The image file formats a viewer can show, each known by the bytes a file of it starts
/// with: what ``EXIF/withoutPictures(_:)`` zeroes and ``XMP/withoutPictures(_:)`` empties,
/// so that metadata kept with an output holds no picture of the original (docs/image-io.md,
/// "Metadata").
///
/// A signature is looked for in two ways. Where a value starts (an XMP value's base64, the
/// start of its decoded bytes) every signature counts, even two bytes, and fields after the
/// magic bytes are checked only as far as the value reaches: a short or odd value that looks
/// like a picture goes. Anywhere in a block of bytes (carving, as in an EXIF maker note or a
/// decoded value's middle) only the ``isDistinctive`` ones count, with their header checked
/// in full: ordinary binary data holds a two-byte magic number once in every 64 KiB by chance.
package enum PictureSignature: CaseIterable, Sendable {
    case jpeg, png, mng, jng, gif, bmp, tiff, jpegXR, webp, isoMedia, jpeg2000, jpeg2000Codestream
    case jpegXL, jpegXLCodestream, icon, photoshop, qoi, openEXR, radiance, pdf, postScript, dosEPS, dds, bpg
    case sunRaster, sgi, farbfeld, xpm, svg, netpbm, cameraRaw

    /// The bytes a file of this format starts with, any one of them; nil is any byte.
    var magics: [[UInt8?]] {
        switch self {
        case .jpeg: [[0xFF, 0xD8, 0xFF]]
        case .png: [[0x89] + ascii("PNG") + [0x0D, 0x0A, 0x1A, 0x0A]]
        case .mng: [[0x8A] + ascii("MNG") + [0x0D, 0x0A, 0x1A, 0x0A]]
        case .jng: [[0x8B] + ascii("JNG") + [0x0D, 0x0A, 0x1A, 0x0A]]
        case .gif: [ascii("GIF87a"), ascii("GIF89a")]
        case .bmp: [ascii("BM")]
        // Classic and big TIFF in both byte orders (DNG, NEF, CR2, ARW… are TIFF too).
        case .tiff: [ascii("II*") + [0], ascii("MM") + [0] + ascii("*"), ascii("II+") + [0], ascii("MM") + [0] + ascii("+")]
        case .jpegXR: [ascii("II") + [0xBC, 0x01]]
        case .webp: [ascii("RIFF") + [nil, nil, nil, nil] + ascii("WEBP")]
        // An ISO base media file of any brand: HEIF (heic, heix, mif1…), AVIF, CR3, MP4.
        case .isoMedia: [[nil, nil, nil, nil] + ascii("ftyp")]
        case .jpeg2000: [[0, 0, 0, 0x0C] + ascii("jP  ") + [0x0D, 0x0A, 0x87, 0x0A]]
        case .jpeg2000Codestream: [[0xFF, 0x4F, 0xFF, 0x51]]
        case .jpegXL: [[0, 0, 0, 0x0C] + ascii("JXL ") + [0x0D, 0x0A, 0x87, 0x0A]]
        case .jpegXLCodestream: [[0xFF, 0x0A]]
        case .icon: [[0, 0, 1, 0], [0, 0, 2, 0]]  // ICO, CUR
        case .photoshop: [ascii("8BPS") + [0, 1], ascii("8BPS") + [0, 2]]  // PSD, PSB
        case .qoi: [ascii("qoif")]
        case .openEXR: [[0x76, 0x2F, 0x31, 0x01]]
        case .radiance: [ascii("#?RADIANCE"), ascii("#?RGBE")]
        case .pdf: [ascii("%PDF-")]
        case .postScript: [ascii("%!PS")]
        case .dosEPS: [[0xC5, 0xD0, 0xD3, 0xC6]]
        case .dds: [ascii("DDS ") + [0x7C, 0, 0, 0]]
        case .bpg: [ascii("BPG") + [0xFB]]
        case .sunRaster: [[0x59, 0xA6, 0x6A, 0x95]]
        case .sgi: [[0x01, 0xDA]]
        case .farbfeld: [ascii("farbfeld")]
        case .xpm: [ascii("/* XPM */")]
        case .svg: [ascii("<svg"), ascii("<?xml")]
        case .netpbm: [ascii("P")]
        // Olympus ORF, Panasonic RW2, Fujifilm RAF, Canon CRW, Sigma X3F.
        case .cameraRaw: [ascii("IIRO"), ascii("IIRS"), ascii("MMOR"), ascii("IIU") + [0], ascii("FUJIFILMCCD-RAW"), ascii("II") + [0x1A, 0, 0, 0] + ascii("HEAPCCDR"), ascii("FOVb")]
        }
    }

    /// Whether the signature is long or checked enough to be looked for anywhere in a block
    /// of bytes; the others (two bytes, or text a value may start with) only where a value starts.
    var isDistinctive: Bool {
        switch self {
        case .jpegXLCodestream, .sgi, .netpbm, .svg, .xpm: false
        default: true
        }
    }

    /// The signature `bytes[at...]` starts with, if any: at the start of a value
    /// (`anywhere` false) all of them, else only the distinctive ones.
    package static func signature(in bytes: [UInt8], at: Int, anywhere: Bool) -> PictureSignature? {
        guard at < bytes.count else { return nil }
        let candidates = anywhere ? carvedByFirstByte[Int(bytes[at])] : Array(table.indices)
        return candidates.lazy.map { table[$0] }.first { $0.signature.fits(bytes, at: at, magics: $0.magics, whole: anywhere) }?.signature
    }

    /// Every signature with its magic numbers, made once.
    private static let table: [(signature: PictureSignature, magics: [[UInt8?]])] = allCases.map { ($0, $0.magics) }

    /// For each value of a first byte, where in ``table`` the distinctive signatures that
    /// may start with it are (ISO media's, whose first byte is any, under every value): the
    /// few a block's byte is checked against.
    private static let carvedByFirstByte: [[Int]] = (0..<256).map { byte in
        table.indices.filter { index in
            table[index].signature.isDistinctive && table[index].magics.contains { $0.first.map { $0 == nil || $0 == UInt8(byte) } ?? false }
        }
    }

    /// Whether `bytes[at...]` starts with one of `magics` (``magics``) and the header fields after it
    /// are a picture's; with `whole` false, a field past the end of `bytes` does not count against it.
    private func fits(_ bytes: [UInt8], at: Int, magics: [[UInt8?]], whole: Bool) -> Bool {
        let matched = magics.contains { magic in
            at + magic.count <= bytes.count && zip(magic, bytes[at...]).allSatisfy { $0 == nil || $0 == $1 }
        }
        guard matched else { return false }
        /// The byte at `offset` from the start, or nil past the end.
        func byte(_ offset: Int) -> UInt8? { at + offset < bytes.count ? bytes[at + offset] : nil }
        /// Whether the byte at `offset` passes `test`, or (`whole` false) is past the end.
        func field(_ offset: Int, _ test: (UInt8) -> Bool) -> Bool { byte(offset).map(test) ?? !whole }
        switch self {
        case .jpeg:
            return true  // libjpeg skips stray bytes after SOI to the next marker
        case .bmp:
            // The DIB header's size (BITMAPCOREHEADER … BITMAPV5HEADER), little-endian, at 14.
            let sizes: Set<UInt8> = [12, 16, 40, 52, 56, 64, 108, 124]
            return field(14) { sizes.contains($0) } && (15...17).allSatisfy { field($0) { $0 == 0 } }
        case .icon:
            // Images 1…255; the first entry's reserved byte 0 and its data right after the directory.
            guard field(4, { $0 > 0 }), field(5, { $0 == 0 }), field(9, { $0 == 0 }) else { return false }
            guard let count = byte(4), let low = byte(18), let high = byte(19) else { return !whole }
            return Int(low) | Int(high) << 8 == 6 + 16 * Int(count) && field(20, { $0 == 0 }) && field(21, { $0 == 0 })
        case .photoshop:
            return (6..<12).allSatisfy { field($0) { $0 == 0 } }  // reserved
        case .sgi:
            // Storage (verbatim, RLE), bytes per sample (1, 2), dimensions (1…3, big-endian).
            return field(2) { $0 <= 1 } && field(3) { $0 == 1 || $0 == 2 } && field(4) { $0 == 0 } && field(5) { (1...3).contains($0) }
        case .qoi:
            return field(12) { $0 == 3 || $0 == 4 } && field(13) { $0 <= 1 }  // channels, colour space
        case .isoMedia:
            // The box's size: a header of 8 bytes and a brand, at most a few hundred brands.
            guard let a = byte(0), let b = byte(1), let c = byte(2), let d = byte(3) else { return !whole }
            let size = Int(a) << 24 | Int(b) << 16 | Int(c) << 8 | Int(d)
            return (12...4096).contains(size)
        case .netpbm:
            // P1…P7 and white space: a header of numbers.
            return field(1) { (UInt8(ascii: "1")...UInt8(ascii: "7")).contains($0) } && field(2) { [0x20, 0x09, 0x0A, 0x0D].contains($0) }
        case .svg:
            // An XML declaration counts only with an <svg element in the kilobyte after it.
            guard bytes[at...].starts(with: Array("<?xml".utf8)) else { return true }
            let head = bytes[at..<min(bytes.count, at + 1024)]
            return head.indices.contains { head[$0...].starts(with: Array("<svg".utf8)) }
        default:
            return true
        }
    }

    /// The length of the file of this format at `bytes[at...]` when its structure says it and
    /// it ends before `end`: a JPEG's walk to its end of image, a PNG's chunks to IEND, a RIFF's
    /// size. Nil otherwise: the caller takes everything up to `end` (fail closed).
    func length(in bytes: [UInt8], at: Int, end: Int) -> Int? {
        switch self {
        case .jpeg: Self.jpegLength(bytes, at: at, end: end)
        case .png, .mng, .jng: Self.pngLength(bytes, at: at, end: end)
        case .webp:
            at + 8 <= end ? Self.fits(8 + Self.u32le(bytes, at + 4), at: at, end: end) : nil
        default: nil
        }
    }

    /// A JPEG's length as libjpeg reads it: SOI, then marker segments by their lengths, stray
    /// bytes, stuffed bytes and restart markers (entropy-coded data) skipped, to `FF D9`.
    private static func jpegLength(_ bytes: [UInt8], at: Int, end: Int) -> Int? {
        var i = at + 2
        while i < end {
            guard bytes[i] == 0xFF else {
                i += 1
                continue
            }
            while i < end, bytes[i] == 0xFF { i += 1 }  // fill bytes
            guard i < end else { return nil }
            let marker = bytes[i]
            i += 1
            switch marker {
            case 0xD9: return i - at
            case 0x00, 0x01, 0xD0...0xD8: continue  // stuffed byte, standalone markers
            default:
                guard i + 2 <= end else { return nil }
                let length = Int(bytes[i]) << 8 | Int(bytes[i + 1])
                guard length >= 2, i + length <= end else { return nil }
                i += length
            }
        }
        return nil
    }

    /// A PNG's (an MNG's, a JNG's) length: its signature, then chunks by their lengths to
    /// IEND (MEND).
    private static func pngLength(_ bytes: [UInt8], at: Int, end: Int) -> Int? {
        var i = at + 8
        while i + 12 <= end {
            let type = bytes[(i + 4)..<(i + 8)]
            let length = Int(bytes[i]) << 24 | Int(bytes[i + 1]) << 16 | Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
            guard length <= end - i - 12 else { return nil }
            i += 12 + length
            if type.elementsEqual("IEND".utf8) || type.elementsEqual("MEND".utf8) { return i - at }
        }
        return nil
    }

    /// `length` when the file it measures ends by `end`.
    private static func fits(_ length: Int, at: Int, end: Int) -> Int? { length <= end - at ? length : nil }

    private static func u32le(_ bytes: [UInt8], _ at: Int) -> Int {
        Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24
    }
}

/// The bytes of `text`, each a required byte of a magic number.
private func ascii(_ text: String) -> [UInt8?] { text.utf8.map { $0 } }
