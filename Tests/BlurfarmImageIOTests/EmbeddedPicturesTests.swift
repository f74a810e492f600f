import BlurfarmCore
import BlurfarmFileFormats
@testable import BlurfarmImageIO
import BlurfarmTestSupport
import Foundation
import Testing

/// Metadata kept (`keep`) carries no picture of the original: an output is blurred, redacted
/// or resized, and the EXIF thumbnail or an XMP thumbnail of the photo as it was would show
/// what it hides (docs/image-io.md, "Metadata").
@Suite struct EmbeddedPicturesTests {
    /// Where a JPEG stream starts in `bytes` at or after `from`, if anywhere.
    static func jpegStart(in bytes: [UInt8], from: Int = 0) -> Int? {
        guard bytes.count >= 3, from <= bytes.count - 3 else { return nil }
        return (from...(bytes.count - 3)).first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xD8 && bytes[$0 + 2] == 0xFF }
    }

    /// A little-endian EXIF block: IFD0 with the orientation (6) and a maker note (UNDEFINED)
    /// holding `makerNote`, linked to IFD1, whose JPEGInterchangeFormat points at `thumbnail`.
    static func exif(makerNote: [UInt8], thumbnail: [UInt8]) -> [UInt8] {
        func u16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
        func u32(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)] }
        // TIFF offsets: header 8, IFD0 at 8 (2 entries: 2 + 24 + 4 = 30), IFD1 at 38 (2 entries,
        // 30), the maker note at 68, the thumbnail after it.
        let makerNoteAt = 68, thumbnailAt = 68 + makerNote.count
        var tiff: [UInt8] = [0x49, 0x49] + u16(42) + u32(8)
        tiff += u16(2) + u16(0x0112) + u16(3) + u32(1) + u16(6) + u16(0)
        tiff += u16(0x927C) + u16(7) + u32(makerNote.count) + u32(makerNoteAt) + u32(38)
        tiff += u16(2) + u16(0x0201) + u16(4) + u32(1) + u32(thumbnailAt)
        tiff += u16(0x0202) + u16(4) + u32(1) + u32(thumbnail.count) + u32(0)
        precondition(tiff.count == makerNoteAt)
        return Array("Exif".utf8) + [0, 0] + tiff + makerNote + thumbnail
    }

    @Test func theEXIFThumbnailIsUnlinkedAndZeroedAndAMakerNotesPreviewZeroed() throws {
        let thumbnail: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0, 6, 1, 2, 3, 4, 0xFF, 0xD9]
        let preview: [UInt8] = [0xFF, 0xD8, 0xFF, 0xDB, 0, 4, 9, 9, 0xFF, 0xD9]
        let makerNote: [UInt8] = Array("Nikon".utf8) + [0, 7] + preview + [5, 6]
        let original = Self.exif(makerNote: makerNote, thumbnail: thumbnail)
        let cleaned = EXIF.withoutPictures(original)
        #expect(cleaned.count == original.count)
        #expect(Self.jpegStart(in: cleaned) == nil)
        #expect(EXIF.orientation(cleaned) == 6, "IFD0 is read as before")
        // IFD0's link to IFD1 (TIFF offset 34, after "Exif\0\0") is 0; nothing else but the two
        // pictures changed.
        let tiff = 6
        #expect(Array(cleaned[(tiff + 34)..<(tiff + 38)]) == [0, 0, 0, 0])
        var expected = original
        for i in (tiff + 34)..<(tiff + 38) { expected[i] = 0 }
        let previewAt = tiff + 68 + 7, thumbnailAt = tiff + 68 + makerNote.count
        for i in previewAt..<(previewAt + preview.count) { expected[i] = 0 }
        for i in thumbnailAt..<(thumbnailAt + thumbnail.count) { expected[i] = 0 }
        #expect(cleaned == expected)
        #expect(Array(cleaned[(previewAt + preview.count)...].prefix(2)) == [5, 6])
    }

    /// A JPEG's start with no end after it is zeroed to the maker note's end (fail closed: a
    /// viewer shows the rows a cut JPEG has); stray bytes after its start do not end it.
    @Test func anEXIFWithoutPicturesIsUnchangedAndAStartWithoutAnEndIsZeroedToTheMakerNotesEnd() {
        let plain = Self.exif(makerNote: [1, 2, 3, 0xFF, 0xD7, 0xFF, 4], thumbnail: [])
        var unlinked = plain
        for i in (6 + 34)..<(6 + 38) { unlinked[i] = 0 }
        #expect(EXIF.withoutPictures(plain) == unlinked)
        #expect(EXIF.withoutPictures(unlinked) == unlinked)
        let cut = Self.exif(makerNote: [1, 2, 3, 0xFF, 0xD8, 0xFF, 4], thumbnail: []) + [9, 9]
        var zeroed = cut
        for i in (6 + 34)..<(6 + 38) { zeroed[i] = 0 }
        for i in (6 + 68 + 3)..<(6 + 68 + 7) { zeroed[i] = 0 }
        #expect(EXIF.withoutPictures(cut) == zeroed)
        // No TIFF structure: the JPEG libjpeg cannot read to its end (marker 07) is zeroed to the block's end.
        let malformed: [UInt8] = [1, 2, 0xFF, 0xD8, 0xFF, 7, 0xFF, 0xD9, 3]
        #expect(EXIF.withoutPictures(malformed) == [1, 2, 0, 0, 0, 0, 0, 0, 0])
        let wellFormed: [UInt8] = [1, 2, 0xFF, 0xD8, 0xFF, 0xD9, 3]
        #expect(EXIF.withoutPictures(wellFormed) == [1, 2, 0, 0, 0, 0, 3])
    }

    @Test func xmpThumbnailsAreEmptiedAndTheRestKept() {
        let packet = """
            <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF><rdf:Description xmp:Rating="3" \
            xmpGImg:image = '/9j/4AAQSkZJRg==' other="1"><xmp:Thumbnails><rdf:Alt><rdf:li>\
            <xapGImg:width>256</xapGImg:width><xapGImg:image>/9j/4AAQ&#xA;SkZJRgABAQ</xapGImg:image>\
            </rdf:li></rdf:Alt></xmp:Thumbnails></rdf:Description></rdf:RDF></x:xmpmeta>
            """
        let expected = """
            <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF><rdf:Description xmp:Rating="3" \
            xmpGImg:image = '' other="1"><xmp:Thumbnails><rdf:Alt><rdf:li>\
            <xapGImg:width>256</xapGImg:width><xapGImg:image></xapGImg:image>\
            </rdf:li></rdf:Alt></xmp:Thumbnails></rdf:Description></rdf:RDF></x:xmpmeta>
            """
        #expect(String(decoding: XMP.withoutPictures(Array(packet.utf8)), as: UTF8.self) == expected)
        let none = Array("<x:xmpmeta><rdf:Description xmp:Rating=\"3\"/></x:xmpmeta>".utf8)
        #expect(XMP.withoutPictures(none) == none)
    }

    /// Google's camera keeps the whole original photo as `GImage:Data` and a depth map as
    /// `GDepth:Data`; any other property whose value is base64 of a picture (a PNG here) goes
    /// too; base64 that is no picture, and every other byte, stays.
    @Test func everyPictureInXMPIsEmptiedWhateverItsName() {
        let jpeg = "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEw8U"
        let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
        let text = "aGVsbG8gd29ybGQsIHRoaXMgaXMgbm8gcGljdHVyZQ=="
        let packet = """
            <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF><rdf:Description GImage:Mime="image/jpeg"             GImage:Data="\(jpeg)" GDepth:Format="RangeInverse" GDepth:Data="\(png)" note="\(text)">            <my:Preview>
            \(png)
            </my:Preview><my:Caption>\(text)</my:Caption></rdf:Description></rdf:RDF></x:xmpmeta>
            """
        let cleaned = String(decoding: XMP.withoutPictures(Array(packet.utf8)), as: UTF8.self)
        #expect(!cleaned.contains(jpeg) && !cleaned.contains(png), "\(cleaned)")
        #expect(cleaned.contains("GImage:Data=\"\"") && cleaned.contains("GDepth:Data=\"\""), "\(cleaned)")
        #expect(cleaned.contains("<my:Preview></my:Preview>"), "\(cleaned)")
        #expect(cleaned.components(separatedBy: text).count == 3, "\(cleaned)")
        #expect(cleaned.contains("GImage:Mime=\"image/jpeg\"") && cleaned.contains("GDepth:Format=\"RangeInverse\""))
    }

    /// A photo whose XMP holds the original as `GImage:Data` (a 1 KB JPEG in base64), written
    /// with `metadata: keep` in each format that carries XMP: the XMP is kept, the picture is not.
    @Test(arguments: ["kept.jpg", "kept.webp", "kept.png", "kept.tif"])
    func theOriginalInXMPIsNotKept(_ name: String) throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let small = try ImageReader.thumbnail(
            Corpus.path("photos/mate-Storm.jpg"), width: 32, height: 32, fit: .inside, upscale: false,
            pixelLimit: ImageReader.defaultPixelLimit, memoryLimit: ImageReader.usableMemory)
        let original = try ImageWriter.encode(
            small.pixels, extension: "jpg", named: "original", sourceBitDepth: 8, sourceHadAlpha: false, metadata: nil,
            options: EncodeOptions(metadata: .strip))
        let base64 = Data(original.bytes).base64EncodedString()
        let xmp = Array("http://ns.adobe.com/xap/1.0/\0".utf8) + Array("""
            <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">            <rdf:Description xmlns:GImage="http://ns.google.com/photos/1.0/image/" GImage:Mime="image/jpeg"             GImage:Data="\(base64)"/></rdf:RDF></x:xmpmeta>
            """.utf8)
        // The photo with that XMP as an APP1 segment after its start.
        let photo = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Corpus.path("photos/mate-Storm.jpg"))))
        let (read, written, file) = try Self.keptThrough([xmp], inserted: photo, as: name, in: scratch)
        #expect(read.metadata.xmp.map { String(decoding: $0, as: UTF8.self).contains("GImage:Mime") } == true)
        let kept = String(decoding: written.metadata.xmp ?? [], as: UTF8.self)
        #expect(kept.contains("GImage:Mime"), "the XMP is kept: \(kept.prefix(200))")
        #expect(!kept.contains(String(base64.prefix(40))), "the original is in the XMP")
        let bytes = String(decoding: file, as: UTF8.self)
        #expect(!bytes.contains(String(base64.prefix(40))), "the original is in the file")
    }

    /// The JPEG `photo` with `blocks` (each an APP1 segment's payload) after its start, read,
    /// written to `name` in `scratch` with `metadata: keep` and read back: what was read, what
    /// was written, and the file's bytes.
    static func keptThrough(_ blocks: [[UInt8]], inserted photo: [UInt8], as name: String, in scratch: ScratchFolder) throws
        -> (read: DecodedImage, written: DecodedImage, file: [UInt8])
    {
        var segments: [UInt8] = []
        for block in blocks {
            let length = block.count + 2
            segments += [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + block
        }
        let source = scratch.file("source.jpg")
        try Data(Array(photo[..<2]) + segments + Array(photo[2...])).write(to: URL(fileURLWithPath: source))
        let read = try ImageReader.read(source)
        let path = scratch.file(name)
        try ImageWriter.write(
            read.pixels, to: path, sourceBitDepth: 8, sourceHadAlpha: false, metadata: read.metadata,
            options: EncodeOptions(metadata: .keep))
        return (read, try ImageReader.read(path), [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
    }

    /// mate-Storm.jpg's EXIF holds a 4 KB thumbnail of the photo: written with `keep`, blurred,
    /// in each format that carries EXIF, the output has EXIF but no JPEG stream but its own.
    @Test(arguments: ["kept.jpg", "kept.webp", "kept.png"])
    func aPhotosThumbnailIsNotKept(_ name: String) throws {
        let source = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Corpus.path("photos/mate-Storm.jpg"))))
        #expect(Self.jpegStart(in: source, from: 2) != nil, "the corpus photo has a thumbnail")
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let original = try ImageReader.read(Corpus.path("photos/mate-Storm.jpg"))
        let path = scratch.file(name)
        try ImageWriter.write(
            original.pixels, to: path, sourceBitDepth: 8, sourceHadAlpha: false, metadata: original.metadata,
            options: EncodeOptions(metadata: .keep))
        let written = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(Self.jpegStart(in: written, from: name.hasSuffix(".jpg") ? 2 : 0) == nil)
        #expect(try ImageReader.read(path).metadata.exif != nil, "the EXIF is kept")
    }
}
