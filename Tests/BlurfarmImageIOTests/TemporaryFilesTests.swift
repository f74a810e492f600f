import Foundation
import Testing

@testable import BlurfarmImageIO

#if canImport(Glibc)
import Glibc
#endif

/// Each owner of writes (a job) keeps its own temporary files: one's clean-up never touches
/// another's.
@Suite struct TemporaryFilesTests {
    @Test func removingOneJobsTemporaryFilesLeavesAnothersAlone() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tmpfiles-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (mine, theirs) = (TemporaryFiles(), TemporaryFiles())
        for (name, owner) in [("a", mine), ("b", theirs)] {
            let path = "\(folder)/.\(name).png.blurfarm-tmp"
            #expect(FileManager.default.createFile(atPath: path, contents: Data([1])))
            owner.insert(path)
        }
        #expect(mine.removeAll() == 1)
        #expect(!FileManager.default.fileExists(atPath: "\(folder)/.a.png.blurfarm-tmp"))
        #expect(FileManager.default.fileExists(atPath: "\(folder)/.b.png.blurfarm-tmp"))
        #expect(theirs.inProgress == ["\(folder)/.b.png.blurfarm-tmp"])
    }

    @Test func anAtomicWriteRegistersItsTemporaryFileOnlyWhileItWrites() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tmpfiles-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let files = TemporaryFiles()
        try AtomicFile.write(Array(repeating: 7, count: 1000), to: OutputPath("\(folder)/out.bin"), temporaryFiles: files)
        #expect(files.inProgress.isEmpty)
        #expect(try Data(contentsOf: URL(fileURLWithPath: "\(folder)/out.bin")).count == 1000)
    }
}

/// The file an atomic write fills has no name while it is written (O_TMPFILE), so a process
/// killed then leaves nothing; where the file system has none, a named, marked temporary file.
@Suite struct UnnamedTemporaryFileTests {
    func write(unnamed: Bool) throws -> (namesWhileWriting: [String], namesAfter: [String], registered: Set<String>) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("unnamed-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let descriptor = open(folder, O_RDONLY | O_DIRECTORY)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let files = TemporaryFiles()
        var whileWriting: [String] = []
        var registered: Set<String> = []
        try AtomicFile.write(
            to: OutputPath("\(folder)/out.bin"), inFolder: descriptor, temporaryFiles: files, unnamed: unnamed
        ) { (fd) throws(ImageIOError) in
            _ = [UInt8](repeating: 9, count: 100).withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            whileWriting = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? ["?"]
            registered = files.inProgress
        }
        #expect(files.inProgress.isEmpty)
        #expect(try Data(contentsOf: URL(fileURLWithPath: "\(folder)/out.bin")) == Data(repeating: 9, count: 100))
        return (whileWriting, try FileManager.default.contentsOfDirectory(atPath: folder), registered)
    }

    @Test func theFileHasNoNameWhileItIsWritten() throws {
        let written = try write(unnamed: true)
        #expect(written.namesWhileWriting == [])
        #expect(written.registered.isEmpty)
        #expect(written.namesAfter == ["out.bin"])
    }

    @Test func withoutUnnamedFilesANamedMarkedTemporaryFileIsUsedAndRemoved() throws {
        let written = try write(unnamed: false)
        #expect(written.namesWhileWriting.count == 1)
        #expect(written.namesWhileWriting.first?.hasPrefix(".out.bin.blurfarm-") == true, "\(written.namesWhileWriting)")
        #expect(written.registered.count == 1)
        #expect(written.namesAfter == ["out.bin"])
    }
}
