import BlurfarmCore
import BlurfarmImageIO
import BlurfarmTestSupport
import Foundation
import Testing

/// AVIF output through libvips's heifsave with AV1 (this machine's libvips has an encoder).
@Suite("AVIF output")
struct AVIFTests {
    @Test func avifIsAvailableHereAndTheOtherFormatsAlways() {
        for format in ImageFormat.allCases { #expect(ImageWriter.unavailability(of: format) == nil, "\(format)") }
        #expect(ImageFormat(extension: "AVIF") == .avif)
        #expect(ImageFormat.problem(with: .lossless, extension: "avif") != nil)
    }

    /// An AVIF is lossy: it passes the decode check's PSNR floor, keeps alpha and (unstripped)
    /// the source's EXIF, XMP and ICC profile; it is written in the AVIF brand and read back by
    /// libvips's HEIF loader.
    @Test func avifRoundTripKeepsAlphaAndMetadata() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let source = try ImageReader.thumbnail(
            Corpus.path("photos/plasma-ColorfulCups.jpg"), width: 320, height: nil, fit: .inside, upscale: false)
        #expect(source.metadata.exif != nil && source.metadata.xmp != nil && source.metadata.iccProfile != nil)
        let encoded = try ImageWriter.encode(
            source.pixels, for: scratch.file("cups.avif"), sourceBitDepth: 8, sourceHadAlpha: false,
            metadata: source.metadata, options: EncodeOptions())
        #expect(Array(encoded.bytes[4..<12]) == Array("ftypavif".utf8))
        #expect(try encoded.mismatch(against: source.pixels) == nil)
        try ImageWriter.write(encoded)
        let written = try ImageReader.read(scratch.file("cups.avif"))
        #expect(written.metadata.iccProfile == source.metadata.iccProfile)
        // libvips 8.14's HEIF loader reads EXIF back but not XMP: the XMP packet is checked in
        // the bytes (the stripping test).
        #expect(written.metadata.exif != nil)
        #expect(try ImageReader.header(ofFile: scratch.file("cups.avif")).bitDepth == 8)

        let translucent = try ImageReader.thumbnail(
            Corpus.path("special/alpha-garbage-under-transparent.png"), width: 200, height: nil, fit: .inside, upscale: false)
        let withAlpha = try ImageWriter.encode(
            translucent.pixels, for: scratch.file("a.avif"), sourceBitDepth: 8, sourceHadAlpha: true, metadata: nil,
            options: EncodeOptions())
        #expect(withAlpha.hasAlpha)
        #expect(try withAlpha.mismatch(against: translucent.pixels) == nil)
    }

    /// Stripping rebuilds the file without the EXIF and XMP items: the bytes hold no `Exif`
    /// item, no XMP packet, and the rest of the image is the same pixels with the same ICC
    /// profile (the stripped-output test of the other formats, made small: AV1 is slow).
    @Test func strippingRemovesTheMetadataItemsAndKeepsThePixels() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let source = try ImageReader.thumbnail(
            Corpus.path("photos/plasma-ColorfulCups.jpg"), width: 320, height: nil, fit: .inside, upscale: false)
        func encode(strip: Bool) throws -> EncodedImage {
            try ImageWriter.encode(
                source.pixels, for: scratch.file(strip ? "stripped.avif" : "full.avif"), sourceBitDepth: 8, sourceHadAlpha: false, metadata: source.metadata,
                options: EncodeOptions(quality: 60, metadata: strip ? .keepICC : .keep))
        }
        let full = try encode(strip: false), stripped = try encode(strip: true)
        func contains(_ bytes: [UInt8], _ text: String) -> Bool {
            let needle = Array(text.utf8)
            return bytes.indices.dropLast(needle.count).contains { bytes[$0..<($0 + needle.count)].elementsEqual(needle) }
        }
        #expect(contains(full.bytes, "Exif") && contains(full.bytes, "x:xmpmeta"))
        #expect(!contains(stripped.bytes, "Exif") && !contains(stripped.bytes, "x:xmpmeta"))
        #expect(stripped.bytes.count < full.bytes.count)
        try ImageWriter.write(full)
        try ImageWriter.write(stripped)
        let a = try ImageReader.read(scratch.file("full.avif")), b = try ImageReader.read(scratch.file("stripped.avif"))
        #expect(a.pixels.firstDifference(from: b.pixels) == nil)
        #expect(b.metadata.iccProfile == source.metadata.iccProfile && b.metadata.exif == nil && b.metadata.xmp == nil)
    }
}
