import BlurfarmManifest
import BlurfarmState
import BlurfarmTestSupport
import Foundation
import Testing

@testable import BlurfarmCoordinator

/// A plan's inputs held packed (``PlannedInputs``): each read back is the input that was
/// packed, field for field and byte for byte, whatever its names, widths and stamps, across
/// chunks and parts, and the counts and sizes not made are the packed inputs'.
@Suite struct PlannedInputsTests {
    static let names = ["a", "é", "x y", ".", "", "\u{F7E9}", "e\u{301}", "i0000123.png", "a-name-longer-than-fifteen.webp", "😀"]

    /// Held, and with the full chunks in an unnamed file of a folder (``SpillFile``), which
    /// the process then holds open.
    @Test(arguments: [false, true]) func anInputReadBackIsTheInputPacked(spilled: Bool) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("packed-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let spill = spilled ? SpillFile(in: [folder]) : nil
        var generator = SplitMix(seed: 4747)
        let variants = (0..<3).map { PlannedVariant(VariantSpec(name: "v\($0)", pathTemplate: try! PathTemplate("out/{stem}.png"))) }
        var made = PathPrefix.Made()
        let prefixes = [PathPrefix("/job/"), PathPrefix(""), PathPrefix("e\u{301}/")]
        func path(_ parts: Int) -> String {
            (0..<parts).map { _ in Self.names.randomElement(using: &generator)! }.joined(separator: "/")
        }
        func width() -> Int? { Bool.random(using: &generator) ? nil : Int.random(in: 0...1 << 40, using: &generator) }
        func seen() -> SeenStamp {
            Bool.random(using: &generator) ? .unseen : SeenStamp(FileStamp(
                size: .random(in: 0...1 << 40, using: &generator), modified: .random(in: .min ... .max, using: &generator),
                changed: 0, inode: .random(in: 0 ... .max, using: &generator), device: 1))
        }
        var expected: [PlannedInput] = []
        var parts: [PlannedInputs] = []
        // Parts of a few inputs, of thousands (past a chunk), one input of more bytes than a
        // chunk, a part of none, and a listed part between them.
        for (index, count) in [3, 4000, 1, 0, 250].enumerated() {
            var packer = PlannedInputs.Packer(capacity: count, spill: spill)
            var listed: [PlannedInput] = []
            for _ in 0..<count {
                let outputCount = index == 2 ? 2000 : Int.random(in: 0...5, using: &generator)
                let outputs = (0..<outputCount).map { _ in
                    let (prefix, name) = made.split(index == 2 ? path(40) : path(Int.random(in: 1...4, using: &generator)))
                    return PlannedOutput(
                        shared: variants.randomElement(using: &generator)!, prefix: prefix, name: name, largestSize: width(),
                        size: width(), seen: seen())
                }
                let relative = path(Int.random(in: 1...3, using: &generator))
                let notEnlarged = (0..<(Int.random(in: 0..<10, using: &generator) > 0 ? 0 : .random(in: 1...3, using: &generator))).map { _ in
                    NotEnlargedOutput(
                        input: relative, output: path(2), variant: path(1), width: .random(in: 2...1 << 20, using: &generator),
                        sourceWidth: .random(in: 1...1279, using: &generator))
                }
                let (prefix, stamp) = (prefixes.randomElement(using: &generator)!, seen())
                let input = PlannedInput(prefix: prefix, relativePath: relative, outputs: outputs, notEnlarged: notEnlarged, seen: stamp)
                expected.append(input)
                if index == 4 {
                    listed.append(input)
                } else {
                    packer.append(prefix: prefix, relativePath: relative, outputs: outputs, notEnlarged: notEnlarged, seen: stamp)
                }
            }
            parts.append(index == 4 ? PlannedInputs(listed) : packer.packed())
        }
        let inputs = PlannedInputs(joining: parts)
        // The file, unnamed, is the process's: /proc names it after its folder, "(deleted)".
        let files = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").compactMap {
            try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)
        }
        #expect(files.contains { $0.hasPrefix(folder + "/") && $0.hasSuffix("(deleted)") } == spilled)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
        #expect(inputs.count == expected.count)
        #expect(inputs.outputCount == expected.reduce(0) { $0 + $1.outputs.count })
        var notEnlarged: [NotEnlargedOutput] = []
        inputs.forEachNotEnlarged { notEnlarged.append($0) }
        #expect(notEnlarged == expected.flatMap(\.notEnlarged))
        #expect(inputs.notEnlargedCount == expected.reduce(0) { $0 + $1.notEnlarged.count })
        // A report of the plan's sizes not made, read from it as it is written, is the report
        // of them listed, byte for byte.
        var fromPlan = RunReport(
            job: "j", manifest: "j.job", started: Date(timeIntervalSince1970: 0), finished: Date(timeIntervalSince1970: 1),
            settings: RunSettings(
                configuration: nil, workers: 0, threads: 1, decodedImages: 1, tile: 512, pixelLimit: 1, verify: "checksum"),
            outputs: [])
        var listedReport = fromPlan
        fromPlan.notEnlargedList = .ofPlan(inputs)
        listedReport.notEnlarged = expected.flatMap(\.notEnlarged)
        var pieces: [UInt8] = []
        try RunReport.writeJSON([fromPlan], list: false, to: { pieces += $0 })
        #expect(Data(pieces) == (try RunReport.json(listedReport)))
        #expect(try RunReport.json(fromPlan) == (try RunReport.json(listedReport)))
        #expect(fromPlan.counts.notEnlarged == listedReport.notEnlarged.count)
        for (read, packed) in zip(inputs, expected) {
            Self.expectSame(read, packed)
        }
        // Read out of order, each the same.
        for index in expected.indices.shuffled(using: &generator).prefix(500) {
            Self.expectSame(inputs[index], expected[index])
        }
    }

    static func expectSame(_ read: PlannedInput, _ packed: PlannedInput) {
        #expect(Array(read.path.utf8) == Array(packed.path.utf8))
        #expect(Array(read.relativePath.utf8) == Array(packed.relativePath.utf8))
        #expect(read.seen == packed.seen)
        #expect(read.notEnlarged.count == packed.notEnlarged.count)
        for (a, b) in zip(read.notEnlarged, packed.notEnlarged) {
            #expect(Array(a.input.utf8) == Array(b.input.utf8) && Array(a.output.utf8) == Array(b.output.utf8))
            #expect(Array(a.variant.utf8) == Array(b.variant.utf8) && a.width == b.width && a.sourceWidth == b.sourceWidth)
        }
        #expect(read.outputs.count == packed.outputs.count)
        for (a, b) in zip(read.outputs, packed.outputs) {
            #expect(Array(a.path.utf8) == Array(b.path.utf8) && Array(a.name.utf8) == Array(b.name.utf8), "\(b.path)")
            #expect(a.shared === b.shared && a.prefix === b.prefix)
            #expect(a.largestSize == b.largestSize && a.size == b.size && a.seen == b.seen, "\(b.path)")
        }
    }
}
