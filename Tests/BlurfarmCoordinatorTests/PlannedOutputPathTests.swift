import BlurfarmCore
import BlurfarmManifest
import BlurfarmTestSupport
import Testing

@testable import BlurfarmCoordinator

/// An output's path is held as its folder's shared prefix and its name, an input's as the
/// manifest's folder's prefix and its relative path (``PathPrefix``): read back, each is the
/// path it was made from, byte for byte, and the outputs of one folder share one prefix.
@Suite struct PlannedOutputPathTests {
    @Test func anOutputsPathIsThePathItWasMadeFrom() {
        let names = ["a", "é", "x y", ".", "..", "", ".x", "\u{F7E9}", "e\u{301}", "photo-000123.jpg", "a-name-longer-than-fifteen.webp"]
        var generator = SplitMix(seed: 47)
        var made = PathPrefix.Made()
        let variant = PlannedVariant(VariantSpec(name: "v", pathTemplate: try! PathTemplate("out/{stem}.png")))
        for _ in 0..<20_000 {
            let path = (0..<Int.random(in: 1...4, using: &generator)).map { _ in names.randomElement(using: &generator)! }
                .joined(separator: Bool.random(using: &generator) ? "/" : "//")
            let rooted = Bool.random(using: &generator) ? "/" + path : path
            // Byte for byte: `é` and `e` with a combining accent are equal strings, and two names.
            #expect(Array(PlannedOutput(shared: variant, path: rooted).path.utf8) == Array(rooted.utf8), "\(rooted)")
            let (prefix, name) = made.split(rooted)
            #expect(Array((prefix.text + name).utf8) == Array(rooted.utf8), "\(rooted)")
            #expect(!name.contains("/"), "\(rooted)")
            #expect(prefix.text.isEmpty || prefix.text.hasSuffix("/"), "\(rooted)")
        }
    }

    @Test func theOutputsOfAFolderShareItsPrefix() {
        var made = PathPrefix.Made()
        // Folders whose names are equal strings but other bytes are two folders.
        let (composed, _) = made.split("/p/\u{E9}/a.jpg")
        let (combining, _) = made.split("/p/e\u{301}/a.jpg")
        #expect(composed !== combining)
        #expect(Array(combining.text.utf8) == Array("/p/e\u{301}/".utf8))
        let (a, nameA) = made.split("/photos/out/a.jpg")
        let (b, nameB) = made.split("/photos/out/b.jpg")
        let (c, _) = made.split("/photos/other/a.jpg")
        let (d, nameD) = made.split("a.jpg")
        #expect(a === b)
        #expect(a !== c)
        #expect((a.text, nameA, nameB) == ("/photos/out/", "a.jpg", "b.jpg"))
        #expect((d.text, nameD) == ("", "a.jpg"))
    }

    /// The folders a run looks in for what a killed run left (``JobRunner/outputFolders(of:)``),
    /// read from the outputs' shared prefixes: each folder of the outputs' paths, once, also
    /// when two parts of the plan made a prefix of one folder each, from a packed part (its
    /// table of prefixes, which holds the inputs' too) and a listed one.
    @Test func theOutputFoldersAreThoseOfTheOutputsPathsEachOnce() {
        let names = ["a", "é", "x y", ".", "..", ".x", "e\u{301}", "photo-000123.jpg"]
        var generator = SplitMix(seed: 4747)
        let spec = VariantSpec(name: "v", pathTemplate: try! PathTemplate("out/{stem}.png"))
        let variant = PlannedVariant(spec)
        for _ in 0..<200 {
            // Two parts, each making its own prefixes.
            var parts = [PathPrefix.Made(), PathPrefix.Made()]
            var (inputs, expected): ([PlannedInput], Set<[UInt8]>) = ([], [])
            for index in 0..<Int.random(in: 1...12, using: &generator) {
                var outputs: [PlannedOutput] = []
                for _ in 0..<Int.random(in: 0...3, using: &generator) {
                    let path = (0..<Int.random(in: 1...4, using: &generator)).map { _ in names.randomElement(using: &generator)! }
                        .joined(separator: Bool.random(using: &generator) ? "/" : "//")
                    let rooted = Bool.random(using: &generator) ? "/" + path : path
                    let (prefix, name) = parts[index % 2].split(rooted)
                    outputs.append(PlannedOutput(shared: variant, prefix: prefix, name: name, largestSize: nil, size: nil, seen: .unseen))
                    let folder = PathName.folderInPlace(of: rooted)
                    expected.insert(Array((folder.isEmpty ? "." : folder).utf8))
                }
                inputs.append(PlannedInput(path: "/job/in/\(index).png", relativePath: "in/\(index).png", outputs: outputs))
            }
            // The first half packed, each input read at a prefix of its own that no output has.
            let half = inputs.count / 2
            var packer = PlannedInputs.Packer(capacity: half)
            for input in inputs[..<half] {
                packer.append(
                    prefix: PathPrefix("/inputs-\(input.relativePath)/"), relativePath: input.relativePath, outputs: input.outputs,
                    notEnlarged: [], seen: .unseen)
            }
            let plan = JobPlan(
                job: JobSpec(name: "folders", inputs: ["in/*"], outputs: [spec]), manifestPath: "/job/job.job", folder: "/job",
                inputs: PlannedInputs(joining: [packer.packed(), PlannedInputs(Array(inputs[half...]))]), tileSize: 0)
            #expect(plan.outputCount == inputs.reduce(0) { $0 + $1.outputs.count })
            let folders = JobRunner.outputFolders(of: plan).map { Array($0.utf8) }
            #expect(folders.count == Set(folders).count && Set(folders) == expected, "\(folders) \(expected)")
        }
    }

    @Test func anInputsPathIsThePathItWasMadeFrom() {
        let cases = [("/job/in/a.jpg", "in/a.jpg"), ("in/a.jpg", "in/a.jpg"), ("/abs/a.jpg", "/abs/a.jpg"), ("/x/é/b", "é/b"), ("/x/y", "z"), ("/x/e\u{301}", "\u{E9}")]
        for (path, relative) in cases {
            let input = PlannedInput(path: path, relativePath: relative, outputs: [])
            #expect(Array(input.path.utf8) == Array(path.utf8) && input.relativePath == relative, "\(path)")
            #expect(Array(input.with(outputs: []).path.utf8) == Array(path.utf8), "\(path)")
        }
    }
}
