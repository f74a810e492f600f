import BlurfarmKernels
import BlurfarmManifest
import BlurfarmTestSupport
import Foundation
import Testing

@testable import BlurfarmCoordinator

/// The files a job's input globs found (``JobPlanner/FoundInputs``): each path once, by its
/// bytes, from the first glob that took it, in the order of their bytes.
@Suite struct FoundInputsTests {
    @Test func eachPathOnceByItsBytesFromItsFirstGlob() {
        var generator = SplitMix(seed: 1947)
        // Names that sort before and after a folder of their first letters ("a/"): "a-c", "a0".
        let names = ["a", "é", "e\u{301}", "b/c", "a-c", "a/c", "a0", "😀", "Z"]
        for _ in 0..<200 {
            var found = JobPlanner.FoundInputs()
            var firstGlob: [[UInt8]: Int] = [:]
            for glob in 0..<Int.random(in: 1...3, using: &generator) {
                // A walk names each path once; two globs may both take it.
                var walked: Set<[UInt8]> = []
                for _ in 0..<Int.random(in: 0...12, using: &generator) {
                    let path = (0..<Int.random(in: 1...3, using: &generator)).map { _ in names.randomElement(using: &generator)! }
                        .joined(separator: "/")
                    guard walked.insert(Array(path.utf8)).inserted else { continue }
                    firstGlob[Array(path.utf8)] = firstGlob[Array(path.utf8)] ?? glob
                    found.add(path, glob: glob, file: JobPlanner.Stated(stat()))
                }
            }
            found.seal()
            let expected = firstGlob.keys.sorted { $0.lexicographicallyPrecedes($1) }
            #expect(found.count == expected.count)
            for (index, bytes) in expected.enumerated() where index < found.count {
                #expect(Array(found.relative(index).utf8) == bytes)
                #expect(found.glob(index) == firstGlob[bytes])
            }
        }
    }

    /// Past a segment of entries (``Segments``, 4,096) and of names' bytes (``ByteSegments``,
    /// 64 KiB; some folders thousands of bytes long, some names the longest a name can be, and
    /// one path of no folder longer than a segment): each file is read back, in order, as it
    /// was added: its path, its glob, and its identity.
    @Test func filesPastTheirSegmentsAreReadBackAsAdded() {
        var generator = SplitMix(seed: 2026)
        var found = JobPlanner.FoundInputs()
        var added: [(path: String, glob: Int, inode: UInt64)] = []
        for index in 0..<10_000 {
            let folder = Int.random(in: 0..<50, using: &generator) == 0 ? Int.random(in: 500...3000, using: &generator) : 1
            // A name of 255 bytes, the longest.
            let name = index % 997 == 0 ? "\(index)" + String(repeating: "n", count: 251 - "\(index)".count) + ".png" : "\(index).png"
            let path = index == 5000 ? String(repeating: "p", count: 70_000) : String(repeating: "d", count: folder) + "/" + name
            var info = stat()
            info.st_ino = UInt(index * 7 + 1)
            found.add(path, glob: index % 3, file: JobPlanner.Stated(info))
            added.append((path, index % 3, UInt64(index * 7 + 1)))
        }
        found.seal()
        let expected = added.sorted { Array($0.path.utf8).lexicographicallyPrecedes(Array($1.path.utf8)) }
        #expect(found.count == expected.count)
        let wrong = expected.indices.filter { index in
            found.relative(index) != expected[index].path || found.glob(index) != expected[index].glob
                || found.identity(index).inode != expected[index].inode
        }
        #expect(wrong.isEmpty, "\(wrong.count) files read back otherwise, the first at \(wrong.first ?? -1)")
    }

    /// Two files whose names are one string to Swift but other bytes are two inputs (one was
    /// never planned); a file two globs take is planned once, with the first glob's {relpath}.
    @Test(arguments: [false, true]) func twoNamesOfOneStringAreTwoInputs(reversed: Bool) throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("found-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/in/a", withIntermediateDirectories: true)
        for name in ["\u{E9}.png", "e\u{301}.png"] {
            #expect(FileManager.default.createFile(atPath: "\(root)/in/a/\(name)", contents: Data(name.utf8)))
        }
        let globs = reversed ? "[in/a/*.png, in/**/*.png]" : "[in/**/*.png, in/a/*.png]"
        let manifest = root + "/job.job"
        try "job: found\ninputs: \(globs)\noutputs:\n  - name: one\n    path: out/{relpath}/{stem}.png\n"
            .write(toFile: manifest, atomically: true, encoding: .utf8)
        let spec = try JobDecoder.decode(fileAtPath: manifest, filters: FilterRegistry.builtIn.descriptors).get()
        let plan = try JobPlanner.plan(spec, manifestPath: manifest, defaultTile: 512).get()
        let inputs = plan.inputs.map { Array($0.relativePath.utf8) }
        #expect(inputs == [Array("in/a/e\u{301}.png".utf8), Array("in/a/\u{E9}.png".utf8)])
        let folder = reversed ? "out/" : "out/a/"
        let outputs = plan.inputs.flatMap(\.outputs).map { Array($0.path.utf8) }
        #expect(outputs == [Array("\(root)/\(folder)e\u{301}.png".utf8), Array("\(root)/\(folder)\u{E9}.png".utf8)])
    }
}
