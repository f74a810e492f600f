import Foundation
import Testing

@testable import BlurfarmImageIO

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
