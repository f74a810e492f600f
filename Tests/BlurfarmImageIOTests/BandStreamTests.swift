import BlurfarmCore
@testable import BlurfarmImageIO
import BlurfarmTestSupport
import Foundation
import Synchronization
import Testing

@Suite("Reading and writing band by band")
struct BandStreamTests {
    /// Bands of at most 97 rows without a halo, one read ahead, in `Float32`: as the tests read.
    static let streaming = DecodeMemory.Streaming(bandRows: 97, haloRows: 0, buffers: 4, samples: .bytes(4))

    /// Random band heights from `generator` covering `height` rows: (first row, rows).
    static func bands(height: Int, using generator: inout SplitMix) -> [(y: Int, rows: Int)] {
        var bands: [(Int, Int)] = []
        var y = 0
        while y < height {
            let rows = min(height - y, Int.random(in: 1...97, using: &generator))
            bands.append((y, rows))
            y += rows
        }
        return bands
    }

    /// The image at `path` read band by band (random heights) into one buffer of the file's
    /// samples, and those samples as premultiplied `Float32` (as a tile converts them).
    static func readInBands(_ path: String, seed: UInt64) throws -> (pixels: PixelBuffer, reader: BandReader) {
        let reader = try #require(try BandReader.open(path, streaming: Self.streaming))
        let samples = AnyPixels.uninitialized(
            Rect(width: reader.width, height: reader.height), channels: reader.channels, format: reader.format)
        var generator = SplitMix(seed: seed)
        for band in bands(height: reader.height, using: &generator) {
            try reader.read(into: samples.view(Rect(x: 0, y: band.y, width: reader.width, height: band.rows)))
        }
        #expect(reader.rowsRead == reader.height)
        return (samples.floats(in: samples.rect), reader)
    }

    @Test(arguments: [
        "photos/plasma-Kite.jpg", "photos/mate-GreenMeadow.jpg", "special/cmyk.jpg", "special/display-p3.jpg",
        "special/deep-16bit.png", "special/alpha-garbage-under-transparent.png", "special/grayscale.jpg",
        "special/kite.webp", "special/aqua.tif",
    ])
    func bandsAreBitIdenticalToTheWholeDecode(_ file: String) throws {
        let whole = try ImageReader.read(Corpus.path(file))
        let (pixels, reader) = try Self.readInBands(Corpus.path(file), seed: 12)
        #expect(reader.bitDepth == whole.bitDepth && reader.hasAlpha == whole.hasAlpha)
        #expect(reader.metadata.iccProfile == whole.metadata.iccProfile)
        #expect(reader.metadata.exif == whole.metadata.exif && reader.metadata.xmp == whole.metadata.xmp)
        #expect(pixels.isBitIdentical(to: whole.pixels), "first difference at \(String(describing: pixels.firstDifference(from: whole.pixels)))")
    }

    /// `apply` opens the file on its main thread and decodes on a thread of its own: a libvips
    /// region belongs to the thread that made it (libvips aborts otherwise).
    @Test func bandsAreReadOnAnotherThreadThanTheOneThatOpened() throws {
        let reader = try #require(try BandReader.open(Corpus.path("photos/mate-GreenMeadow.jpg"), streaming: Self.streaming))
        let pixels = AnyPixels.uninitialized(
            Rect(width: reader.width, height: reader.height), channels: reader.channels, format: reader.format)
        let done = DispatchSemaphore(value: 0)
        let failed = Mutex<ImageIOError?>(nil)
        let thread = Thread {
            do throws(ImageIOError) {
                while reader.rowsRead < reader.height {
                    let rows = min(100, reader.height - reader.rowsRead)
                    try reader.read(into: pixels.view(Rect(x: 0, y: reader.rowsRead, width: reader.width, height: rows)))
                }
            } catch {
                failed.withLock { $0 = error }
            }
            done.signal()
        }
        thread.start()
        done.wait()
        #expect(failed.withLock { $0 } == nil)
        #expect(pixels.floats(in: pixels.rect).isBitIdentical(to: try ImageReader.read(Corpus.path("photos/mate-GreenMeadow.jpg")).pixels))
    }

    @Test func anImageToTurnUprightIsNotReadInBands() throws {
        #expect(try BandReader.open(Corpus.path("special/exif-orientation-6.jpg"), streaming: Self.streaming) == nil)
    }

