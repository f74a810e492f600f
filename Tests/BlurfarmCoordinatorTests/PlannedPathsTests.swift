import BlurfarmState
import BlurfarmTestSupport
import Foundation
import Testing

@testable import BlurfarmCoordinator

/// The orphans' rule asks the plan's paths by their hashes and places (``PlannedPaths``), not
/// sets of the paths: what it answers must be what the sets answered, by every path's bytes.
@Suite struct PlannedPathsTests {
    /// A plan of inputs with two variants each, among them two names that are one string to
    /// Swift and two files to the kernel (`é`, and `e` with a combining accent): every planned
    /// output is written and every input read, and any other path (a planned one a byte
    /// longer or shorter, in another folder, of a removed variant, the other spelling of an
    /// accent) neither, as sets of the absolute paths' bytes say.
    @Test func itAnswersWhatSetsOfThePathsAnswer() throws {
        let names = (0..<60).map { "p\($0)" } + ["\u{E9}", "e\u{301}"]
        let (root, plan, _) = try RecipeVersionsTests.plannedJob(
            photos: names,
            """
            job: paths
            inputs: [photos/*.jpg]
            outputs:
              - name: copy
                path: out/{stem}.png
              - name: small
                path: out/small/{stem}.webp

            """)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let folders = RealPath.Folders()
        let paths = PlannedPaths(plan, folders: folders)
        let outputs = plan.inputs.flatMap(\.outputs).map { IncrementalRun.absolute($0.path, using: folders) }
        let inputs = plan.inputs.map { IncrementalRun.absolute($0.path, using: folders) }
        #expect(outputs.count == 2 * names.count && inputs.count == names.count)
        let (writtenSet, readSet) = (Set(outputs.map(RealPath.Identity.Bytes.init)), Set(inputs.map(RealPath.Identity.Bytes.init)))
        var generator = SplitMix(seed: 2026)
        let asked = outputs + inputs
            + outputs.map { $0 + "x" } + outputs.map { String($0.dropLast()) }
            + outputs.map { $0.replacingOccurrences(of: "/out/", with: "/other/") }
            + names.map { "\(root)/job/out/big/\($0).png" }
            + ["\(root)/job/out/\u{E9}.png", "\(root)/job/out/e\u{301}.png", "\(root)/job/out/\u{E9}\u{301}.png"]
        for path in asked.shuffled(using: &generator) {
            let bytes = RealPath.Identity.Bytes(path)
            #expect(paths.writes(path) == writtenSet.contains(bytes), "\(Array(path.utf8))")
            #expect(paths.reads(path) == readSet.contains(bytes), "\(Array(path.utf8))")
            #expect(paths.holds(path) == (writtenSet.contains(bytes) || readSet.contains(bytes)))
        }
        // Both accents' outputs are planned, each its own file.
        #expect(paths.writes("\(root)/job/out/\u{E9}.png") && paths.writes("\(root)/job/out/e\u{301}.png"))
    }
}
