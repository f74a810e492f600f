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
            #expect(PlannedOutput(shared: variant, path: rooted).path == rooted, "\(rooted)")
            let (prefix, name) = made.split(rooted)
            #expect(prefix.text + name == rooted, "\(rooted)")
            #expect(!name.contains("/"), "\(rooted)")
            #expect(prefix.text.isEmpty || prefix.text.hasSuffix("/"), "\(rooted)")
        }
    }

    @Test func theOutputsOfAFolderShareItsPrefix() {
        var made = PathPrefix.Made()
        let (a, nameA) = made.split("/photos/out/a.jpg")
        let (b, nameB) = made.split("/photos/out/b.jpg")
        let (c, _) = made.split("/photos/other/a.jpg")
        let (d, nameD) = made.split("a.jpg")
        #expect(a === b)
        #expect(a !== c)
        #expect((a.text, nameA, nameB) == ("/photos/out/", "a.jpg", "b.jpg"))
        #expect((d.text, nameD) == ("", "a.jpg"))
    }

    @Test func anInputsPathIsThePathItWasMadeFrom() {
        let cases = [("/job/in/a.jpg", "in/a.jpg"), ("in/a.jpg", "in/a.jpg"), ("/abs/a.jpg", "/abs/a.jpg"), ("/x/é/b", "é/b"), ("/x/y", "z")]
        for (path, relative) in cases {
            let input = PlannedInput(path: path, relativePath: relative, outputs: [])
            #expect(input.path == path && input.relativePath == relative, "\(path)")
            #expect(input.with(outputs: []).path == path, "\(path)")
        }
    }
}
