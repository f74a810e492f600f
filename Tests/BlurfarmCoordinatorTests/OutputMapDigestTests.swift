import BlurfarmState
import BlurfarmSystem
import BlurfarmTestSupport
import Foundation
import Testing

@testable import BlurfarmCoordinator

/// A no-change run with a map hashes its entries instead of encoding them (``OutputMapDigest``):
/// two lists of entries whose maps differ must never have one digest. Each field of an entry
/// is changed alone, entries are cut apart differently, and the fields the digest reads are
/// the fields the entries have.
@Suite struct OutputMapDigestTests {
    static func digest(_ map: OutputMap) throws -> String {
        let digest = try OutputMapDigest(job: map.job)
        for input in map.inputs { digest.add(input) }
        return digest.digest()
    }

    /// Every change of one field of one entry, each a map of its own.
    static func changes(of input: OutputMap.Input) -> [(field: String, input: OutputMap.Input)] {
        var changes: [(String, OutputMap.Input)] = []
        func change(_ field: String, _ body: (inout OutputMap.Input) -> Void) {
            var changed = input
            body(&changed)
            changes.append((field, changed))
        }
        change("path") { $0.path += "x" }
        change("pathBytes") { $0.pathBytes = $0.pathBytes == nil ? "" : nil }
        change("width") { $0.width = $0.width.map { $0 + 1 } ?? 0 }
        change("height") { $0.height = $0.height.map { $0 + 1 } ?? 0 }
        change("placeholder") { $0.placeholder = $0.placeholder == nil ? OutputMap.Placeholder(thumbHash: "", dataURI: "") : nil }
        if input.placeholder != nil {
            change("placeholder.thumbHash") { $0.placeholder!.thumbHash += "A" }
            change("placeholder.dataURI") { $0.placeholder!.dataURI += "A" }
        }
        change("outputs, one more") { $0.outputs.append($0.outputs[0]) }
        change("outputs, one fewer") { $0.outputs.removeLast() }
        let last = input.outputs.count - 1
        change("output.path") { $0.outputs[last].path += "x" }
        change("output.pathBytes") { $0.outputs[last].pathBytes = $0.outputs[last].pathBytes == nil ? "" : nil }
        change("output.format") { $0.outputs[last].format = $0.outputs[last].format == "webp" ? "jpeg" : "webp" }
        change("output.width") { $0.outputs[last].width += 1 }
        change("output.height") { $0.outputs[last].height += 1 }
        change("output.bytes") { $0.outputs[last].bytes += 1 }
        change("output.variant") { $0.outputs[last].variant += "x" }
        change("output.size") { $0.outputs[last].size = $0.outputs[last].size.map { $0 + 1 } ?? 0 }
        return changes
    }

    /// One field of one entry changed, in random maps (some entries with placeholders, sizes
    /// and names that are not UTF-8): another digest, and another text; the map itself, made
    /// again, the same digest.
    @Test func eachFieldChangedAloneChangesTheDigest() throws {
        var generator = SplitMix(seed: 47)
        for round in 0..<40 {
            let map = OutputMapTextTests.map(Int.random(in: 1...12, using: &generator), using: &generator)
            let digest = try Self.digest(map)
            #expect(try Self.digest(OutputMap(job: map.job, inputs: map.inputs)) == digest)
            let place = Int.random(in: 0..<map.inputs.count, using: &generator)
            for (field, input) in Self.changes(of: map.inputs[place]) {
                var changed = map
                changed.inputs[place] = input
                #expect(try RunReport.json(changed) != RunReport.json(map), "round \(round): \(field)")
                #expect(try Self.digest(changed) != digest, "round \(round): \(field)")
            }
            var renamed = map
            renamed.job += "x"
            #expect(try Self.digest(renamed) != digest, "round \(round): job")
            var reordered = map
            reordered.inputs.reverse()
            if map.inputs.count > 1, reordered.inputs != map.inputs {
                #expect(try Self.digest(reordered) != digest, "round \(round): order")
            }
            #expect(try Self.digest(OutputMap(job: map.job, inputs: map.inputs.dropLast())) != digest, "round \(round): one fewer")
        }
    }

    /// Values that would run together without their lengths and tags: a text's end moved into
    /// the next field, an output moved to the next entry, an absent value against an empty one.
    @Test func valuesDoNotRunTogether() throws {
        func output(_ path: String, variant: String = "v", size: Int? = nil) -> OutputMap.Output {
            OutputMap.Output(path: path, format: "webp", width: 1, height: 1, bytes: 1, variant: variant, size: size)
        }
        func input(_ path: String, _ outputs: [OutputMap.Output]) -> OutputMap.Input {
            OutputMap.Input(path: path, width: nil, height: nil, placeholder: nil, outputs: outputs)
        }
        let maps = [
            [input("ab", [output("c")])],
            [input("a", [output("bc")])],
            [input("a", [output("b"), output("c")])],
            [input("a", [output("b")]), input("c", [output("d")])],
            [input("a", [output("b"), output("c")]), input("d", [])],
            [input("a", [output("b", variant: "")])],
            [input("a", [output("b", variant: "", size: 0)])],
        ].map { OutputMap(job: "j", inputs: $0) }
        let digests = try maps.map(Self.digest)
        #expect(Set(digests).count == maps.count)
    }

    /// The fields the digest reads are every field an entry, a placeholder and an output
    /// have: a field added to the map and not to the digest fails here.
    @Test func theDigestReadsEveryFieldOfAnEntry() {
        let output = OutputMap.Output(path: "p", format: "webp", width: 1, height: 1, bytes: 1, variant: "v", size: 1)
        let input = OutputMap.Input(
            path: "p", width: 1, height: 1, placeholder: OutputMap.Placeholder(thumbHash: "t", dataURI: "d"), outputs: [output])
        func fields(_ value: Any) -> [String] { Mirror(reflecting: value).children.compactMap(\.label) }
        #expect(fields(input) == ["path", "pathBytes", "width", "height", "placeholder", "outputs"])
        #expect(fields(input.placeholder!) == ["thumbHash", "dataURI"])
        #expect(fields(output) == ["path", "pathBytes", "format", "width", "height", "bytes", "variant", "size"])
        #expect(fields(OutputMap(job: "j", inputs: [])) == ["version", "job", "inputs"])
    }
}
