/// The one XMP edit blurfarm makes: taking out the pictures an XMP packet embeds.
///
/// Adobe's applications keep a small JPEG of the photo, in base64, as the value of
/// `xmpGImg:image` (`xapGImg:image` in older packets; any prefix of that namespace is
/// taken); Google's camera keeps the whole original photo as `GImage:Data` and a depth map
/// as `GDepth:Data` (and its confidence as `GDepth:Confidence`); other writers put other
/// pictures elsewhere. Each is written as an element's text or as an attribute.
package enum XMP {
    /// The properties whose value is a picture, by the end of their qualified name (any
    /// namespace prefix before it).
    static let pictureProperties = ["GImg:image", "GImage:Data", "GDepth:Data", "GDepth:Confidence"]

    /// `packet` with the value of every property that holds a picture emptied: those of
    /// ``pictureProperties``, and any other element or attribute whose value is base64 of an
    /// image file (JPEG, PNG, GIF, WebP, TIFF, HEIF or AVIF: ``isBase64Picture(_:)``). An
    /// output's pixels are filtered, redacted or resized, and its XMP must not hold the photo
    /// as it was (as ``EXIF/withoutPictures(_:)`` for EXIF). Everything else is kept byte for byte.
    package static func withoutPictures(_ packet: [UInt8]) -> [UInt8] {
        var ranges: [Range<Int>] = []
        for name in pictureProperties { ranges += values(named: Array(name.utf8), in: packet) }
        ranges += base64Pictures(in: packet)
        guard !ranges.isEmpty else { return packet }
        var out: [UInt8] = []
        out.reserveCapacity(packet.count)
        var copied = 0  // packet[..<copied] is in out
        // Overlapping ranges (a named property whose value is also base64 of a picture) as one.
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) where range.upperBound > copied {
            out += packet[copied..<max(range.lowerBound, copied)]
            copied = range.upperBound
        }
        return out + packet[copied...]
    }

    /// The byte ranges of the values (an element's text, an attribute's value) of the
    /// properties whose qualified name ends in `name`.
    static func values(named name: [UInt8], in packet: [UInt8]) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var at = 0
        while let found = firstIndex(of: name, in: packet, from: at) {
            let end = found + name.count
            at = end
            // The qualified name's start: back over the prefix's characters.
            var start = found
            while start > 0, isNameCharacter(packet[start - 1]) { start -= 1 }
            guard end < packet.count, !isNameCharacter(packet[end]) else { continue }
            let value: Range<Int>?
            if start > 0, packet[start - 1] == UInt8(ascii: "<") {
                // An element: its text runs from the end of the start tag to the next tag.
                value = packet[end...].firstIndex(of: UInt8(ascii: ">")).flatMap { open in
                    packet[(open + 1)...].firstIndex(of: UInt8(ascii: "<")).map { (open + 1)..<$0 }
                }
            } else if start > 0, packet[start - 1] == UInt8(ascii: "/") {
                value = nil  // an end tag
            } else {
                // An attribute: `= "…"` or `= '…'`.
                var i = end
                while i < packet.count, isSpace(packet[i]) { i += 1 }
                guard i < packet.count, packet[i] == UInt8(ascii: "=") else { continue }
                i += 1
                while i < packet.count, isSpace(packet[i]) { i += 1 }
                guard i < packet.count, packet[i] == UInt8(ascii: "\"") || packet[i] == UInt8(ascii: "'") else { continue }
                let quote = packet[i]
                value = packet[(i + 1)...].firstIndex(of: quote).map { (i + 1)..<$0 }
            }
            guard let value, !value.isEmpty else { continue }
            ranges.append(value)
            at = value.upperBound
        }
        return ranges
    }

    /// The byte ranges of every element text and attribute value in `packet` that is base64
    /// of a picture (``isBase64Picture(_:)``), whatever its property's name.
    static func base64Pictures(in packet: [UInt8]) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var start: Int?
        for (i, byte) in packet.enumerated() {
            if isBase64Character(byte) || isSpace(byte) {
                if start == nil { start = i }
            } else {
                if let s = start, isBase64Picture(packet[s..<i]) { ranges.append(s..<i) }
                start = nil
            }
        }
        if let s = start, isBase64Picture(packet[s...]) { ranges.append(s..<packet.count) }
        return ranges
    }

    /// Whether `text` (base64, whitespace allowed) starts with the bytes of an image file:
    /// JPEG (FF D8 FF), PNG, GIF, WebP (RIFF…WEBP), TIFF (II*, MM*), or an ISO media file of
    /// HEIF or AVIF (….ftyp). At least 16 characters: no short word is a picture.
    static func isBase64Picture(_ text: ArraySlice<UInt8>) -> Bool {
        let characters = text.filter { !isSpace($0) }
        guard characters.count >= 16 else { return false }
        guard let head = decodeBase64(Array(characters.prefix(16))) else { return false }
        let signatures: [[UInt8]] = [
            [0xFF, 0xD8, 0xFF], [0x89, 0x50, 0x4E, 0x47], Array("GIF8".utf8), [0x49, 0x49, 0x2A, 0x00], [0x4D, 0x4D, 0x00, 0x2A],
        ]
        if signatures.contains(where: { head.starts(with: $0) }) { return true }
        if head.starts(with: Array("RIFF".utf8)), head.count >= 12, head[8..<12].elementsEqual(Array("WEBP".utf8)) { return true }
        return head.count >= 8 && head[4..<8].elementsEqual(Array("ftyp".utf8))
    }

    /// The bytes of base64 `characters` (a multiple of 4, no padding inside); nil when not base64.
    private static func decodeBase64(_ characters: [UInt8]) -> [UInt8]? {
        func value(_ c: UInt8) -> UInt32? {
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): UInt32(c - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): UInt32(c - UInt8(ascii: "a")) + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(c - UInt8(ascii: "0")) + 52
            case UInt8(ascii: "+"): 62
            case UInt8(ascii: "/"): 63
            default: nil
            }
        }
        var bytes: [UInt8] = []
        var i = 0
        while i + 4 <= characters.count {
            guard let a = value(characters[i]), let b = value(characters[i + 1]), let c = value(characters[i + 2]),
                let d = value(characters[i + 3])
            else { return nil }
            let n = a << 18 | b << 12 | c << 6 | d
            bytes += [UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)]
            i += 4
        }
        return bytes
    }

    private static func isBase64Character(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: "="):
            true
        default: false
        }
    }

    private static func firstIndex(of needle: [UInt8], in haystack: [UInt8], from: Int) -> Int? {
        guard haystack.count >= needle.count, from <= haystack.count - needle.count else { return nil }
        for i in from...(haystack.count - needle.count) where haystack[i] == needle[0] {
            if haystack[i..<(i + needle.count)].elementsEqual(needle) { return i }
        }
        return nil
    }

    private static func isNameCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: ":"):
            true
        default: false
        }
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}
