import Foundation
import Testing

/// Every manifest of `docs/recipes.md` (its ```job blocks) is valid and plans outputs, checked
/// through `blurfarm check` against a folder of corpus photos where each recipe looks for them.
@Suite struct RecipeTests {
    /// The ```job blocks of the page, in order.
    static func recipes() throws -> [String] {
        let page = try String(
            contentsOf: Fixtures.repository.appendingPathComponent("docs/recipes.md"), encoding: .utf8)
        var blocks: [String] = [], current: [Substring]?
        for line in page.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line == "```job" {
                current = []
            } else if current != nil, line == "```" {
                blocks.append(current!.joined(separator: "\n") + "\n")
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    @Test func everyRecipeChecksAndPlansOutputs() throws {
        let recipes = try Self.recipes()
        #expect(recipes.count == 4)
        for recipe in recipes {
            let folder = try Fixtures.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            for photo in ["photos/2026/IMG_0042.JPG", "photos/cups.jpg", "hero/kite.jpg", "headers/aqua.jpg"] {
                let target = folder.appendingPathComponent(photo)
                try FileManager.default.createDirectory(
                    at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
                try FileManager.default.copyItem(
                    atPath: Fixtures.corpus("special/exif-orientation-6.jpg"), toPath: target.path)
            }
            let manifest = folder.appendingPathComponent("recipe.job")
            try recipe.write(to: manifest, atomically: true, encoding: .utf8)
            let result = try Blurfarm.run(["check", manifest.path])
            #expect(result.status == 0, "\(recipe)\(result.stdout)\(result.stderr)")
            #expect(result.stderr.isEmpty, "\(result.stderr)")
            #expect(!result.stdout.contains(" 0 outputs"), "\(result.stdout)")
        }
    }
}
