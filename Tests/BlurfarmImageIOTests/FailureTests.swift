import BlurfarmTestSupport
import BlurfarmCore
import BlurfarmSystem
@testable import BlurfarmImageIO
import Foundation
import Testing

// libvips keeps one error buffer per process: tests whose libvips calls fail run one at a time
// so that each reads its own message.
@Suite("Failures name the file and say why", .serialized)
struct FailureTests {
    @Test func truncatedJPEGIsAnErrorNotAGreyImage() {
        let path = Corpus.path("special/truncated.jpg")
        let error = failure { try ImageReader.read(path) }
        #expect(error?.code == .decodeFailed)
        #expect(error?.path == path)
        #expect(error?.description.hasPrefix("\(path): ") == true)
        #expect(error?.message.contains("truncated") == true, "message: \(error?.message ?? "none")")
        #expect(error?.message.contains("\n") == false)
    }

    /// A libvips file (`.v`, whatever its name) that ends before its pixels: refused as it is
    /// opened, by every reader, and nothing is written of it (libvips only warned, and a
    /// one-pixel file of garbage was put in place half the times, the run failed). A whole one
    /// reads.
    @Test func aLibvipsFileCutShortIsRefusedAsItIsOpened() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let whole = scratch.file("whole.v"), cut = scratch.file("cut.jpg")
        try ImageWriter.write(
            makeBuffer(width: 20, height: 10) { x, y in SIMD4(Float(x) / 20, Float(y) / 10, 0.5, 1) }, to: scratch.file("w.png"),
            sourceBitDepth: 8, sourceHadAlpha: false, metadata: nil, options: EncodeOptions())
        try ThumbnailTests.vips(["copy", scratch.file("w.png"), whole])
        #expect(try ImageReader.read(whole).pixels.rect == Rect(width: 20, height: 10))
        let bytes = try Data(contentsOf: URL(fileURLWithPath: whole))
        try bytes.prefix(64 + 20 * 10 * 3 - 1).write(to: URL(fileURLWithPath: cut))
        let message = "a libvips file cut short: its header says 20 x 10, 3 band(s), 600 bytes of pixels after its 64-byte header; it has 599"
        #expect(failure { try ImageReader.read(cut) }?.message == message)
        #expect(failure { try ImageReader.header(ofFile: cut) }?.message == message)
        #expect(failure { try BandReader.open(cut, streaming: BandStreamTests.streaming) }?.message == message)
        #expect(failure { try ImageReader.thumbnail(cut, width: 8, height: nil, fit: .inside, upscale: false) }?.message == message)
    }

    /// libheif reads past the end of every AVIF it opens, which leaves "bad seek" in libvips's
    /// error buffer though the read succeeds: it must not become the next failure's message.
    @Test func readingAnAVIFLeavesNoMessageForTheNextFailure() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let small = try ImageReader.thumbnail(
            Corpus.path("photos/mate-Aqua.jpg"), width: 32, height: nil, fit: .inside, upscale: false)
        try ImageWriter.write(
            small.pixels, to: scratch.file("a.avif"), sourceBitDepth: 8, sourceHadAlpha: false, metadata: nil,
            options: EncodeOptions())
        _ = try ImageReader.read(scratch.file("a.avif"))
        // A failure whose message is libvips's own.
        let damaged = scratch.file("damaged.jpg")
        try LyingFiles.damagedEntropyCodedData(Corpus.path("photos/mate-Aqua.jpg")).write(to: URL(fileURLWithPath: damaged))
        let error = failure { try ImageReader.read(damaged) }
        #expect(error?.message.contains("Corrupt JPEG data") == true, "message: \(error?.message ?? "none")")
    }

    /// A write the system refused for want of room (ENOSPC) or of quota (EDQUOT) is a full
    /// disk, one on a read-only file system (EROFS) is that: every write there would fail alike,
    /// and a job writes nothing more there; any other refusal is a failed write, or the code the
    /// caller gives.
    @Test func aWriteRefusedByTheFileSystemItselfSaysSo() {
        for (errno, code) in [
            (ENOSPC, ImageIOError.Code.diskFull), (EDQUOT, .diskFull), (EROFS, .readOnlyFileSystem), (EIO, .writeFailed),
            (EFBIG, .writeFailed),
        ] {
            let error = ImageIOError.writing("out/a.png", SystemCallError(call: "write", errno: errno))
            #expect(error.code == code)
            #expect(error.refusesEveryWriteThere == (code != .writeFailed))
            #expect(error.description == "out/a.png: write failed: \(String(cString: strerror(errno)))")
        }
        let folder = ImageIOError.writing(
            "out/a", SystemCallError(call: "mkdir", errno: EACCES), message: "cannot create the folder", otherwise: .outputFolderNotWritable)
        #expect(folder.code == .outputFolderNotWritable && folder.description == "out/a: cannot create the folder")
    }

    @Test func textFileIsNotAnImage() {
        let path = Corpus.path("special/not-an-image.png")
        let error = failure { try ImageReader.read(path) }
        #expect(error?.code == .notAnImage)
        #expect(error?.description == "\(path): not an image in any format libvips reads")
        #expect(failure { try ImageReader.header(ofFile: path) }?.code == .notAnImage)
    }

    @Test func missingFileIsNamed() {
        let path = Corpus.path("special/no-such-photo.jpg")
        let error = failure { try ImageReader.read(path) }
        #expect(error?.code == .fileMissing)
        #expect(error?.description == "\(path): no such file")
        #expect(failure { try ImageReader.header(ofFile: path) }?.code == .fileMissing)
    }

    @Test func folderIsNotReadableAsAnImage() {
        let path = Corpus.path("special")
        let error = failure { try ImageReader.read(path) }
        #expect(error?.code == .fileUnreadable)
        #expect(error?.description.hasPrefix("\(path): ") == true)
    }

    @Test func fileNameEndingInABracketIsRead() throws {
        // libvips would read "[1]" as load options.
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let path = scratch.file("kite[1]")
        try FileManager.default.copyItem(atPath: Corpus.path("special/kite.webp"), toPath: path)
        let image = try ImageReader.read(path)
        #expect(image.pixels.rect == Rect(width: 1024, height: 640))
        let truncated = scratch.file("cut[2]")
        try FileManager.default.copyItem(atPath: Corpus.path("special/truncated.jpg"), toPath: truncated)
        #expect(failure { try ImageReader.read(truncated) }?.description.hasPrefix("\(truncated): ") == true)
    }

    @Test func encodeFailureLeavesTheExistingFileAndNoTemporaryFile() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let path = scratch.file("out.jpg")
        let precious = Data("the previous output".utf8)
        try precious.write(to: URL(fileURLWithPath: path))
        // JPEG cannot be 70000 pixels wide: libvips refuses while encoding.
        let wide = PixelBuffer(rect: Rect(width: 70_000, height: 1))
        let error = failure {
            try ImageWriter.write(
                wide, to: path, sourceBitDepth: 8, sourceHadAlpha: false, metadata: nil, options: EncodeOptions())
        }
        #expect(error?.code == .encodeFailed)
        #expect(error?.description.hasPrefix("\(path): ") == true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == precious)
        #expect(try scratch.contents() == ["out.jpg"])
    }

    @Test func renameFailureRemovesTheTemporaryFile() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        // A folder where the output should go: the rename over it fails after the temporary
        // file was written.
        let path = scratch.file("taken.png")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        #expect(FileManager.default.createFile(atPath: path + "/inside", contents: Data()))
        let pixels = makeBuffer(width: 4, height: 4) { _, _ in SIMD4(0.2, 0.4, 0.6, 1) }
        let error = failure {
            try ImageWriter.write(
                pixels, to: path, sourceBitDepth: 8, sourceHadAlpha: false, metadata: nil, options: EncodeOptions())
        }
        #expect(error?.code == .writeFailed)
        #expect(error?.message.hasPrefix("rename failed") == true, "message: \(error?.message ?? "none")")
        #expect(try scratch.contents() == ["taken.png"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: path) == ["inside"])
    }

    @Test func missingOutputFolderFailsAndCreatesNothing() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let path = scratch.file("not-there/out.png")
        let pixels = makeBuffer(width: 2, height: 2) { _, _ in SIMD4(0, 0, 0, 1) }
        let error = failure {
            try ImageWriter.write(
                pixels, to: path, sourceBitDepth: 8, sourceHadAlpha: false, metadata: nil, options: EncodeOptions())
        }
        #expect(error?.code == .outputFolderMissing)
        #expect(error?.description == "\(path): folder '\(scratch.file("not-there"))' does not exist")
        #expect(try scratch.contents() == [])
    }

    @Test func unsupportedExtensionAndBadOptionsAreRefused() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let pixels = makeBuffer(width: 2, height: 2) { _, _ in SIMD4(0, 0, 0, 1) }
        func write(_ name: String, _ options: EncodeOptions = EncodeOptions(), depth: Int = 8) -> ImageIOError? {
            failure {
                try ImageWriter.write(
                    pixels, to: scratch.file(name), sourceBitDepth: depth, sourceHadAlpha: false, metadata: nil,
                    options: options)
            }
        }
        #expect(write("out.gif")?.code == .unsupportedOutputExtension)
        #expect(write("out.gif")?.message.hasPrefix("cannot write '.gif' files (supported: ") == true)
        #expect(write("no-extension")?.code == .unsupportedOutputExtension)
        #expect(write("no-extension")?.message.hasPrefix("has no extension to name its format (supported: ") == true)
        #expect(write("out.jpg", EncodeOptions(bitDepth: 16))?.code == .invalidArgument)
        #expect(write("out.webp", EncodeOptions(bitDepth: 16))?.code == .invalidArgument)
        #expect(write("out.jpg", EncodeOptions(quality: 0))?.code == .invalidArgument)
        #expect(write("out.png", depth: 12)?.code == .invalidArgument)
        #expect(try scratch.contents() == [])
        // Extensions match whatever their case.
        #expect(write("OUT.PNG") == nil)
        #expect(try scratch.contents() == ["OUT.PNG"])
    }
}

