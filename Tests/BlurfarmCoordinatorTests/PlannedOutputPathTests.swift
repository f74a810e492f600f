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

    @Test func anInputsPathIsThePathItWasMadeFrom() {
        let cases = [("/job/in/a.jpg", "in/a.jpg"), ("in/a.jpg", "in/a.jpg"), ("/abs/a.jpg", "/abs/a.jpg"), ("/x/é/b", "é/b"), ("/x/y", "z"), ("/x/e\u{301}", "\u{E9}")]
        for (path, relative) in cases {
            let input = PlannedInput(path: path, relativePath: relative, outputs: [])
            #expect(Array(input.path.utf8) == Array(path.utf8) && input.relativePath == relative, "\(path)")
            #expect(Array(input.with(outputs: []).path.utf8) == Array(path.utf8), "\(path)")
        }
    }
}
