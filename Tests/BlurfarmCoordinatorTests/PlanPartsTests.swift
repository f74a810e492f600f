import BlurfarmKernels
import BlurfarmManifest
import Foundation
import Testing

@testable import BlurfarmCoordinator

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