/// Every file of the corpus that is meant to decode still decodes under the strict decoding
/// (docs/image-io.md, "Strict decoding"), whole and as a thumbnail.
@Suite("The corpus decodes under strict decoding")
struct CorpusDecodeTests {
    /// Every corpus file but the two that are bad on purpose (corpus README: `truncated.jpg`,
    /// `not-an-image.png`), with every sixth of the 1080p batch.
    static let corpus: [String] = {
        func files(_ folder: String) -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: Corpus.path(folder))) ?? []).sorted().map {
                "\(folder)/\($0)"
            }
        }
        let bad: Set = ["special/truncated.jpg", "special/not-an-image.png"]
        let batch = files("batch1080").enumerated().filter { $0.offset % 6 == 0 }.map(\.element)
        return (files("photos") + files("special")).filter { !bad.contains($0) } + batch
    }()

    @Test func theCorpusHasItsFiles() {
        #expect(Self.corpus.count == 8 + 9 + 8)
    }

    @Test(arguments: corpus)
    func corpusFileDecodesAtItsHeadersSize(_ file: String) throws {
        let path = Corpus.path(file)
        let header = try ImageReader.header(ofFile: path)
        let image = try ImageReader.read(path)
        #expect(image.pixels.rect == Rect(width: header.width, height: header.height))
        let small = try ImageReader.thumbnail(path, width: 64, height: nil, fit: .inside, upscale: false)
        #expect(small.pixels.rect.width == 64)
    }
}

