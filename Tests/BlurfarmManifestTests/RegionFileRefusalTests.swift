import BlurfarmCore
import BlurfarmManifest
import Testing

/// A region file that could place its boxes wrongly is refused at the JSON path of the problem,
/// never read one way or placed as a silent no-op (docs/privacy.md): absurd numbers, a key
/// given twice, a size that is not the image's as shown.
@Suite struct RegionFileRefusalTests {
    static func regions(_ json: String, displayed: RegionFile.DisplayedImage? = nil) -> Result<[Region], RegionFile.Problem> {
        Result { () throws(RegionFile.Problem) in
            try RegionFile.regions(from: Array(json.utf8), shape: .ellipse, feather: 0, displayed: displayed)
        }
    }

    static func problem(_ json: String, displayed: RegionFile.DisplayedImage? = nil) -> String? {
        if case .failure(let problem) = regions(json, displayed: displayed) { return problem.description }
        return nil
    }

    /// Boxes a hundred images away, or so large that their edges lose the pixels' centres to
    /// rounding, are refused at their path (they covered half the image and blurred none of it).
    @Test(arguments: [
        (#"{"width": 320, "height": 240, "boxes": [{"x": 0, "y": 0, "width": 1e20, "height": 10}]}"#, "$.boxes[0].width"),
        (#"{"width": 320, "height": 240, "boxes": [{"x": -1.7e306, "y": 0, "width": 3.4e306, "height": 10}]}"#, "$.boxes[0].x"),
        (#"{"width": 320, "height": 240, "boxes": [{"x": 0, "y": 33000, "width": 10, "height": 10}]}"#, "$.boxes[0].y"),
        (#"{"width": 1e30, "height": 240, "boxes": []}"#, "$.width"),
    ])
    func absurdNumbersAreRefusedAtTheirPath(json: String, path: String) {
        let said = Self.problem(json)
        #expect(said?.hasPrefix(path + ": ") == true, "\(said ?? "accepted")")
        #expect(said?.contains("beyond any image") == true, "\(said ?? "accepted")")
    }

    /// Boxes that reach a little beyond the image are still clipped, as before.
    @Test func aBoxAlittleBeyondTheImageIsTaken() throws {
        let json = #"{"width": 320, "height": 240, "boxes": [{"x": -40, "y": 200, "width": 400, "height": 100}]}"#
        #expect(try Self.regions(json).get().count == 1)
    }

    /// A key given twice (even spelled with an escape, `\u0062oxes`) is refused at its path:
    /// readers disagree on which value counts.
    @Test(arguments: [
        (#"{"width": 320, "height": 240, "boxes": [{"x": 0, "y": 0, "width": 10, "x": 300, "height": 10}]}"#, "$.boxes[0].x"),
        (#"{"width": 320, "height": 240, "boxes": [], "\u0062oxes": [{"x": 0, "y": 0, "width": 10, "height": 10}]}"#, "$.boxes"),
        (#"{"width": 320, "width": 640, "height": 240, "boxes": []}"#, "$.width"),
        (#"{"width": 320, "height": 240, "boxes": [], "a b": 1, "a\u0020b": 2}"#, #"$["a b"]"#),
    ])
    func aKeyGivenTwiceIsRefused(json: String, path: String) {
        let said = Self.problem(json)
        #expect(said == "\(path): is given twice (readers disagree on which value counts)", "\(said ?? "accepted")")
    }

    /// The same key in two different objects is no duplicate; text that Python's `json`, jq or
    /// a browser would refuse is refused where it breaks, though Foundation's decoder read it: a
    /// comma before a bracket, a malformed number (even where blurfarm reads none), a misspelt
    /// literal, a control character in a string, text after the end; and a label or a score of
    /// another type than the schema's (they were left out).
    @Test(arguments: [
        (#"{"width": 64, "height": 40, "boxes": [{"x": 1, "y": 1, "width": 5, "height": 5,}]}"#, "$.boxes[0]: is not JSON"),
        (#"{"width": 64, "height": 40, "boxes": [{"x": 1, "y": 1, "width": 5, "height": 5}],}"#, "$: is not JSON"),
        (#"{"width": 64, "height": 40, "boxes": [{"x": 1, "y": 1, "width": 5, "height": 5},]}"#, "$.boxes[1]: is not JSON"),
        (#"{"width": 64, "height": 40, "boxes": [{"x": 1, "y": 1, "width": 5, "height": 5, "score": 1.2.3}]}"#, "$.boxes[0].score: is not JSON"),
        (#"{"width": 64, "height": 40, "boxes": [{"x": 1, "y": 1, "width": 5, "height": 5, "score": --5}]}"#, "$.boxes[0].score: is not JSON"),
        (#"{"width": 64, "height": 40, "boxes": [{"x": 1, "y": 1, "width": 5, "height": 5, "score": 1e}]}"#, "$.boxes[0].score: is not JSON"),
        (#"{"width": 64, "height": 40, "boxes": [{"x": 01, "y": 1, "width": 5, "height": 5}]}"#, "$.boxes[0].x: is not JSON"),
        (#"{"width": 64, "height": 40, "boxes": [{"x": 1, "y": 1, "width": 5, "height": 5, "label": nul}]}"#, "$.boxes[0].label: is not JSON"),
        ("{\"width\": 64, \"height\": 40, \"boxes\": [{\"x\": 1, \"y\": 1, \"width\": 5, \"height\": 5, \"label\": \"a\u{1}b\"}]}", "$.boxes[0].label: is not JSON"),
        (#"{"width": 64, "height": 40, "boxes": []} {}"#, "$: has text after its end"),
        (#"{"width": 64, "height": 40, "boxes": [1, 2"#, "$.boxes: is not JSON: the text ends inside it"),
        (#"{"width": 64, "height": 40, "boxes": [{"x": 1, "y": 1, "width": 5, "height": 5, "label": 5}]}"#, "$.boxes[0].label: must be a string"),
        (#"{"width": 64, "height": 40, "boxes": [{"x": 1, "y": 1, "width": 5, "height": 5, "score": "x"}]}"#, "$.boxes[0].score: must be a number"),
    ])
    func textThatIsNotJSONIsRefusedWhereItBreaks(json: String, said: String) {
        let problem = Self.problem(json)
        #expect(problem?.hasPrefix(said) == true, "\(problem ?? "accepted")")
    }

    @Test func keysOfDifferentObjectsAreNotDuplicatesAndJSONIsTaken() {
        let two = #"{"width": 320, "height": 240, "boxes": [{"x": 1, "y": 0, "width": 10, "height": 10, "label": "face", "score": 0.5e-1}, {"x": -2.5E+1, "y": 0, "width": 10, "height": 10, "score": 0}]}"#
        #expect(StrictJSON.problem(in: Array(two.utf8)) == nil)
        #expect(Self.problem(two) == nil)
        #expect(StrictJSON.problem(in: Array(#" [true, false, null, "\u00e9\ud83d\ude00", -0, 1.5]  "#.utf8)) == nil)
        #expect(StrictJSON.problem(in: Array(#"{"a": 1, "a""#.utf8))?.path == "$.a")
        #expect(StrictJSON.problem(in: Array(String(repeating: "[", count: 100_000).utf8))?.message == "is nested more than 256 deep")
    }

    /// A file measured on the stored pixels of a photo its EXIF orientation turns (320×240 for a
    /// photo shown 240×320), or on an image of another shape, is refused naming both sizes; one
    /// measured on the photo as shown, or on a smaller copy of it, is taken.
    @Test func aFileMeasuredOnAnotherShapeIsRefusedNamingBothSizes() throws {
        let turned = RegionFile.DisplayedImage(width: 240, height: 320, orientation: 6)
        let stored = #"{"width": 320, "height": 240, "boxes": [{"x": 10, "y": 10, "width": 50, "height": 50}]}"#
        let said = Self.problem(stored, displayed: turned)
        #expect(said?.hasPrefix("$.width: the boxes were measured on 320x240, the stored pixels of a photo shown 240x320 (EXIF orientation 6)") == true, "\(said ?? "accepted")")
        let other = #"{"width": 100, "height": 100, "boxes": []}"#
        #expect(Self.problem(other, displayed: turned) == "$.width: the boxes were measured on 100x100, which is not the shape of the image (240x320 as shown)")
        #expect(Self.problem(#"{"width": 240, "height": 320, "boxes": []}"#, displayed: turned) == nil)
        #expect(Self.problem(#"{"width": 120, "height": 160, "boxes": []}"#, displayed: turned) == nil)
        // Upright, the swapped size is another shape too.
        let upright = RegionFile.DisplayedImage(width: 320, height: 240, orientation: 1)
        #expect(Self.problem(#"{"width": 240, "height": 320, "boxes": []}"#, displayed: upright)?.contains("not the shape") == true)
    }
}
