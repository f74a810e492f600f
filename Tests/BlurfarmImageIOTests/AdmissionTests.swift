import BlurfarmCore
@testable import BlurfarmImageIO
import BlurfarmTestSupport
import Foundation
import Testing

/// Admission from the header: which images the limits let through (a decode streamed band by
/// band needs memory for its width, not its height), and what the refusals say.
@Suite("Admission from the header")
struct AdmissionTests {
    static let applyStreaming = DecodeMemoryTests.applyStreaming

    /// The header of a 30000 x 30000 PNG (900 megapixels, 13.5 GB decoded whole into `Float32`):
    /// under a memory limit of 8 GB the whole decode is refused, streaming it is admitted (it
    /// needs under 1 GB), and under the default pixel limit too. Nothing is decoded.
    @Test(.tags(.process)) func aBigImageThatStreamsWithinTheMemoryLimitIsAdmitted() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let path = scratch.file("big.png")
        try LyingFiles.pngBomb(width: 30000, height: 30000).write(to: URL(fileURLWithPath: path))
        let limit = 8 << 30
        let whole = failure { try ImageReader.read(path, memoryLimit: limit) }
        #expect(whole?.code == .overMemoryLimit, "\(whole?.description ?? "no error")")
        #expect(whole?.message.hasPrefix("decoding 30000x30000 needs about 13.5 GB, over the memory limit of 8.6 GB") == true)
        let reader = try #require(try BandReader.open(path, streaming: Self.applyStreaming, memoryLimit: limit))
        #expect(reader.width == 30000 && reader.height == 30000 && reader.rowsRead == 0)
        let needed = try #require(
            DecodeMemory.streamed(.init(width: 30000, height: 30000, channels: 3, sampleBytes: 1), Self.applyStreaming))
        #expect(needed < 1_000_000_000)
    }

    /// The streamed estimate is what `BandReader.open` checks: the exact estimate passes, one
    /// byte less is refused, saying the limit and the setting that raises it.
    @Test func theStreamedEstimateIsCheckedToTheByte() throws {
        let path = Corpus.path("special/kite.webp")  // 1024 x 640, opaque, 8-bit
        let needed = try #require(
            DecodeMemory.streamed(.init(width: 1024, height: 640, channels: 3, sampleBytes: 1), Self.applyStreaming))
        #expect(try BandReader.open(path, streaming: Self.applyStreaming, memoryLimit: needed) != nil)
        let error = failure { try BandReader.open(path, streaming: Self.applyStreaming, memoryLimit: needed - 1) }
        #expect(error?.code == .overMemoryLimit)
        #expect(
            error?.description
                == "\(path): streaming 1024x640 needs about \(ImageReader.shown(bytes: needed)), over the memory limit of "
                + "\(ImageReader.shown(bytes: needed - 1)) (setting memory-limit, option --memory-limit)")
    }

    /// A 440 KB PNG of 60000 x 60000 black pixels: refused by the default pixel limit from its
    /// header, streamed or whole. Streaming it would fit in memory, so only the pixel limit
    /// stops it (docs/security.md).
    @Test(.tags(.process)) func aDecompressionBombIsRefusedByThePixelLimitByDefault() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let path = scratch.file("bomb.png")
        try LyingFiles.pngBomb(width: 60000, height: 60000).write(to: URL(fileURLWithPath: path))
        let message =
            "\(path): 60000x60000 is 3600000000 pixels, over the pixel limit of 1073741824 "
            + "(setting pixel-limit, option --pixel-limit)"
        for error in [
            failure { try BandReader.open(path, streaming: Self.applyStreaming) },
            failure { try ImageReader.read(path) },
            failure { try ImageReader.thumbnail(path, width: 100, height: nil, fit: .inside, upscale: false) },
        ] {
            #expect(error?.code == .overPixelLimit)
            #expect(error?.description == message)
        }
        #expect(try BandReader.open(path, streaming: Self.applyStreaming, pixelLimit: .max, memoryLimit: 8 << 30) != nil)
    }

    @Test func sizesAreShownInUnitsPeopleRead() {
        #expect(ImageReader.shown(bytes: 999_999) == "999999 bytes")
        #expect(ImageReader.shown(bytes: 12_345_678) == "12.3 MB")
        #expect(ImageReader.shown(bytes: 54_000_000_000) == "54.0 GB")
    }
}