    @Test func theHeaderChecksStillRefuse() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let bomb = scratch.file("bomb.jpg")
        try LyingFiles.jpegClaiming(Corpus.path("photos/mate-GreenMeadow.jpg"), width: 60000, height: 60000)
            .write(to: URL(fileURLWithPath: bomb))
        #expect(failure { try BandReader.open(bomb, streaming: Self.streaming) }?.code == .overPixelLimit)
        #expect(failure { try BandReader.open(Corpus.path("special/truncated.jpg"), streaming: Self.streaming) }?.code == .decodeFailed)
        #expect(failure { try BandReader.open(scratch.file("missing.jpg"), streaming: Self.streaming) }?.code == .fileMissing)
    }

    /// A file cut short behind an end-of-image marker passes the structure check; its first
    /// bands decode and the band where its data ends fails, through libjpeg's own decode and
    /// through libvips's (a photo with a profile to convert).
    @Test(arguments: [("photos/mate-Storm.jpg", true), ("photos/plasma-Kite.jpg", false)])
    func aFileCutShortFailsAtTheBandWhereItsDataEnds(file: String, libjpeg: Bool) throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let path = scratch.file("cut.jpg")
        try LyingFiles.truncatedWithEndMarker(Corpus.path(file), keeping: 0.5)
            .write(to: URL(fileURLWithPath: path))
        let reader = try #require(try BandReader.open(path, streaming: Self.streaming))
        #expect(reader.decodesWithLibjpeg == libjpeg)
        var failed: ImageIOError?
        while reader.rowsRead < reader.height, failed == nil {
            let rows = min(64, reader.height - reader.rowsRead)
            let band = AnyPixels.uninitialized(
                Rect(x: 0, y: reader.rowsRead, width: reader.width, height: rows), channels: 3, format: reader.format)
            failed = failure { try reader.read(into: band) }
        }
        #expect(failed?.code == .decodeFailed)
        #expect(failed?.path == path)
        #expect(reader.rowsRead > 0 && reader.rowsRead < reader.height, "the first bands decode, the last do not")
    }

    /// Writes `pixels` whole (ImageWriter) and band by band (BandWriter, random band heights,
    /// a ring of `ringRows`, the bands converted to the writer's samples as a tile is) to
    /// `name`; returns both files' bytes. Each band is appended from one buffer, which is
    /// overwritten as soon as `append` returns (the writer may no longer read it then).
    func bothWays(
        _ pixels: PixelBuffer, to name: String, bitDepth: Int, hadAlpha: Bool, metadata: ImageMetadata?,
        options: EncodeOptions = EncodeOptions(), ringRows: Int = 7, seed: UInt64 = 5
    ) throws -> (whole: [UInt8], banded: [UInt8]) {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let whole = scratch.file("whole-" + name), banded = scratch.file(name)
        try ImageWriter.write(
            pixels, to: whole, sourceBitDepth: bitDepth, sourceHadAlpha: hadAlpha, metadata: metadata, options: options)
        #expect(BandWriter.canWrite(to: banded, channels: pixels.channels, sourceHadAlpha: hadAlpha, options: options))
        let writer = try BandWriter(
            path: banded, width: pixels.rect.width, height: pixels.rect.height, channels: pixels.channels,
            sourceBitDepth: bitDepth, sourceHadAlpha: hadAlpha, metadata: metadata, options: options, ringRows: ringRows)
        let samples = AnyPixels.uninitialized(pixels.rect, writer.layout)
        samples.store(pixels, in: pixels.rect, background: writer.background)
        var generator = SplitMix(seed: seed)
        let reused = AnyPixels.uninitialized(Rect(width: pixels.rect.width, height: 97), writer.layout)
        for band in Self.bands(height: pixels.rect.height, using: &generator) {
            let rows = Rect(x: 0, y: band.y, width: pixels.rect.width, height: band.rows)
            let buffer = AnyPixels(
                rect: rows, channels: reused.channels, format: reused.format, storage: reused.storage,
                byteOffset: reused.byteOffset, rowStride: reused.rowStride)
            buffer.copy(rows, from: samples)
            try writer.append(buffer)
            reused.forEachRow(in: reused.rect) { row, bytes in row.initializeMemory(as: UInt8.self, repeating: 0xA5, count: bytes) }
        }
        try writer.finish()
        #expect(try scratch.contents() == [name, "whole-" + name].sorted(), "temporary files left behind")
        return (Array(try Data(contentsOf: URL(fileURLWithPath: whole))), Array(try Data(contentsOf: URL(fileURLWithPath: banded))))
    }

    @Test(arguments: [
        ("photos/plasma-Kite.jpg", "out.jpg"), ("photos/plasma-Kite.jpg", "out.png"), ("photos/plasma-Kite.jpg", "out.webp"),
        ("special/deep-16bit.png", "out.png"), ("special/deep-16bit.png", "out.tif"),
        ("special/alpha-garbage-under-transparent.png", "out.png"),
        ("special/alpha-garbage-under-transparent.png", "out.webp"),
        ("special/alpha-garbage-under-transparent.png", "out.jpg"), ("special/cmyk.jpg", "out.jpg"),
    ])
    func bandsGiveTheBytesOfTheWholeEncode(_ file: String, _ name: String) throws {
        let image = try ImageReader.read(Corpus.path(file))
        // Every metadata policy: `keep-icc` and `strip` JPEG, WebP and AVIF are encoded in
        // memory and stripped.
        for metadata in MetadataPolicy.allCases {
            let (whole, banded) = try bothWays(
                image.pixels, to: name, bitDepth: image.bitDepth, hadAlpha: image.hasAlpha, metadata: image.metadata,
                options: EncodeOptions(metadata: metadata))
            #expect(!whole.isEmpty)
            #expect(whole == banded, "\(metadata)")
        }
    }

    @Test func smallGeneratedImagesGiveTheSameBytes() throws {
        // Translucent, 16-bit, odd sizes, values beyond 0...1 (clamped) and NaN (0).
        let pixels = makeBuffer(width: 37, height: 23) { x, y in
            let a = Float((x * 7 + y * 3) % 11) / 10
            let v = Float(x) / 36 * 1.2 - 0.1
            return SIMD4(v * a, Float(y) / 22 * a, x == 5 && y == 5 ? .nan : 0.5 * a, a)
        }
        for (name, depth) in [("g.png", 16), ("g.png", 8), ("g.webp", 8), ("g.tif", 16), ("g.jpg", 8)] {
            for ring in [1, 4, 100] {
                let (whole, banded) = try bothWays(
                    pixels, to: name, bitDepth: depth, hadAlpha: true, metadata: nil,
                    options: EncodeOptions(lossless: name.hasSuffix(".webp")), ringRows: ring, seed: UInt64(ring))
                #expect(whole == banded, "\(name), \(depth) bits, ring \(ring)")
            }
        }
    }

    /// A JPEG of 8 MP or more is encoded with restart markers where its chunks end: the chunks
    /// encoded at once (from `JPEGChunks.parallelCores` cores) or the image in one go give the
    /// same bytes, whole or band by band, to a file or in memory; an abandoned chunked write
    /// leaves the output as it was and no temporary file.
    @Test func aLargeJPEGGivesTheSameBytesEncodedInChunksAtOnceOrInOneGo() throws {
        let image = try ImageReader.read(Corpus.path("special/bench-3840x2160.jpg"))
        let options = EncodeOptions(quality: 90, metadata: .keepICC)
        let cores = ImageWriter.encoderCores
        defer { ImageWriter.encoderCores = cores }
        var files: [[UInt8]] = []
        for encoderCores in [1, JPEGChunks.parallelCores] {
            ImageWriter.encoderCores = encoderCores
            #expect(JPEGChunks.encodesInParallel(pixels: image.pixels.rect.area) == (encoderCores > 1))
            let (whole, banded) = try bothWays(
                image.pixels, to: "big.jpg", bitDepth: 8, hadAlpha: false, metadata: image.metadata, options: options,
                ringRows: 256)
            let writer = try BandWriter.inMemory(
                path: "big.jpg", width: image.pixels.rect.width, height: image.pixels.rect.height, channels: 3,
                sourceBitDepth: 8, sourceHadAlpha: false, metadata: image.metadata, options: options)
            let samples = AnyPixels.uninitialized(image.pixels.rect, writer.layout)
            samples.store(image.pixels, in: image.pixels.rect, background: writer.background)
            try writer.append(samples)
            files += [whole, banded, try writer.finishEncoded()]

            let scratch = try ScratchFolder()
            defer { scratch.remove() }
            let path = scratch.file("out.jpg")
            try Data("old".utf8).write(to: URL(fileURLWithPath: path))
            let abandoned = try BandWriter(
                path: path, width: image.pixels.rect.width, height: image.pixels.rect.height, channels: 3,
                sourceBitDepth: 8, sourceHadAlpha: false, metadata: nil, options: options, temporaryFiles: TemporaryFiles())
            let top = Rect(width: image.pixels.rect.width, height: 600)
            let part = AnyPixels.uninitialized(top, abandoned.layout)
            part.store(image.pixels, in: top, background: abandoned.background)
            try abandoned.append(part)
            abandoned.abandon()
            #expect(try scratch.contents() == ["out.jpg"], "\(encoderCores) cores: temporary files left behind")
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data("old".utf8))
        }
        #expect(files.allSatisfy { $0 == files[0] }, "\(files.map(\.count))")
        #expect(zip(files[0], files[0].dropFirst()).contains { $0 == 0xFF && $1 == 0xD0 }, "restart markers")
    }

    /// Translucency found late is not written band by band.
    @Test func translucencyFoundLateIsNotWrittenInBands() {
        #expect(BandWriter.canWrite(to: "a.jpg", channels: 3, sourceHadAlpha: false, options: EncodeOptions(metadata: .strip)))
        #expect(!BandWriter.canWrite(to: "a.png", channels: 4, sourceHadAlpha: false, options: EncodeOptions()))
        #expect(BandWriter.canWrite(to: "a.jpg", channels: 4, sourceHadAlpha: false, options: EncodeOptions()))
    }

    /// A writer whose saver thread encodes the rows as it takes them (PNG, TIFF, a JPEG keeping
    /// its metadata) makes its appends wait, and its bands are not made taller for the reach;
    /// one that takes the rows into memory (WebP) or encodes on the appending thread (an 8-bit
    /// JPEG) does not.
    @Test func writersWhoseEncoderTakesTheRowsKeepTheirBandsShort() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let stripped = EncodeOptions(metadata: .strip)
        for (name, bitDepth, options, waits) in [
            ("a.png", 8, stripped, true), ("b.png", 16, stripped, true), ("c.tif", 16, stripped, true),
            ("d.jpg", 8, EncodeOptions(metadata: .keep), true), ("e.webp", 8, stripped, false), ("f.jpg", 8, stripped, false),
        ] {
            let writer = try BandWriter(
                path: scratch.file(name), width: 64, height: 64, channels: 3, sourceBitDepth: bitDepth, sourceHadAlpha: false,
                metadata: nil, options: options)
            #expect(writer.waitsForEncoder == waits, "\(name)")
            writer.abandon()
        }
        // Sigma 32 reaches 96 rows: a band of 8 times that, as tall as a tile allows, unless the
        // encoder waits.
        #expect(RenderSchedule.bandRows(forTile: 512, reach: 96) == 512)
        #expect(RenderSchedule.bandRows(forTile: 512, reach: 96, encoderWaits: true) == RenderSchedule.minimumBandRows)
        #expect(RenderSchedule.bandRows(forTile: 0, reach: 96) == 768)
    }

    @Test func anAbandonedWriteLeavesTheOutputAsItWasAndNoTemporaryFile() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let path = scratch.file("out.jpg")
        try Data("old".utf8).write(to: URL(fileURLWithPath: path))
        let temporaryFiles = TemporaryFiles()
        let writer = try BandWriter(
            path: path, width: 64, height: 64, channels: 3, sourceBitDepth: 8, sourceHadAlpha: false, metadata: nil,
            options: EncodeOptions(), temporaryFiles: temporaryFiles, ringRows: 4)
        try writer.append(AnyPixels.uninitialized(Rect(width: 64, height: 10), channels: 3, format: .uint8))
        writer.abandon()
        #expect(try scratch.contents() == ["out.jpg"])
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "old")
        #expect(temporaryFiles.inProgress.isEmpty)
        // Finishing early fails the same way.
        let early = try BandWriter(
            path: path, width: 64, height: 64, channels: 3, sourceBitDepth: 8, sourceHadAlpha: false, metadata: nil,
            options: EncodeOptions())
        #expect(failure { try early.finish() }?.code == .encodeFailed)
        #expect(try scratch.contents() == ["out.jpg"])
    }

    /// `placing` is asked once the file is whole, before it goes in place, by each way of
    /// encoding (libjpeg in memory; libvips's saver to the file, and into memory then stripped):
    /// a refusal is the writer's error, the output stays as it was, and no temporary file is left.
    @Test(arguments: [("out.jpg", MetadataPolicy.keepICC), ("out.png", .keepICC), ("out.webp", .keepICC), ("out.webp", .keep)])
    func aWriteRefusedBeforeItsFileGoesInPlaceLeavesTheOutputAsItWas(_ name: String, _ metadata: MetadataPolicy) throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let path = scratch.file(name)
        try Data("old".utf8).write(to: URL(fileURLWithPath: path))
        let temporaryFiles = TemporaryFiles()
        let asked = Mutex(0)
        let refusal = ImageIOError(code: .fileUnreadable, path: "in.png", message: "changed")
        let writer = try BandWriter(
            path: path, width: 64, height: 64, channels: 3, sourceBitDepth: 8, sourceHadAlpha: false, metadata: nil,
            options: EncodeOptions(metadata: metadata), temporaryFiles: temporaryFiles, ringRows: 4,
            placing: {
                asked.withLock { $0 += 1 }
                return refusal
            })
        for y in stride(from: 0, to: 64, by: 16) {
            let rows = AnyPixels.uninitialized(Rect(x: 0, y: y, width: 64, height: 16), channels: 3, format: .uint8)
            rows.forEachRow(in: rows.rect) { row, bytes in row.initializeMemory(as: UInt8.self, repeating: 0x40, count: bytes) }
            try writer.append(rows)
        }
        #expect(failure { try writer.finish() }?.message == "changed")
        #expect(asked.withLock { $0 } == 1)
        #expect(try scratch.contents() == [name])
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "old")
        #expect(temporaryFiles.inProgress.isEmpty)
    }
}
