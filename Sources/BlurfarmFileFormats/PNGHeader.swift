import BlurfarmSystem

/// The header libvips's `pngload` (libpng) reads of a plain PNG, read from the chunks before
/// its image data without starting libvips: its size, the bands libvips loads and whether a
/// sample is 16 bits. A header read is a library's whole cost for a small PNG (about 0.2 ms in
/// libvips, most of it GLib's type system under its locks, for `check` and the coordinator's
/// choice of where to make each input).
///
/// Plain means what libvips's answer is known for, and nothing else (``read(_:)`` is nil
/// otherwise, and libvips is asked): the signature; `IHDR` first, 13 bytes, a size of 1 to
/// 1,000,000 each way (libpng's default limit), a depth that its colour type allows,
/// compression and filter 0, interlace 0 or 1; before the first `IDAT`, each chunk at most
/// once, its CRC right, and only `PLTE` (a palette's, before its `tRNS`), `tRNS` (of a length
/// libpng takes: not with an alpha channel), and chunks that only add metadata to libvips's
/// image (`gAMA`, `cHRM`, `sRGB`, `pHYs`, `bKGD`, `sBIT`, `tIME`, `tEXt`, `zTXt`, `iTXt`). No
/// `iCCP` (a profile, which libvips may refuse) and no `eXIf` (an orientation): those are
/// libvips's.
/// `PNGHeaderTests` holds every case to libvips's own header of the same file.
package struct PNGHeader: Sendable, Hashable {
    package var width: Int
    package var height: Int
    /// The bands libvips loads: grey 1, grey and alpha 2, RGB 3 (a palette's colours too),
    /// RGB and alpha 4; a `tRNS` chunk adds an alpha band to grey, RGB and a palette.
    package var bands: Int
    /// Whether a sample is 16 bits (libvips's `ushort`); depths under 8 are expanded to 8.
    package var sixteenBit: Bool

    /// The bytes a header is looked for in: a PNG whose image data starts later (a long text
    /// chunk first) is left to libvips. The image data itself may go on past them.
    static let prefixBytes = 1 << 16

    /// The header of the PNG open on `fd` (its first ``prefixBytes``), or nil when it is not a
    /// plain PNG, or cannot be read.
    package static func read(_ fd: Int32) -> PNGHeader? {
        guard let bytes = try? Syscalls.readBytes(fd, count: prefixBytes, at: 0) else { return nil }
        return parse(bytes[...])
    }

    /// The chunks whose data libvips only keeps as metadata, or ignores.
    private static let metadataChunks: Set<String> = [
        "gAMA", "cHRM", "sRGB", "pHYs", "bKGD", "sBIT", "tIME", "tEXt", "zTXt", "iTXt",
    ]

    /// The header of the PNG whose first bytes are `bytes` (up to its first `IDAT` at least),
    /// or nil (see the type).
    package static func parse(_ bytes: ArraySlice<UInt8>) -> PNGHeader? {
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        guard bytes.count >= 8, bytes.prefix(8).elementsEqual(signature) else { return nil }
        func word(_ at: Int) -> Int {
            (Int(bytes[at]) << 24) | (Int(bytes[at + 1]) << 16) | (Int(bytes[at + 2]) << 8) | Int(bytes[at + 3])
        }
        var at = bytes.startIndex + 8
        var header: PNGHeader?
        var colourType = 0
        var seen: Set<String> = []
        var paletteEntries = 0
        while true {
            // Length and type; the image data's first chunk ends the header (libpng reads no
            // more of it for the header, nor checks its CRC until it decodes).
            guard at + 8 <= bytes.endIndex else { return nil }
            let length = word(at)
            let typeBytes = bytes[(at + 4)..<(at + 8)]
            guard typeBytes.allSatisfy({ (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }) else { return nil }
            let type = String(decoding: typeBytes, as: UTF8.self)
            if type == "IDAT" {
                guard let header, colourType != 3 || seen.contains("PLTE") else { return nil }
                return header
            }
            // Any other chunk whole within the bytes read, its CRC right.
            guard length <= bytes.endIndex - at - 12 else { return nil }
            let data = bytes[(at + 8)..<(at + 8 + length)]
            guard UInt32(word(at + 8 + length)) == crc32(bytes[(at + 4)..<(at + 8 + length)]) else { return nil }
            at += 12 + length
            guard seen.insert(type).inserted else { return nil }
            switch type {
            case "IHDR":
                guard seen.count == 1, length == 13 else { return nil }
                let (width, height) = (word(data.startIndex), word(data.startIndex + 4))
                let depth = Int(data[data.startIndex + 8])
                colourType = Int(data[data.startIndex + 9])
                let (compression, filter, interlace) = (
                    data[data.startIndex + 10], data[data.startIndex + 11], data[data.startIndex + 12]
                )
                let depths: [Int: [Int]] = [0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16]]
                guard (1...1_000_000).contains(width), (1...1_000_000).contains(height),
                    depths[colourType]?.contains(depth) == true, compression == 0, filter == 0, interlace <= 1
                else { return nil }
                let bands = [0: 1, 2: 3, 3: 3, 4: 2, 6: 4][colourType]!
                header = PNGHeader(width: width, height: height, bands: bands, sixteenBit: depth == 16)
            case "PLTE":
                paletteEntries = length / 3
                guard header != nil, colourType == 3, (3...768).contains(length), length % 3 == 0 else { return nil }
            case "tRNS":
                // As libpng takes it (else it ignores the chunk, with a warning): a grey level,
                // an RGB colour, or at most one alpha a palette entry.
                let fits: Bool
                switch colourType {
                case 0: fits = length == 2
                case 2: fits = length == 6
                case 3: fits = length >= 1 && length <= paletteEntries
                default: fits = false
                }
                guard header != nil, fits else { return nil }
                header?.bands += 1
            default:
                guard header != nil, metadataChunks.contains(type) else { return nil }
            }
        }
    }

    /// CRC-32 (ISO 3309, as PNG's chunks carry it) of `bytes`.
    package static func crc32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }

    private static let crcTable: [UInt32] = (0..<UInt32(256)).map { n in
        (0..<8).reduce(n) { c, _ in c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
    }
}
