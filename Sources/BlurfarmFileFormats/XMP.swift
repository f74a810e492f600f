/// The one XMP edit blurfarm makes: taking out the pictures an XMP packet embeds.
///
/// Adobe's applications keep a small JPEG of the photo, in base64, as the value of
/// `xmpGImg:image` (`xapGImg:image` in older packets; any prefix of that namespace is
/// taken); Google's camera keeps the whole original photo as `GImage:Data` and a depth map
/// as `GDepth:Data` (and its confidence as `GDepth:Confidence`); other writers put other
/// pictures elsewhere. Each is written as an element's text or as an attribute, its base64
/// broken into lines by white space or character references (`&#xA;`), in CDATA sections or not.
package enum XMP {
    /// The properties whose value is a picture, by the end of their qualified name (any
    /// namespace prefix before it).
    static let pictureProperties = ["GImg:image", "GImage:Data", "GDepth:Data", "GDepth:Confidence"]

    /// The fewest base64 characters a value holding a picture has (12 bytes): no short word is one.
    static let minimumPictureCharacters = 16

    /// `packet` with the value of every property that holds a picture emptied: those of
    /// ``pictureProperties`` (all of an element's content), and any other value that holds
    /// base64 of an image file (``holdsPicture(_:)``): an element's text (all of it, between
    /// two tags), an attribute's value, a comment, a processing instruction. An output's pixels
    /// are filtered, redacted or resized, and its XMP must not hold the photo as it was (as
    /// ``EXIF/withoutPictures(_:)`` for EXIF). Everything else is kept byte for byte.
    package static func withoutPictures(_ packet: [UInt8]) -> [UInt8] {
        var ranges: [Range<Int>] = []
        for name in pictureProperties { ranges += values(named: Array(name.utf8), in: packet) }
        ranges += pictureValues(in: packet)
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
                value = content(ofElement: Array(packet[start..<end]), startTagAt: start - 1, in: packet)
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

    /// The content of the element whose start tag is at `at` and named `name`: from the end of
    /// that tag to its end tag (text, or a structure of elements: all of it), or to the next
    /// tag when its end tag is not found; nil when it is empty (`<name/>`).
    static func content(ofElement name: [UInt8], startTagAt at: Int, in packet: [UInt8]) -> Range<Int>? {
        let open = endOfTag(at: at, in: packet)
        guard open < packet.count, packet[open - 2] != UInt8(ascii: "/") else { return nil }
        var i = open
        while let close = firstIndex(of: Array("</".utf8) + name, in: packet, from: i) {
            let after = close + 2 + name.count
            if after < packet.count, packet[after] == UInt8(ascii: ">") || isSpace(packet[after]) { return open..<close }
            i = after
        }
        return open..<(packet[open...].firstIndex(of: UInt8(ascii: "<")) ?? packet.count)
    }

    /// The byte ranges of the values in `packet` that hold a picture (``holdsPicture(_:)``),
    /// whatever their property's name: each attribute value, and each run of text between two
    /// tags (with its CDATA sections, comments and processing instructions), whole.
    static func pictureValues(in packet: [UInt8]) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var text = 0  // where the text since the last tag starts
        var i = 0
        while i < packet.count {
            guard packet[i] == UInt8(ascii: "<") else {
                i += 1
                continue
            }
            if let aside = Aside.at(i, in: packet) {
                i = aside.end(at: i, in: packet)  // part of the text
                continue
            }
            // A tag (start, end, a declaration): the text before it ends here.
            if text < i, holdsPicture(in: packet, text..<i) { ranges.append(text..<i) }
            let end = endOfTag(at: i, in: packet)
            if i + 1 < packet.count, packet[i + 1] == UInt8(ascii: "!") {
                if holdsPicture(in: packet, i..<end) { ranges.append(i..<end) }
            } else {
                ranges += attributeValues(inTagFrom: i, to: end, in: packet).filter { holdsPicture(in: packet, $0) }
            }
            i = end
            text = end
        }
        if text < packet.count, holdsPicture(in: packet, text..<packet.count) { ranges.append(text..<packet.count) }
        return ranges
    }

    /// A CDATA section, a comment or a processing instruction: part of the text around it.
    enum Aside: CaseIterable {
        case cdata, comment, processingInstruction

        var open: [UInt8] { Array((self == .cdata ? "<![CDATA[" : self == .comment ? "<!--" : "<?").utf8) }
        var close: [UInt8] { Array((self == .cdata ? "]]>" : self == .comment ? "-->" : "?>").utf8) }

        /// The one that starts at `at`, if any.
        static func at(_ at: Int, in packet: [UInt8]) -> Aside? {
            allCases.first { packet[at...].starts(with: $0.open) }
        }

        /// Where its content ends (its close, or the packet's end when it is not closed).
        func contentEnd(at: Int, in packet: [UInt8]) -> Int {
            firstIndex(of: close, in: packet, from: at + open.count) ?? packet.count
        }

        /// Where it ends, after its close.
        func end(at: Int, in packet: [UInt8]) -> Int {
            min(packet.count, contentEnd(at: at, in: packet) + close.count)
        }
    }

    /// Where the tag starting at `at` ends, after its `>` (a `>` in a quoted value is not its
    /// end); the packet's end when it is not closed.
    static func endOfTag(at: Int, in packet: [UInt8]) -> Int {
        var quote: UInt8?
        for i in (at + 1)..<packet.count {
            if let q = quote {
                if packet[i] == q { quote = nil }
            } else if packet[i] == UInt8(ascii: "\"") || packet[i] == UInt8(ascii: "'") {
                quote = packet[i]
            } else if packet[i] == UInt8(ascii: ">") {
                return i + 1
            }
        }
        return packet.count
    }

    /// The ranges of the quoted attribute values in the tag `packet[start..<end]`.
    static func attributeValues(inTagFrom start: Int, to end: Int, in packet: [UInt8]) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var i = start
        while i < end {
            let quote = packet[i]
            guard quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else {
                i += 1
                continue
            }
            let close = packet[(i + 1)..<end].firstIndex(of: quote) ?? end
            ranges.append((i + 1)..<close)
            i = close + 1
        }
        return ranges
    }

    /// Whether `packet[range]`, a value as written in the packet, holds a picture: its
    /// character data (character and entity references decoded, CDATA sections read as text,
    /// comments and processing instructions left out), or one of those comments or
    /// instructions, holds base64 of an image file (``holdsBase64Picture(_:)``).
    static func holdsPicture(in packet: [UInt8], _ range: Range<Int>) -> Bool {
        var text: [UInt8] = []
        var asides: [[UInt8]] = []
        var i = range.lowerBound
        while i < range.upperBound {
            if packet[i] == UInt8(ascii: "<"), let aside = Aside.at(i, in: packet) {
                let content = (i + aside.open.count)..<min(range.upperBound, aside.contentEnd(at: i, in: packet))
                if aside == .cdata { text += packet[content] } else { asides.append(Array(packet[content])) }
                i = min(range.upperBound, aside.end(at: i, in: packet))
            } else if packet[i] == UInt8(ascii: "&"), let (characters, next) = reference(at: i, in: packet, before: range.upperBound) {
                text += characters
                i = next
            } else {
                text.append(packet[i])
                i += 1
            }
        }
        return ([text] + asides).contains(where: holdsBase64Picture)
    }

    /// The characters the reference at `at` stands for (`&#10;`, `&#xA;`, `&amp;`…; none for
    /// an entity XMP does not define) and where it ends; nil when no `;` closes it.
    static func reference(at: Int, in packet: [UInt8], before end: Int) -> ([UInt8], Int)? {
        guard let semicolon = packet[at..<min(end, at + 40)].firstIndex(of: UInt8(ascii: ";")) else { return nil }
        let name = String(decoding: packet[(at + 1)..<semicolon], as: UTF8.self)
        let code: UInt32? =
            name.hasPrefix("#x") || name.hasPrefix("#X")
            ? UInt32(name.dropFirst(2), radix: 16) : name.hasPrefix("#") ? UInt32(name.dropFirst(), radix: 10) : nil
        let entities = ["amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'"]
        let characters = code.flatMap(Unicode.Scalar.init).map { String(Character($0)) } ?? entities[name] ?? ""
        return (Array(characters.utf8), semicolon + 1)
    }

    /// Whether `text` holds base64 of an image file (``PictureSignature``), read as a lenient
    /// decoder reads it: its base64 characters (URL-safe ones too) with whatever is between
    /// them skipped (white space, line breaks, a `data:` URL's head). Decoded from each of the
    /// four places a picture's first character may fall, its bytes start with a signature or
    /// hold a distinctive one anywhere; or a run of base64 in it starts with one; or the
    /// decoded bytes hold base64 of a picture in turn (an SVG's `data:` URL). At least
    /// ``minimumPictureCharacters``.
    static func holdsBase64Picture(_ text: [UInt8]) -> Bool { holdsBase64Picture(text, depth: 0) }

    private static func holdsBase64Picture(_ text: [UInt8], depth: Int) -> Bool {
        let sextets = text.compactMap(sextet)
        guard sextets.count >= minimumPictureCharacters else { return false }
        for phase in 0..<4 {
            let bytes = decode(sextets[phase...])
            if phase == 0, PictureSignature.signature(in: bytes, at: 0, anywhere: false) != nil { return true }
            if bytes.indices.contains(where: { PictureSignature.signature(in: bytes, at: $0, anywhere: true) != nil }) { return true }
            if phase == 0, depth == 0, holdsBase64Picture(bytes, depth: 1) { return true }
        }
        return base64Runs(in: text).contains { run in
            PictureSignature.signature(in: decode(run.prefix(32)[...]), at: 0, anywhere: false) != nil
        }
    }

    /// The runs of base64 characters in `text` (white space inside them skipped, anything
    /// else ending them), as sextets, each at least ``minimumPictureCharacters`` long.
    private static func base64Runs(in text: [UInt8]) -> [[UInt8]] {
        var runs: [[UInt8]] = [[]]
        for byte in text where !isSpace(byte) {
            if let value = sextet(byte) {
                runs[runs.count - 1].append(value)
            } else if !runs[runs.count - 1].isEmpty {
                runs.append([])
            }
        }
        return runs.filter { $0.count >= minimumPictureCharacters }
    }

    /// The bytes of base64 `sextets` (each a character's value), as far as they make whole bytes.
    private static func decode(_ sextets: ArraySlice<UInt8>) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(sextets.count * 3 / 4)
        var bits: UInt32 = 0
        var count = 0
        for value in sextets {
            bits = bits << 6 | UInt32(value)
            count += 6
            if count >= 8 {
                count -= 8
                bytes.append(UInt8(bits >> UInt32(count) & 0xFF))
            }
        }
        return bytes
    }

    /// A base64 character's value (`-` and `_` as base64url's 62 and 63); nil for any other byte.
    private static func sextet(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): c - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): c - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"), UInt8(ascii: "-"): 62
        case UInt8(ascii: "/"), UInt8(ascii: "_"): 63
        default: nil
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
