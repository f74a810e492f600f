import BlurfarmTestSupport
import Foundation
import Testing

@testable import BlurfarmServer

/// The roots' check of a plan's many files (``Roots/FolderCheck``), each file's folder
/// resolved once: for every kind of path, the answer of ``Roots/contains(_:)``, which
/// resolves each path whole.
@Suite struct RootsTests {
    @Test func aFoldersAnswerIsItsFilesButForLinksAndARootItself() throws {
        let files = FileManager.default
        let top = files.temporaryDirectory.resolvingSymlinksInPath().appendingPathComponent("blurfarm-roots-\(UUID().uuidString)").path
        defer { try? files.removeItem(atPath: top) }
        for folder in ["root/sub", "root/other", "outside/deep"] {
            try files.createDirectory(atPath: "\(top)/\(folder)", withIntermediateDirectories: true)
        }
        for file in ["root/a.png", "root/sub/b.png", "root/other/c.png", "outside/secret.png", "outside/deep/d.png"] {
            try Data([1]).write(to: URL(fileURLWithPath: "\(top)/\(file)"))
        }
        try files.createSymbolicLink(atPath: "\(top)/root/leaves.png", withDestinationPath: "../outside/secret.png")
        try files.createSymbolicLink(atPath: "\(top)/root/stays.png", withDestinationPath: "sub/b.png")
        try files.createSymbolicLink(atPath: "\(top)/root/away", withDestinationPath: "../outside")
        try files.createSymbolicLink(atPath: "\(top)/outside/back.png", withDestinationPath: "../root/a.png")
        try files.createSymbolicLink(atPath: "\(top)/outside/in", withDestinationPath: "../root/sub")
        // The roots: `root`, and `outside/deep`, whose folder is outside every root.
        let roots = try Roots(["\(top)/root", "\(top)/outside/deep"])
        let expected: [(String, Bool)] = [
            ("root/a.png", true), ("root/sub/b.png", true), ("root/other/c.png", true),
            ("root/leaves.png", false), ("root/stays.png", true), ("root/away/secret.png", false),
            ("root/away/deep/d.png", true), ("outside/secret.png", false), ("outside/back.png", true),
            ("outside/in/b.png", true), ("outside/in/new.png", true), ("root/new/deeper/e.png", true),
            ("root/new/../../outside/f.png", false), ("root/sub/../a.png", true), ("root/sub/../../outside/secret.png", false),
            ("outside/deep", true), ("outside/deep/d.png", true), ("outside/missing/g.png", false), ("root", true),
            ("root/.", true), ("root/..", false), ("root/sub/.", true), ("root/sub/..", true),
        ].map { ("\(top)/\($0.0)", $0.1) }
        var check = Roots.FolderCheck(roots: roots)
        var generator = SplitMix(seed: 47)
        // In two orders, one check: its folders' answers kept from one path to the next.
        for (path, below) in expected.shuffled(using: &generator) + expected.shuffled(using: &generator) {
            #expect(roots.contains(path) == below, "\(path)")
            #expect(check.contains(path) == below, "\(path)")
        }
        #expect(check.contains("/") == roots.contains("/"))
        // A relative path is the working directory's.
        let here = FileManager.default.currentDirectoryPath
        #expect(check.contains("Package.swift") == roots.contains(here + "/Package.swift"))
    }
}
