import BlurfarmState
import BlurfarmCore
import BlurfarmKernels
import BlurfarmManifest
import Foundation
import BlurfarmTestSupport
import Testing

@testable import BlurfarmCoordinator

/// Folders are resolved per job, not once per process: a farm that lives long (a service)
/// sees a folder link re-pointed between two jobs.
@Suite struct PathResolutionTests {
    @Test func aFolderLinkRepointedBetweenTwoJobsIsResolvedAnewByTheSecond() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("paths-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        for folder in ["A", "B", "job/photos"] {
            try FileManager.default.createDirectory(atPath: "\(root)/\(folder)", withIntermediateDirectories: true)
        }
        _ = FileManager.default.createFile(atPath: "\(root)/job/photos/p.jpg", contents: Data([0xFF, 0xD8]))
        try FileManager.default.createSymbolicLink(atPath: "\(root)/job/out", withDestinationPath: "\(root)/A")
        let manifest = "\(root)/job/job.job"
        try """
            job: links
            inputs: [photos/*.jpg]
            outputs:
              - name: copy
                path: out/{stem}.png

            """.write(toFile: manifest, atomically: true, encoding: .utf8)
        let plan = try RecipeVersionsTests.plan(manifestAt: manifest).get()
        let records = try OutputRecords(folder: "\(root)/state")
        func recordedPath() -> String {
            let run = IncrementalRun(plan: plan, records: records, versions: { "test" }, pixelLimit: 1 << 20, force: false)
            return run.absolute(plan.inputs[0].outputs[0].path)
        }
        let first = recordedPath()
        try FileManager.default.removeItem(atPath: "\(root)/job/out")
        try FileManager.default.createSymbolicLink(atPath: "\(root)/job/out", withDestinationPath: "\(root)/B")
        let second = recordedPath()
        #expect(first.hasSuffix("/A/p.png"), "\(first)")
        #expect(second.hasSuffix("/B/p.png"), "\(second)")
    }

    /// A path's folder, resolved once for a job's paths by its spelling and joined to the
    /// path's name, is what resolving the folder of the whole absolute spelling gives:
    /// relative and absolute spellings, a file in `/`, `.` and `..` before and at the end, a
    /// link among the folders; with a job's folders (each spelling twice) and without.
    @Test func aPathsFolderResolvedByItsSpellingIsItsWholeFolderResolved() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("paths-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: "\(root)/real/sub", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: "\(root)/link", withDestinationPath: "\(root)/real")
        let spellings = [
            "a.jpg", "/a.jpg", "sub/a.jpg", "sub/../b.jpg", "./c.jpg", "sub/.", "sub/..", ".", "x/y/", "a/b/c/d.webp",
            "\(root)/link/sub/d.jpg", "\(root)/link/../real/e.jpg", "\(root)/link/sub/../f.jpg", "\(root)/link/g.jpg",
            "\(root)/link", "\(root)/link/", "/",
            // Two folders whose names are one string to Swift: two folders to the kernel.
            "\(root)/\u{E9}/h.jpg", "\(root)/e\u{301}/h.jpg",
        ]
        try FileManager.default.createDirectory(atPath: "\(root)/\u{E9}", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: "\(root)/e\u{301}", withIntermediateDirectories: true)
        let workingDirectory = FileManager.default.currentDirectoryPath
        func whole(_ path: String) -> String {
            let absolute = path.hasPrefix("/") ? path : workingDirectory + "/" + path
            let slash = absolute.utf8.lastIndex(of: UInt8(ascii: "/"))!
            let name = String(absolute[absolute.utf8.index(after: slash)...])
            if ["", ".", ".."].contains(name) { return RealPath.resolve(absolute) }
            let folder = RealPath.resolve(slash == absolute.startIndex ? "/" : String(absolute[..<slash]))
            return folder == "/" ? "/" + name : folder + "/" + name
        }
        let folders = RealPath.Folders()
        for path in spellings + spellings {
            #expect(RealPath.Identity.Bytes(RealPath.resolveFolder(of: path, using: folders)) == .init(whole(path)), "\(path)")
            #expect(RealPath.Identity.Bytes(RealPath.resolveFolder(of: path)) == .init(whole(path)), "\(path)")
        }
        #expect(RealPath.resolveFolder(of: "\(root)/link/sub/d.jpg", using: folders) == "\(RealPath.resolve(root))/real/sub/d.jpg")
    }

    /// A plan's files not there are named by their folder's identity, the folder stated once
    /// for the plan: one not there is remembered so, as one there is (a first run's outputs
    /// share a few folders not made yet), where without the plan's folders each asks anew.
    @Test func aFolderNotThereIsStatedOnceForAPlan() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("paths-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let (folders, path) = (RealPath.Folders(), "\(root)/out/a.jpg")
        let before = RealPath.identity(of: path, stated: nil, using: folders)
        guard case .path = before else { Issue.record("\(before)"); return }
        try FileManager.default.createDirectory(atPath: root + "/out", withIntermediateDirectories: true)
        // As the plan found it, for the plan; asked anew without it.
        #expect(RealPath.identity(of: path, stated: nil, using: folders) == before)
        guard case .entry = RealPath.identity(of: path, stated: nil) else { Issue.record("asked anew"); return }
    }
}

