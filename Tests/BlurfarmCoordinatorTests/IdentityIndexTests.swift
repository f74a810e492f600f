import BlurfarmCore
import BlurfarmKernels
import BlurfarmManifest
import BlurfarmState
import BlurfarmTestSupport
import Foundation
import Testing

@testable import BlurfarmCoordinator

/// The plan holds its files by identity as a hash and a position each (``IdentityIndex``), not
/// a dictionary of identities with their writers (63 MB of a 100,000-input plan's 125 MB heap
/// peak): what it finds must be what the dictionary found.
@Suite struct IdentityIndexTests {
    /// Random identities, many of them repeated: the candidates of each, told apart by their
    /// identities, are exactly the positions that hold it, and the runs of one hash hold every
    /// file that more than one position holds.
    @Test func candidatesAndSharedHashesAreWhatADictionaryFinds() {
        var generator = SplitMix(seed: 47)
        for _ in 0..<200 {
            let count = Int.random(in: 0...300, using: &generator)
            let identities: [RealPath.Identity] = (0..<count).map { _ in
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: .file(device: UInt64.random(in: 1...2, using: &generator), inode: UInt64.random(in: 1...40, using: &generator))
                case 1: .entry(device: 1, inode: UInt64.random(in: 1...3, using: &generator), name: "f\(Int.random(in: 0..<40, using: &generator))")
                default: .path("/missing/f\(Int.random(in: 0..<40, using: &generator))")
                }
            }
            var index = IdentityIndex<Int>(capacity: count)
            for (position, identity) in identities.enumerated().shuffled(using: &generator) { index.add(identity, at: position) }
            index.seal()
            var reference: [RealPath.Identity: [Int]] = [:]
            for (position, identity) in identities.enumerated() { reference[identity, default: []].append(position) }
            for (identity, positions) in reference {
                #expect(index.candidates(of: identity).filter { identities[$0] == identity } == positions)
                #expect(index.first(of: identity) { identities[$0] == identity } == positions.first)
            }
            #expect(index.candidates(of: .path("/never")).allSatisfy { identities[$0] != .path("/never") })
            let shared = index.sharedHashes().flatMap { run in
                Dictionary(grouping: run) { identities[$0] }.values.filter { $0.count > 1 }
            }
            #expect(Set(shared) == Set(reference.values.filter { $0.count > 1 }))
        }
    }

    /// Two outputs that are one file are found after every output is in, and each error is
    /// told where the plan came to its output, among the errors told as they were found.
    @Test func errorsOfOutputsThatAreOneFileComeInThePlansOrder() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("identities-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        for folder in ["in", "out"] { try FileManager.default.createDirectory(atPath: "\(root)/\(folder)", withIntermediateDirectories: true) }
        // Another spelling of `out`: its files are `out`'s.
        try FileManager.default.createSymbolicLink(atPath: root + "/same", withDestinationPath: "out")
        // And of `in`: its files are the inputs.
        try FileManager.default.createSymbolicLink(atPath: root + "/src", withDestinationPath: "in")
        for name in ["a", "b"] { _ = FileManager.default.createFile(atPath: "\(root)/in/\(name).png", contents: Data(name.utf8)) }
        let manifest = root + "/job.job"
        try """
            job: same
            inputs: [in/*.png]
            outputs:
              - name: one
                path: out/{stem}.png
              - name: two
                path: same/{stem}.png
              - name: three
                path: src/{stem}.png

            """.write(toFile: manifest, atomically: true, encoding: .utf8)
        let diagnostics: Diagnostics
        switch try RecipeVersionsTests.plan(manifestAt: manifest) {
        case .success: Issue.record("planned"); return
        case .failure(let failure): diagnostics = failure
        }
        let messages = diagnostics.map(\.message)
        let expected = [
            "variants 'one' (for in/a.png) and 'two' (for in/a.png) both write",
            "variant 'three' would overwrite the input 'in/a.png'",
            "variants 'one' (for in/b.png) and 'two' (for in/b.png) both write",
            "variant 'three' would overwrite the input 'in/b.png'",
        ]
        #expect(messages.count == expected.count, "\(messages)")
        for (message, start) in zip(messages, expected) { #expect(message.hasPrefix(start), "\(messages)") }
    }
}

/// A job's inputs are planned in parts, one a core, at once (``JobPlanner/planPartInputs``):
/// the plan and its errors, in their order, are those of one part, wherever the parts begin.
@Suite struct PlanPartsTests {
    /// A job of `count` inputs and, with `clashing`, variants that write `out` twice (through
    /// `same`, a link to it), into the inputs' folder, and one file for two inputs of one name.
    static func job(inputs count: Int, clashing: Bool) throws -> (root: String, manifest: String) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("parts-\(UUID().uuidString)").path
        for folder in ["in/x", "in/y", "out"] {
            try FileManager.default.createDirectory(atPath: "\(root)/\(folder)", withIntermediateDirectories: true)
        }
        try FileManager.default.createSymbolicLink(atPath: root + "/same", withDestinationPath: "out")
        try FileManager.default.createSymbolicLink(atPath: root + "/src", withDestinationPath: "in/x")
        for index in 0..<count {
            // The same names in both folders, but for a few.
            let name = "\(root)/in/\(index % 2 == 0 ? "x" : "y")/p\(index / 2 + (index % 5 == 0 ? 1000 : 0)).png"
            _ = FileManager.default.createFile(atPath: name, contents: Data("\(index)".utf8))
        }
        let clashes = clashing ? "  - name: two\n    path: same/{relpath}/{stem}.png\n  - name: three\n    path: src/{stem}.png\n"
            + "  - name: flat\n    path: out/flat/{stem}.png\n" : ""
        let manifest = root + "/job.job"
        try ("job: parts\ninputs: [in/**/*.png]\noutputs:\n  - name: one\n    path: out/{relpath}/{stem}.png\n" + clashes)
            .write(toFile: manifest, atomically: true, encoding: .utf8)
        return (root, manifest)
    }

    /// The plan of `manifest` in parts of `partInputs`, as text: every input, output and error.
    static func planned(_ manifest: String, partInputs: Int) throws -> [String] {
        let spec = try JobDecoder.decode(fileAtPath: manifest, filters: FilterRegistry.builtIn.descriptors).get()
        switch JobPlanner.plan(spec, manifestPath: manifest, defaultTile: 512, partInputs: partInputs) {
        case .success(let plan):
            return plan.inputs.flatMap { input in
                ["\(input.relativePath) \(input.seen)"] + input.outputs.map { "  \($0.path) \($0.variant.name) \($0.seen)" }
            } + plan.refused
        case .failure(let diagnostics):
            return diagnostics.map { "\($0.message) at \(String(describing: $0.location))" }
        }
    }

    @Test(arguments: [false, true]) func aPlanInPartsIsThePlanInOne(clashing: Bool) throws {
        let (root, manifest) = try Self.job(inputs: 61, clashing: clashing)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let whole = try Self.planned(manifest, partInputs: .max)
        #expect(whole.count > 61, "\(whole.prefix(3))")
        if clashing { #expect(whole.contains { $0.hasPrefix("variant 'three' would overwrite the input") }) }
        for partInputs in [1, 7, 30] {
            #expect(try Self.planned(manifest, partInputs: partInputs) == whole, "parts of \(partInputs)")
        }
    }
}
