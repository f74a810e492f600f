import BlurfarmCore
import BlurfarmImageIO
import Foundation
import Testing

/// Writes confined below roots (the service's `--root`): the output's folder is opened beneath
/// a root at the moment of writing, so a folder replaced by a link to elsewhere while a job
/// waited is refused, and nothing lands outside.
@Suite struct RootConfinementTests {
    let pixels = makeBuffer(width: 8, height: 8) { x, y in SIMD4(Float(x) / 8, Float(y) / 8, 0.5, 1) }

    func write(_ path: String, roots: [String]) throws {
        try ImageWriter.write(
            pixels, to: path, sourceBitDepth: 8, sourceHadAlpha: false, metadata: nil, options: EncodeOptions(),
            confinement: RootConfinement(roots: roots))
    }

    /// A scratch folder with `root/out` (a folder) and `elsewhere` (a folder outside the root).
    func layout() throws -> (scratch: ScratchFolder, root: String, elsewhere: String) {
        let scratch = try ScratchFolder()
        let root = scratch.file("root"), elsewhere = scratch.file("elsewhere")
        for folder in [root + "/out", elsewhere] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        return (scratch, root, elsewhere)
    }

    @Test func aFolderReplacedByALinkToOutsideTheRootsIsRefusedAndNothingIsWritten() throws {
        let (scratch, root, elsewhere) = try layout()
        defer { scratch.remove() }
        // Checked while the job was queued; replaced by a link before the write.
        try FileManager.default.removeItem(atPath: root + "/out")
        try FileManager.default.createSymbolicLink(atPath: root + "/out", withDestinationPath: elsewhere)
        let error = failure { try write(root + "/out/a.png", roots: [root]) }
        #expect(error?.code == .outputOutsideRoots)
        #expect(error?.path == root + "/out/a.png")
        #expect(error?.description.contains(root + "/out") == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere) == [], "written outside the roots")
    }

    /// An input read through a folder swapped for a link out of the roots is refused before
    /// anything of it is read; one inside is read from the very file opened.
    @Test func anInputThroughALinkOutOfTheRootsIsRefusedAndOneInsideIsRead() throws {
        let (scratch, root, elsewhere) = try layout()
        defer { scratch.remove() }
        try ImageWriter.write(pixels, to: elsewhere + "/secret.png", sourceBitDepth: 8, sourceHadAlpha: false, metadata: nil, options: EncodeOptions())
        try write(root + "/out/a.png", roots: [root])
        try FileManager.default.createSymbolicLink(atPath: root + "/in", withDestinationPath: elsewhere)
        let confinement = RootConfinement(roots: [root])
        let read = failure { _ = try ImageReader.read(root + "/in/secret.png", confinement: confinement) }
        let header = failure { _ = try ImageReader.header(ofFile: root + "/in/secret.png", confinement: confinement) }
        let thumbnail = failure {
            _ = try ImageReader.thumbnail(root + "/in/secret.png", width: 4, height: nil, fit: .inside, upscale: false, confinement: confinement)
        }
        #expect(read?.code == .inputOutsideRoots)
        #expect(read?.path == root + "/in/secret.png")
        #expect(header?.code == .inputOutsideRoots)
        #expect(thumbnail?.code == .inputOutsideRoots)
        #expect(try ImageReader.read(root + "/out/a.png", confinement: confinement).pixels.rect.width == 8)
        #expect(failure { _ = try ImageReader.read(root + "/out/none.png", confinement: confinement) }?.code == .fileMissing)
    }

    @Test func aRelativeLinkThatStaysInsideTheRootIsFollowed() throws {
        let (scratch, root, _) = try layout()
        defer { scratch.remove() }
        try FileManager.default.createSymbolicLink(atPath: root + "/latest", withDestinationPath: "out")
        try write(root + "/latest/a.png", roots: [root])
        #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/out") == ["a.png"])
        #expect(try ImageReader.header(ofFile: root + "/out/a.png").width == 8)
    }

    @Test func aLinkIntoAnotherRootOrAnAbsoluteLinkInsideTheRootIsFollowed() throws {
        // The roots are one set of places: a link from one into another, or an absolute link
        // that stays inside its root (which RESOLVE_BENEATH alone never follows), leads inside.
        let (scratch, root, elsewhere) = try layout()
        defer { scratch.remove() }
        try FileManager.default.createSymbolicLink(atPath: root + "/other", withDestinationPath: elsewhere)
        try FileManager.default.createSymbolicLink(atPath: root + "/absolute", withDestinationPath: root + "/out")
        try write(root + "/other/a.png", roots: [root, elsewhere])
        try write(root + "/absolute/b.png", roots: [root])
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere) == ["a.png"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/out") == ["b.png"])
        // Into a folder that is no root: refused.
        #expect(failure { try write(root + "/other/c.png", roots: [root]) }?.code == .outputOutsideRoots)
    }

    @Test func aPathClimbingOutOfTheRootOrNotBelowAnyIsRefused() throws {
        let (scratch, root, elsewhere) = try layout()
        defer { scratch.remove() }
        #expect(failure { try write(root + "/out/../../elsewhere/a.png", roots: [root]) }?.code == .outputOutsideRoots)
        #expect(failure { try write(elsewhere + "/a.png", roots: [root]) }?.code == .outputOutsideRoots)
        #expect(failure { try write(elsewhere + "/a.png", roots: []) }?.code == .outputOutsideRoots)
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere) == [])
        // `..` that stays inside is allowed, as is the root itself.
        try write(root + "/out/../b.png", roots: [root + "/"])
        try write(root + "/out/./c.png", roots: [root])
        #expect(try FileManager.default.contentsOfDirectory(atPath: root).sorted() == ["b.png", "out"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/out") == ["c.png"])
    }

    @Test func aMissingFolderBelowARootIsStillMissing() throws {
        let (scratch, root, _) = try layout()
        defer { scratch.remove() }
        #expect(failure { try write(root + "/nowhere/a.png", roots: [root]) }?.code == .outputFolderMissing)
    }

    @Test func theBandWriterRefusesInItsInitialiser() throws {
        let (scratch, root, elsewhere) = try layout()
        defer { scratch.remove() }
        try FileManager.default.removeItem(atPath: root + "/out")
        try FileManager.default.createSymbolicLink(atPath: root + "/out", withDestinationPath: elsewhere)
        let error = failure {
            try BandWriter(
                path: root + "/out/a.png", width: 8, height: 8, channels: 3, sourceBitDepth: 8, sourceHadAlpha: false,
                metadata: nil, options: EncodeOptions(), confinement: RootConfinement(roots: [root]))
        }
        #expect(error?.code == .outputOutsideRoots)
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere) == [])
    }

    @Test func anEncodedImageIsWrittenBelowItsRootAndRefusedOutside() throws {
        let (scratch, root, elsewhere) = try layout()
        defer { scratch.remove() }
        let inside = try ImageWriter.encode(
            pixels, for: root + "/out/a.png", sourceBitDepth: 8, sourceHadAlpha: false, metadata: nil,
            options: EncodeOptions())
        try ImageWriter.write(inside, confinement: RootConfinement(roots: [root]))
        #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/out") == ["a.png"])
        let outside = try ImageWriter.encode(
            pixels, for: elsewhere + "/a.png", sourceBitDepth: 8, sourceHadAlpha: false, metadata: nil,
            options: EncodeOptions())
        #expect(failure { try ImageWriter.write(outside, confinement: RootConfinement(roots: [root])) }?.code
            == .outputOutsideRoots)
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere) == [])
    }
}