/// The planner's one spelling of a path (``JobPlanner/normalise(_:)``) reads most paths as
/// they are, from their bytes (``JobPlanner/isNormal(_:)``): it must say what respelling them
/// name by name says, whatever the path.
@Suite struct PathSpellingPlanTests {
    @Test func aPathTakenAsItIsIsThePathRespelled() {
        let names = ["a", "bb", ".", "..", "", "...", ".x", "x.", "é", "a.b"]
        var generator = SplitMix(seed: 2026)
        for _ in 0..<20_000 {
            let count = Int.random(in: 0...5, using: &generator)
            let path = (Bool.random(using: &generator) ? "/" : "")
                + (0..<count).map { _ in names.randomElement(using: &generator)! }.joined(separator: "/")
            #expect(JobPlanner.normalise(path) == JobPlanner.respelled(path), "\(path)")
            if JobPlanner.isNormal(path) { #expect(JobPlanner.respelled(path) == path, "\(path)") }
        }
    }

    /// An input's `{name}`, `{ext}` and `{stem}`, read from its bytes, are what NSString says.
    @Test func anInputsNameAndExtensionAreNSStrings() {
        let pieces = ["a", "b", ".", "..", " ", "é", "\u{F7E9}", "png", "tar", "x y"]
        var generator = SplitMix(seed: 47)
        for _ in 0..<20_000 {
            let names = (0..<Int.random(in: 1...3, using: &generator)).map { _ in
                (0..<Int.random(in: 1...4, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            }
            let relative = names.joined(separator: "/")
            let name = (relative as NSString).lastPathComponent
            let ext = (name as NSString).pathExtension
            let parts = JobPlanner.nameParts(of: relative)
            #expect(parts.name == name && parts.ext == ext, "\(relative)")
            #expect(parts.stem == (ext.isEmpty ? name : String(name.dropLast(ext.count + 1))), "\(relative)")
        }
    }

    /// A path by its bytes (``RealPath/Identity/Bytes``) is equal to another exactly when their
    /// UTF-8 bytes are, and hashes alike then: for random paths, short (kept in the string
    /// itself) and long, ASCII and not, twins (`é`, and `e` with a combining accent) among
    /// them, and a path made from a substring.
    @Test func aPathByItsBytesIsEqualExactlyWhenItsBytesAre() {
        var random = SplitMix(seed: 47)
        let parts = ["a", "/", "\u{E9}", "e\u{301}", "\u{301}", "\u{F7E9}", "photos", ".jpg", "\u{1F600}", "x"]
        let paths = (0..<400).map { _ in
            (0..<Int.random(in: 0..<12, using: &random)).map { _ in parts.randomElement(using: &random)! }.joined()
        } + ["/out/" + String("a/é.jpg".dropFirst(2))]
        for a in paths {
            for b in paths.prefix(80) + [a] {
                let (x, y) = (RealPath.Identity.Bytes(a), RealPath.Identity.Bytes(b))
                #expect((x == y) == (Array(a.utf8) == Array(b.utf8)), "\(Array(a.utf8)) \(Array(b.utf8))")
                if x == y { #expect(x.hashValue == y.hashValue) }
            }
        }
        #expect(Set(paths.map(RealPath.Identity.Bytes.init)).count == Set(paths.map { Array($0.utf8) }).count)
    }
}

