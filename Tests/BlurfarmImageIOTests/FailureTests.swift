import BlurfarmTestSupport
import BlurfarmCore
import BlurfarmImageIO
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
        #expect(error?.message.contains("Premature end") == true, "message: \(error?.message ?? "none")")
        #expect(error?.message.contains("\n") == false)
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
        let error = failure { try ImageReader.read(Corpus.path("special/truncated.jpg")) }
        #expect(error?.message.contains("Premature end") == true, "message: \(error?.message ?? "none")")
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
        #expect(write("no-extension")?.code == .unsupportedOutputExtension)
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
