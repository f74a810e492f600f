/// The one XMP edit blurfarm makes: taking out the thumbnails an XMP packet embeds.
///
/// Adobe's applications keep a small JPEG of the photo, in base64, as the value of
/// `xmpGImg:image` (`xapGImg:image` in older packets; any prefix of that namespace is
/// taken), written as an element's text or as an attribute.
package enum XMP {
    /// `packet` with the value of every `…GImg:image` element or attribute emptied: an output's
    /// pixels are filtered, redacted or resized, and its XMP must not hold the photo as it was
    /// (as ``EXIF/withoutPictures(_:)`` for EXIF). Everything else is kept byte for byte.
    package static func withoutPictures(_ packet: [UInt8]) -> [UInt8] {
        let name = Array("GImg:image".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(packet.count)
        var copied = 0  // packet[..<copied] is in out
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
            out += packet[copied..<value.lowerBound]
            copied = value.upperBound
            at = value.upperBound
        }
        guard copied > 0 else { return packet }
        return out + packet[copied...]
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
