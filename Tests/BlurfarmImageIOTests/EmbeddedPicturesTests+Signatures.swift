import BlurfarmCore
import BlurfarmFileFormats
@testable import BlurfarmImageIO
import BlurfarmTestSupport
import Foundation
import Testing

/// Every image format a viewer shows is known, wherever and however the metadata holds it:
/// base64 of any of them in any XMP value, broken into lines or not; any of them in a maker
/// note (docs/image-io.md, "Metadata").
extension EmbeddedPicturesTests {
    /// The first bytes of a file of each format (its header, then filler as pixels would be),
    /// 64 bytes in all.
    static let pictureHeads: [String: [UInt8]] = {
        func u16le(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
        func u32le(_ v: Int) -> [UInt8] { u16le(v & 0xFFFF) + u16le(v >> 16) }
        func u32be(_ v: Int) -> [UInt8] { u32le(v).reversed() }
        let heads: [String: [UInt8]] = [
            "jpeg": [0xFF, 0xD8, 0xFF, 0xE0, 0, 16] + Array("JFIF".utf8) + [0, 1, 1, 0, 0, 1, 0, 1, 0, 0],
            "png": [0x89] + Array("PNG".utf8) + [0x0D, 0x0A, 0x1A, 0x0A] + u32be(13) + Array("IHDR".utf8) + u32be(1) + u32be(1) + [8, 2, 0, 0, 0],
            "gif": Array("GIF89a".utf8) + u16le(1) + u16le(1) + [0x80, 0, 0],
            "bmp": Array("BM".utf8) + u32le(58) + [0, 0, 0, 0] + u32le(54) + u32le(40) + u32le(1) + u32le(1) + u16le(1) + u16le(24),
            "tiff": Array("II*".utf8) + [0] + u32le(8) + u16le(1),
            "tiff big-endian": Array("MM".utf8) + [0] + Array("*".utf8) + u32be(8),
            "webp": Array("RIFF".utf8) + u32le(56) + Array("WEBPVP8L".utf8) + u32le(10) + [0x2F],
            "heif": u32be(24) + Array("ftypheic".utf8) + u32be(0) + Array("mif1heic".utf8),
            "avif": u32be(28) + Array("ftypavif".utf8) + u32be(0) + Array("avifmif1miaf".utf8),
            "jpeg 2000": [0, 0, 0, 0x0C] + Array("jP  ".utf8) + [0x0D, 0x0A, 0x87, 0x0A] + u32be(20) + Array("ftypjp2 ".utf8),
            "jpeg 2000 codestream": [0xFF, 0x4F, 0xFF, 0x51, 0, 41, 0, 0] + u32be(1) + u32be(1),
            "jpeg xl": [0, 0, 0, 0x0C] + Array("JXL ".utf8) + [0x0D, 0x0A, 0x87, 0x0A] + u32be(20) + Array("ftypjxl ".utf8),
            "jpeg xl codestream": [0xFF, 0x0A, 0xFA, 0x7F, 0x01, 0x90, 0x08],
            "icon": [0, 0, 1, 0] + u16le(1) + [16, 16, 0, 0] + u16le(1) + u16le(32) + u32le(40) + u32le(22) + u32le(40),
            "photoshop": Array("8BPS".utf8) + [0, 1, 0, 0, 0, 0, 0, 0] + u16le(3),
            "qoi": Array("qoif".utf8) + u32be(1) + u32be(1) + [3, 0],
            "openexr": [0x76, 0x2F, 0x31, 0x01, 2, 0, 0, 0] + Array("channels".utf8),
            "netpbm": Array("P6\n1 1\n255\n".utf8),
            "svg": Array("<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\">".utf8),
        ]
        return heads.mapValues { head in head + (0..<(64 - min(64, head.count))).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) } }
    }()

    /// A packet whose `my:` properties hold `value` as an element's text.
    static func packet(text value: String) -> String {
        """
        <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\
        <rdf:Description xmlns:my="http://example.com/my/" my:Kept="yes"><my:Preview>\(value)</my:Preview>\
        <my:Caption>kept</my:Caption></rdf:Description></rdf:RDF></x:xmpmeta>
        """
    }

    /// Whether `cleaned` holds any 16 characters of `base64` in a row (its lines, where broken).
    static func holdsAPiece(of base64: String, in cleaned: String) -> Bool {
        let characters = Array(base64)
        return stride(from: 0, to: max(1, characters.count - 15), by: 4).contains { cleaned.contains(String(characters[$0..<min(characters.count, $0 + 16)])) }
    }

    /// Base64 of a picture of every format, as the text of a property no list names, goes:
    /// BMP, JPEG 2000, JPEG XL, ICO, PSD, QOI, OpenEXR, PNM and SVG among them.
    @Test(arguments: pictureHeads.keys.sorted())
    func base64OfAPictureOfAnyFormatIsEmptied(_ format: String) throws {
        let base64 = Data(try #require(Self.pictureHeads[format])).base64EncodedString()
        let cleaned = String(decoding: XMP.withoutPictures(Array(Self.packet(text: base64).utf8)), as: UTF8.self)
        #expect(cleaned == Self.packet(text: ""), "\(format): \(cleaned)")
    }

    /// A JPEG's base64 broken into lines by character references (as Adobe writes them), by
    /// white space, wrapped in CDATA or with a `data:` URL's head, as an element's text, an
    /// attribute or an item of rdf:Seq, rdf:Alt and rdf:Bag: the whole value goes, not its first line.
    @Test(arguments: ["&#xA;", "&#10;", "&#13;&#10;", "&#x9;", "&#xa;  ", "\n", "\r\n ", " "])
    func base64BrokenIntoLinesIsEmptiedWhole(_ lineBreak: String) throws {
        let jpeg = try #require(Self.pictureHeads["jpeg"]) + (0..<600).map { UInt8(truncatingIfNeeded: $0 &* 131) }
        let base64 = Data(jpeg).base64EncodedString()
        let lines = stride(from: 0, to: base64.count, by: 76).map { at in
            String(base64.dropFirst(at).prefix(76))
        }
        let broken = lines.joined(separator: lineBreak)
        let plus = broken.replacingOccurrences(of: "+", with: "&#43;")  // a character reference for a base64 character
        let values = [
            "<my:Preview>\(broken)</my:Preview>",
            "<my:Preview>\(plus)</my:Preview>",
            "<my:Preview><![CDATA[\(broken)]]></my:Preview>",
            "<my:Preview>data:image/jpeg;base64,\(broken)</my:Preview>",
            "<my:Preview><rdf:Seq><rdf:li>\(broken)</rdf:li></rdf:Seq></my:Preview>",
            "<my:Preview><rdf:Alt><rdf:li xml:lang=\"x-default\">\(broken)</rdf:li></rdf:Alt></my:Preview>",
            "<my:Preview><rdf:Bag><rdf:li>\(broken)</rdf:li></rdf:Bag></my:Preview>",
        ]
        for value in values {
            let packet = Self.packet(text: "").replacingOccurrences(of: "<my:Preview></my:Preview>", with: value)
            let cleaned = String(decoding: XMP.withoutPictures(Array(packet.utf8)), as: UTF8.self)
            #expect(!lines.contains { cleaned.contains($0.prefix(16)) }, "\(value.prefix(60)): \(cleaned)")
            #expect(!Self.holdsAPiece(of: base64, in: cleaned), "\(value.prefix(60))")
            #expect(cleaned.contains("my:Kept=\"yes\"") && cleaned.contains("<my:Caption>kept</my:Caption>"))
        }
        // As an attribute's value, in either quote.
        for quote in ["\"", "'"] {
            let attribute = broken.replacingOccurrences(of: "\n", with: "&#xA;").replacingOccurrences(of: "\r", with: "&#xD;")
            let packet = Self.packet(text: "").replacingOccurrences(of: "my:Kept=", with: "my:Thumb=\(quote)\(attribute)\(quote) my:Kept=")
            let cleaned = String(decoding: XMP.withoutPictures(Array(packet.utf8)), as: UTF8.self)
            #expect(cleaned.contains("my:Thumb=\(quote)\(quote) my:Kept=\"yes\""), "\(cleaned)")
        }
    }

    /// A named property's whole content goes, a structure of elements too; an empty element
    /// named so takes nothing after it.
    @Test func aNamedPropertysWholeContentIsEmptied() {
        let packet = """
            <rdf:Description><GImage:Data><rdf:Alt><rdf:li>AAAA BBBB CCCC DDDD</rdf:li></rdf:Alt></GImage:Data>\
            <GDepth:Data/><my:Note>kept</my:Note></rdf:Description>
            """
        let expected = "<rdf:Description><GImage:Data></GImage:Data><GDepth:Data/><my:Note>kept</my:Note></rdf:Description>"
        #expect(String(decoding: XMP.withoutPictures(Array(packet.utf8)), as: UTF8.self) == expected)
    }

    /// A packet as Adobe's and Google's applications write it, with no picture, is kept byte
    /// for byte: its tool names, hex digests, identifiers and dates are not taken for base64 of one.
    @Test func aPacketWithoutPicturesIsKeptByteForByte() {
        let packet = """
            <?xpacket begin="\u{FEFF}" id="W5M0MpCehiHzreSzNTczkc9d"?>
            <x:xmpmeta xmlns:x="adobe:ns:meta/" x:xmptk="Adobe XMP Core 5.6-c140 79.160451, 2017/05/06-01:08:21        ">
             <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
              <rdf:Description rdf:about=""
                xmp:CreatorTool="Adobe Photoshop Lightroom Classic 7.0 (Windows)"
                xmp:ModifyDate="2018-01-02T10:11:12+01:00"
                xmpMM:DocumentID="xmp.did:5f2c1e7a-9b3d-4c8e-a1f0-2b7e9d6c3a41"
                xmpNote:HasExtendedXMP="A1B2C3D4E5F60718293A4B5C6D7E8F90"
                GCamera:MicroVideoOffset="2718281"
                crs:RawFileName="IMG_0001.CR2"
                photoshop:DateCreated="2018-01-01T09:00:00">
               <dc:description><rdf:Alt><rdf:li xml:lang="x-default">Adobe staff at the beach, 2018&#xA;Second line</rdf:li></rdf:Alt></dc:description>
               <dc:source>/home/photos/2018/beach.jpg</dc:source>
              </rdf:Description>
             </rdf:RDF>
            </x:xmpmeta>
            \(String(repeating: " ", count: 200))
            <?xpacket end="w"?>
            """
        #expect(XMP.withoutPictures(Array(packet.utf8)) == Array(packet.utf8))
    }

    /// Any picture in a maker note is zeroed: over its length when its structure says it (a
    /// PNG's chunks, a WebP's size, a JPEG's end), else to the maker note's end (a JPEG without
    /// its end, a GIF, a TIFF like Nikon's maker note…); the EXIF's own TIFF header and the
    /// bytes after the maker note stay.
    @Test(arguments: [
        "png", "webp", "jpeg", "gif", "bmp", "tiff", "tiff big-endian", "heif", "jpeg 2000", "jpeg 2000 codestream", "jpeg xl",
        "icon", "photoshop", "qoi", "openexr",
    ])
    func aPictureInAMakerNoteIsZeroed(_ format: String) throws {
        let head = try #require(Self.pictureHeads[format])
        let whole: [UInt8]
        switch format {
        case "png": whole = Array(head.prefix(33)) + [0, 0, 0, 0] + Array("IEND".utf8) + [0xAE, 0x42, 0x60, 0x82]
        case "webp": whole = Array(head.prefix(64))
        case "jpeg": whole = Array(head.prefix(20)) + [0xFF, 0xD9]  // SOI, APP0, EOI
        default: whole = head
        }
        let known = ["png", "webp", "jpeg"].contains(format)
        let tail: [UInt8] = [5, 6, 7, 8]
        let makerNote: [UInt8] = Array("Maker".utf8) + [0, 7] + whole + tail
        let after: [UInt8] = [9, 9, 9]
        let original = Self.exif(makerNote: makerNote, thumbnail: []) + after
        let cleaned = EXIF.withoutPictures(original)
        var expected = original
        for i in (6 + 34)..<(6 + 38) { expected[i] = 0 }  // IFD1 unlinked
        let at = 6 + 68 + 7
        for i in at..<(at + whole.count + (known ? 0 : tail.count)) { expected[i] = 0 }
        #expect(cleaned == expected, "\(format)")
        #expect(EXIF.orientation(cleaned) == 6, "IFD0 is read as before")
        #expect(Array(cleaned.suffix(3)) == after)
    }

    /// A photo with `metadata: keep` whose XMP holds a BMP of it broken into lines by `&#xA;`
    /// in a property no list names, and whose EXIF maker note holds a PNG: the output keeps
    /// both blocks, and neither picture.
    @Test func aPhotosBrokenXMPPictureAndMakerNotePNGAreNotKept() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let bmp = try #require(Self.pictureHeads["bmp"]) + (0..<900).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let base64 = Data(bmp).base64EncodedString()
        let broken = stride(from: 0, to: base64.count, by: 76).map { String(base64.dropFirst($0).prefix(76)) }.joined(separator: "&#xA;")
        let xmp = Array("http://ns.adobe.com/xap/1.0/\0".utf8) + Array("""
            <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\
            <rdf:Description xmlns:my="http://example.com/my/" my:Kept="yes" my:Preview="\(broken)"/></rdf:RDF></x:xmpmeta>
            """.utf8)
        let png = Array(try #require(Self.pictureHeads["png"]).prefix(33)) + [0, 0, 0, 0] + Array("IEND".utf8) + [0xAE, 0x42, 0x60, 0x82]
        let exif = Self.exif(makerNote: Array("Maker".utf8) + [0, 7] + png + [1, 2, 3], thumbnail: [])
        // A photo with no metadata of its own, these two blocks after its start.
        let small = try ImageReader.thumbnail(
            Corpus.path("photos/mate-Storm.jpg"), width: 32, height: 32, fit: .inside, upscale: false,
            pixelLimit: ImageReader.defaultPixelLimit, memoryLimit: ImageReader.usableMemory)
        let photo = try ImageWriter.encode(
            small.pixels, extension: "jpg", named: "photo", sourceBitDepth: 8, sourceHadAlpha: false, metadata: nil,
            options: EncodeOptions(metadata: .strip)).bytes
        let (read, written, bytes) = try Self.keptThrough([exif, xmp], inserted: photo, as: "kept.jpg", in: scratch)
        let pngSignature: [UInt8] = [0x89] + Array("PNG".utf8) + [0x0D, 0x0A, 0x1A, 0x0A]
        func holdsPNG(_ bytes: [UInt8]) -> Bool { bytes.indices.contains { bytes[$0...].starts(with: pngSignature) } }
        #expect(read.metadata.exif.map { $0.count > 100 && !holdsPNG($0) } == true, "the EXIF read keeps the PNG")
        let kept = String(decoding: written.metadata.xmp ?? [], as: UTF8.self)
        #expect(kept.contains("my:Kept"), "the XMP is kept: \(kept.prefix(200))")
        #expect(!Self.holdsAPiece(of: base64, in: String(decoding: bytes, as: UTF8.self)), "the BMP is in the file")
        #expect(!holdsPNG(bytes), "the PNG is in the file")
        #expect(written.metadata.exif != nil, "the EXIF is kept")
    }
}
