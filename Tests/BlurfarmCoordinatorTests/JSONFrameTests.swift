import BlurfarmSystem
import BlurfarmTestSupport
import Foundation
import Testing

@testable import BlurfarmCoordinator

/// A long list set into its frame an element at a time (``JSONFrame``) is the value encoded
/// whole: for any values, lists empty or not, empty lists within the elements, several lists
/// under the key, names that are not UTF-8, and strings that spell the frame's marker.
@Suite struct JSONFrameTests {
    struct Item: Encodable {
        var number: Int
        var sub: [Int]
        var note: String?
    }

    struct Box: Encodable {
        var items: [Item]
        var name: String
        var tags: [String]
    }

    @Test func aListSetInItsFrameIsTheValueEncodedWhole() throws {
        var generator = SplitMix(seed: 3)
        let notes = ["\"items\" : [\n\n  ]", PathEncoding.decode([0x61, 0xE9]).text, "plain", "/a/b"]
        for _ in 0..<300 {
            let boxes = (0..<Int.random(in: 0...3, using: &generator)).map { index in
                Box(
                    items: (0..<Int.random(in: 0...4, using: &generator)).map { _ in
                        Item(
                            number: Int.random(in: -9...9, using: &generator),
                            sub: (0..<Int.random(in: 0...2, using: &generator)).map { $0 },
                            note: Bool.random(using: &generator) ? notes[Int.random(in: 0..<notes.count, using: &generator)] : nil)
                    },
                    name: "box \(index) " + notes[Int.random(in: 0..<notes.count, using: &generator)],
                    tags: Bool.random(using: &generator) ? [] : ["t"])
            }
            var frame = try JSONFrame(boxes.map { Box(items: [], name: $0.name, tags: $0.tags) }, lists: "items")
            var bytes: [UInt8] = []
            for box in boxes {
                bytes += frame.openList()
                for item in box.items { bytes += try frame.element(item) }
                bytes += frame.closeList()
            }
            bytes += frame.finish()
            #expect(bytes == Array(try RunReport.json(boxes)))
        }
    }
}