/// Files that lie (docs/image-io.md, "Strict decoding" and "Admission"): corrupt or truncated
/// data is an error even where libjpeg only warns, and a header claiming a huge image is
/// refused from the header. With the other tests whose libvips calls fail, one at a time.
extension FailureTests {
    /// A JPEG cut at 95 % and padded with zeros: libjpeg decodes the zeros without a warning
    /// (the lost rows come out flat); the missing end-of-image marker gives it away.
    @Test func truncatedAndPaddedJPEGIsRefused() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let path = scratch.file("padded.jpg")
        try LyingFiles.truncatedAndPadded(Corpus.path("photos/mate-Aqua.jpg"), keeping: 0.95)
            .write(to: URL(fileURLWithPath: path))
        for error in [
            failure { try ImageReader.read(path) },
            failure { try ImageReader.thumbnail(path, width: 200, height: nil, fit: .inside, upscale: false) },
        ] {
            #expect(error?.code == .decodeFailed)
            #expect(
                error?.description == "\(path): the file ends before its end-of-image marker: it is truncated (or padded)")
        }
    }

    /// Damaged entropy-coded data, on which libjpeg only warns and greys out the rest: refused
    /// whole, as a thumbnail and band by band (libjpeg's own decode, as libvips's `fail_on:
    /// warning` does: a baseline file at the row, a progressive one, read whole, at open), with
    /// libjpeg's message.
    @Test(arguments: ["batch1080/b00.jpg", "photos/mate-Aqua.jpg", "photos/plasma-Volna.jpg"])
    func damagedEntropyCodedDataIsRefused(_ file: String) throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let path = scratch.file("damaged.jpg")
        try LyingFiles.damagedEntropyCodedData(Corpus.path(file)).write(to: URL(fileURLWithPath: path))
        let streaming = DecodeMemory.Streaming(bandRows: 64, haloRows: 0, buffers: 2, samples: .bytes(1))
        for error in [
            failure { try ImageReader.read(path) },
            failure { try ImageReader.thumbnail(path, width: 200, height: nil, fit: .inside, upscale: false) },
            failure {
                let reader = try #require(try BandReader.open(path, streaming: streaming))
                #expect(reader.decodesWithLibjpeg)
                try reader.read(into: AnyPixels.uninitialized(
                    Rect(width: reader.width, height: reader.height), channels: reader.channels, format: reader.format))
            },
        ] {
            #expect(error?.code == .decodeFailed)
            #expect(error?.path == path)
            #expect(error?.message.contains("Corrupt JPEG data") == true, "\(error?.description ?? "no error")")
        }
    }

    @Test(arguments: ["special/deep-16bit.png", "special/alpha-garbage-under-transparent.png"])
    func truncatedPNGIsRefused(_ file: String) throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        for (name, data) in [
            ("cut.png", try LyingFiles.truncated(Corpus.path(file), keeping: 0.6)),
            ("padded.png", try LyingFiles.truncatedAndPadded(Corpus.path(file), keeping: 0.6)),
        ] {
            let path = scratch.file(name)
            try data.write(to: URL(fileURLWithPath: path))
            let error = failure { try ImageReader.read(path) }
            #expect(error?.code == .decodeFailed, "\(name): \(error?.description ?? "no error")")
            #expect(error?.path == path)
        }
    }

    /// A binary PNM whose header claims more rows than it holds is refused every time, from
    /// its size: libvips's loader let one in about fifteen through as a black image.
    @Test func truncatedPNMIsRefusedEveryTime() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let empty = scratch.file("empty.ppm")
        try Data("P6\n# a comment\n99999 1\n255\n".utf8).write(to: URL(fileURLWithPath: empty))
        for _ in 0..<40 {
            let error = failure { try ImageReader.read(empty) }
            #expect(error?.code == .decodeFailed && error?.message.contains("it is truncated") == true,
                "\(error?.description ?? "no error")")
        }
        let whole = scratch.file("whole.pgm")
        let pixels = [UInt8](repeating: 128, count: 16 * 8 * 2)
        try (Data("P5 16 8 65535\n".utf8) + Data(pixels)).write(to: URL(fileURLWithPath: whole))
        #expect(try ImageReader.read(whole).pixels.rect == Rect(width: 16, height: 8))
        let cut = scratch.file("cut.pgm")
        try (Data("P5 16 8 65535\n".utf8) + Data(pixels.dropLast())).write(to: URL(fileURLWithPath: cut))
        #expect(failure { try ImageReader.read(cut) }?.code == .decodeFailed)
    }

    /// A 440 KB all-black PNG of 60000 × 60000: under a raised pixel limit, the memory the
    /// decode would allocate (54 GB) is refused from the header, before any pixel.
    @Test(.tags(.process)) func pngBombIsRefusedForItsMemoryBeforeDecoding() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let path = scratch.file("bomb.png")
        try LyingFiles.pngBomb(width: 60000, height: 60000).write(to: URL(fileURLWithPath: path))
        let limit = 8 << 30
        for error in [
            failure { try ImageReader.read(path, pixelLimit: .max, memoryLimit: limit) },
            failure {
                try ImageReader.thumbnail(
                    path, width: 60000, height: nil, fit: .inside, upscale: false, pixelLimit: .max, memoryLimit: limit)
            },
        ] {
            #expect(error?.code == .overMemoryLimit)
            #expect(
                error?.description == "\(path): decoding 60000x60000 needs about 54.0 GB, over the memory limit of 8.6 GB (setting memory-limit, option --memory-limit)")
        }
        // Under the default pixel limit it never gets that far.
        #expect(failure { try ImageReader.read(path) }?.code == .overPixelLimit)
    }

    /// The memory estimate counts what the decode allocates: 3 channels of 1 + 4 bytes for an
    /// opaque 8-bit image; the exact estimate passes and one byte less is refused.
    @Test func memoryLimitAcceptsTheEstimateAndRefusesOneByteLess() throws {
        let path = Corpus.path("special/kite.webp")  // 1024 x 640, opaque, 8-bit
        let needed = 1024 * 640 * 3 * 5
        #expect(try ImageReader.read(path, memoryLimit: needed).pixels.rect == Rect(width: 1024, height: 640))
        #expect(failure { try ImageReader.read(path, memoryLimit: needed - 1) }?.code == .overMemoryLimit)
    }

    /// A 200 KB JPEG whose start-of-frame claims 65000 × 65000: refused from the header.
    @Test func jpegClaimingAHugeSizeIsRefusedFromItsHeader() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let path = scratch.file("claims.jpg")
        try LyingFiles.jpegClaiming(Corpus.path("batch1080/b00.jpg"), width: 65000, height: 65000)
            .write(to: URL(fileURLWithPath: path))
        let error = failure { try ImageReader.read(path, pixelLimit: .max, memoryLimit: 8 << 30) }
        #expect(error?.code == .overMemoryLimit, "\(error?.description ?? "no error")")
        #expect(failure { try ImageReader.read(path) }?.code == .overPixelLimit)
    }
}
