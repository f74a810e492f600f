import BlurfarmState
import BlurfarmSystem
import BlurfarmTestSupport
import Foundation
import Testing

@testable import BlurfarmCoordinator

/// The output map is made an input at a time (``OutputMapText``): its bytes must be those of
/// the map encoded whole, and it must tell a file that holds them from any other.
@Suite struct OutputMapTextTests {
    /// A map of `count` inputs, some with placeholders, sizes and names that are not UTF-8.
    static func map(_ count: Int, using generator: inout SplitMix) -> OutputMap {
        let inputs = (0..<count).map { index -> OutputMap.Input in
            // Every fifth name holds a byte that is not UTF-8 (0xE9 alone), as the walk carries it.
            let name = index % 5 == 0 ? PathEncoding.decode(Array("caf".utf8) + [0xE9] + Array("\(index % 10)".utf8)).text : "p\(index)"
            let outputs = (0..<Int.random(in: 1...3, using: &generator)).map { variant in
                OutputMap.Output(
                    path: "out/v\(variant)/\(name).webp", format: "webp", width: Int.random(in: 1...4000, using: &generator),
                    height: Int.random(in: 1...4000, using: &generator), bytes: Int.random(in: 1...1_000_000, using: &generator),
                    variant: "v\(variant)", size: variant == 2 ? 640 : nil)
            }
            var input = OutputMap.Input(path: "in/\(name).png", width: nil, height: nil, placeholder: nil, outputs: outputs)
            if Bool.random(using: &generator) {
                (input.width, input.height) = (Int.random(in: 1...9000, using: &generator), 100)
                input.placeholder = OutputMap.Placeholder(
                    thumbHash: "3OcRJYB4d3h/iIeHeEh3eIhw+j2w",
                    dataURI: "data:image/png;base64," + String(repeating: "iVBORw0KGgo", count: Int.random(in: 1...80, using: &generator)))
            }
            return input
        }
        return OutputMap(job: "job \"\(count)\" /x", inputs: inputs)
    }

    /// The bytes of `map` made an input at a time, compared with the file at `path`: whether
    /// it held them, and the bytes.
    static func streamed(_ map: OutputMap, comparedWith path: String) throws -> (Bool, [UInt8]) {
        let text = try OutputMapText(job: map.job, comparedWith: path, confinement: nil, keptIn: nil)
        for input in map.inputs { try text.add(input) }
        let unchanged = text.finish()
        var bytes: [UInt8] = []
        let parts = text.parts(path: path)
        while let part = try parts() { bytes += part }
        return (unchanged, bytes)
    }

    /// No input, one, a few, and enough to span several pieces (over a megabyte): the bytes of
    /// the map encoded whole, with its newline.
    @Test func itsBytesAreTheWholeMapsEncoding() throws {
        var generator = SplitMix(seed: 1_000_000)
        for count in [0, 1, 2, 7, 3000] {
            let map = Self.map(count, using: &generator)
            let whole = Array(try RunReport.json(map)) + Array("\n".utf8)
            let (_, bytes) = try Self.streamed(map, comparedWith: "/nonexistent/map.json")
            #expect(bytes == whole, "\(count) inputs")
            if count == 3000 { #expect(whole.count > 2 * JSONFrame.partBytes) }
        }
    }

    /// The file holds them when it has the same bytes: not when one byte differs (first,
    /// last, in a later piece), when it is shorter or longer, or when a folder is there.
    @Test func itTellsAFileThatHoldsItsBytesFromAnyOther() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("map-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var generator = SplitMix(seed: 7)
        let map = Self.map(3000, using: &generator)
        let whole = Array(try RunReport.json(map)) + Array("\n".utf8)
        let path = folder + "/map.json"
        func holds(_ bytes: [UInt8]) throws -> Bool {
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            return try Self.streamed(map, comparedWith: path).0
        }
        #expect(try holds(whole))
        for place in [0, JSONFrame.partBytes + 17, whole.count - 2] {
            var changed = whole
            changed[place] ^= 1
            #expect(try !holds(changed), "byte \(place)")
        }
        #expect(try !holds(Array(whole.dropLast())))
        #expect(try !holds(whole + [0x20]))
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        #expect(try !Self.streamed(map, comparedWith: path).0)
    }

    /// A path below the map's folder is found by its bytes (``OutputMap/relative(_:from:)``):
    /// the same as by its names, for random absolute paths and folders, below and not, with
    /// empty names, `/` alone and a trailing slash.
    @Test func aPathRelativeToTheMapsFolderIsWhatItsNamesMake() {
        func byNames(_ path: String, _ folder: String) -> String {
            let target = path.split(separator: "/", omittingEmptySubsequences: true)
            let base = folder.split(separator: "/", omittingEmptySubsequences: true)
            var common = 0
            while common < target.count - 1, common < base.count, target[common] == base[common] { common += 1 }
            return (Array(repeating: "..", count: base.count - common) + target[common...].map(String.init)).joined(separator: "/")
        }
        var generator = SplitMix(seed: 42)
        let names = ["a", "b", "site", "\u{E9}", "", "x.webp"]
        func path(_ count: Int) -> String {
            "/" + (0..<count).map { _ in names[Int.random(in: 0..<names.count, using: &generator)] }.joined(separator: "/")
        }
        for _ in 0..<5000 {
            let folder = Bool.random(using: &generator) ? "/" : path(Int.random(in: 1...3, using: &generator))
            let below = folder + (folder.hasSuffix("/") ? "" : "/") + String(path(Int.random(in: 1...3, using: &generator)).dropFirst())
            for target in [below, path(Int.random(in: 1...4, using: &generator))] where target.split(separator: "/").count > 0 {
                #expect(OutputMap.relative(target, from: folder) == byNames(target, folder), "\(target) from \(folder)")
            }
        }
        // Paths made relative to one folder, its way to each other folder kept
        // (``OutputMap/RelativePaths``): the same, folder after folder met again.
        for folder in ["/", "/a", "/site/b", "/a/\u{E9}/site", "/b//a/"] {
            let paths = OutputMap.RelativePaths(from: folder)
            for _ in 0..<2000 {
                var target = path(Int.random(in: 0...4, using: &generator))
                if Int.random(in: 0..<10, using: &generator) == 0 { target += "/" }
                #expect(paths.relative(target) == byNames(target, folder), "\(target) from \(folder)")
            }
        }
    }
}
