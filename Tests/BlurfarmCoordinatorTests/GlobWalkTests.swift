import BlurfarmManifest
import Foundation
import Testing

@testable import BlurfarmCoordinator

/// The search for a glob's files lists only the folders the pattern can match below: a
/// folder of thousands of files beside the photos costs nothing for `photos/*.png`.
@Suite struct GlobWalkTests {
    /// `photos/` with `a.png`, `b.jpg`, `2024/c.png`, `.hidden/d.png` and `archive/` (many files,
    /// and `deeper/e.png`), in a new folder.
    static func makeFolder(archived: Int = 2000) throws -> String {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("walk-\(UUID().uuidString)").path
        for folder in ["photos/2024", "photos/.hidden", "photos/archive/deeper"] {
            try FileManager.default.createDirectory(atPath: "\(base)/\(folder)", withIntermediateDirectories: true)
        }
        let files = ["a.png", "b.jpg", "2024/c.png", ".hidden/d.png", "archive/deeper/e.png"]
            + (0..<archived).map { "archive/\($0).png" }
        for file in files { _ = FileManager.default.createFile(atPath: "\(base)/photos/\(file)", contents: Data([1])) }
        return base
    }

    /// The folders a walk listed and the files it handed over, in its order.
    func walk(_ pattern: String, in base: String) throws -> (listed: [String], files: [String]) {
        var files: [String] = []
        let walk = JobPlanner.files(matching: try GlobPattern(pattern), in: base) { files.append($0.relative) }
        return (walk.listed, files)
    }

    @Test func aPatternWithoutFoldersListsOnlyItsFolder() throws {
        let base = try Self.makeFolder()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let found = try walk("photos/*.png", in: base)
        #expect(found.listed == ["photos"])
        #expect(found.files == ["photos/a.png"])
    }

    @Test func namedFoldersAreTheOnlyOnesListed() throws {
        let base = try Self.makeFolder()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let found = try walk("photos/{2024,2025}/*.png", in: base)
        #expect(found.listed.sorted() == ["photos", "photos/2024"])
        #expect(found.files == ["photos/2024/c.png"])
        #expect(try walk("*/archive/deeper/*.png", in: base).listed.sorted()
            == ["", "photos", "photos/archive", "photos/archive/deeper"])
    }

    @Test func anyFoldersDescendsEverywhereButIntoHiddenFolders() throws {
        let base = try Self.makeFolder(archived: 3)
        defer { try? FileManager.default.removeItem(atPath: base) }
        let found = try walk("photos/**/*.png", in: base)
        #expect(found.listed.sorted() == ["photos", "photos/2024", "photos/archive", "photos/archive/deeper"])
        #expect(found.files.count == 3 + 3)
        #expect(try walk("photos/**/.hidden/*.png", in: base).files == ["photos/.hidden/d.png"])
    }
}
