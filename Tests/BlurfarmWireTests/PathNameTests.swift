import BlurfarmCore
import BlurfarmTestSupport
import Foundation
import Testing

/// A path's folder and last name (``PathName``), by what they are: the names the path was made
/// of, whatever slashes stand between them, before and after.
@Suite struct PathNameTests {
    @Test func aPathsFolderAndLastNameAreItsNames() {
        let names = ["a", "é", "x y", ".", "..", ".x", "\u{F7E9}", "e\u{301}", "ab.png"]
        let slashes = ["/", "//", "///"]
        var generator = SplitMix(seed: 47)
        for _ in 0..<20_000 {
            let parts = (0..<Int.random(in: 1...4, using: &generator)).map { _ in names.randomElement(using: &generator)! }
            let rooted = Bool.random(using: &generator)
            var path = rooted ? slashes.randomElement(using: &generator)! : ""
            for (index, part) in parts.enumerated() {
                path += part
                if index < parts.count - 1 { path += slashes.randomElement(using: &generator)! }
            }
            if Bool.random(using: &generator) { path += slashes.randomElement(using: &generator)! }
            let folder = parts.count == 1 ? (rooted ? "/" : "") : (rooted ? "/" : "") + parts.dropLast().joined(separator: "/")
            #expect(PathName.lastName(of: path) == parts.last!, "\(path)")
            #expect(PathName.folderInPlace(of: path) == PathName.folder(of: path), "\(path)")
            // The folder's names are those before the last, as the path spells its slashes.
            #expect(PathName.folder(of: path).split(separator: "/").map(String.init) == folder.split(separator: "/").map(String.init), "\(path)")
            #expect(PathName.folder(of: path).hasPrefix("/") == rooted, "\(path)")
            #expect(PathName.folder(of: path).isEmpty == (parts.count == 1 && !rooted), "\(path)")
        }
    }

    /// A path's extension is NSString's, for names with dots anywhere, alone, doubled, first
    /// and last, below folders or not, with a slash after.
    @Test func aPathsExtensionIsNSStrings() {
        let pieces = ["a", ".", "..", "jpg", "é", "x y", "e\u{301}", "webp"]
        var generator = SplitMix(seed: 48)
        for _ in 0..<20_000 {
            let names = (0..<Int.random(in: 1...3, using: &generator)).map { _ in
                (0..<Int.random(in: 1...4, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            }
            var path = (Bool.random(using: &generator) ? "/" : "") + names.joined(separator: "/")
            if Int.random(in: 0..<8, using: &generator) == 0 { path += "/" }
            #expect(PathName.pathExtension(of: path) == (path as NSString).pathExtension, "\(path)")
        }
    }

    /// The paths NSString stops the process on, or misreads, in this toolchain's Foundation.
    @Test func theCornersNSStringGetsWrong() {
        let cases: [(path: String, folder: String, lastName: String)] = [
            ("j", "", "j"), ("é", "", "é"), ("./", "", "."), ("ax ya//é", "ax ya", "é"),
            ("\u{F7E9}/a", "\u{F7E9}", "a"), ("/", "/", "/"), ("//", "/", "/"), ("", "", ""), ("/a", "/", "a"),
            ("a/b/", "a", "b"),
        ]
        for (path, folder, lastName) in cases {
            #expect(PathName.folder(of: path) == folder, "\(path)")
            #expect(PathName.lastName(of: path) == lastName, "\(path)")
        }
    }
}
