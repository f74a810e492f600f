import BlurfarmTestSupport
import Foundation
import Testing

/// The recipes of `docs/recipes.md` are the files `jobs/recipes/NAME.job`: each ```job block
/// of the page follows a `<!-- file: jobs/recipes/NAME.job -->` line and is that file's text,
/// and each file checks, plans outputs and runs on the repository's `samples/`, as the page
/// says, from a scratch copy of `samples/` and `jobs/`.
@Suite(.tags(.process), .blocking) struct RecipeTests {
    /// The ```job blocks of the page, in order, each with the file its marker line names.
    static func recipes() throws -> [(file: String, text: String)] {
        let page = try String(
            contentsOf: Fixtures.repository.appendingPathComponent("docs/recipes.md"), encoding: .utf8)
        var blocks: [(file: String, text: String)] = [], current: [Substring]?, file = "", previous: Substring = ""
        for line in page.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line == "```job" {
                let prefix = "<!-- file: ", suffix = " -->"
                file = previous.hasPrefix(prefix) && previous.hasSuffix(suffix)
                    ? String(previous.dropFirst(prefix.count).dropLast(suffix.count)) : ""
                current = []
            } else if current != nil, line == "```" {
                blocks.append((file, current!.joined(separator: "\n") + "\n"))
                current = nil
            } else {
                current?.append(line)
            }
            previous = line
        }
        return blocks
    }

    @Test func everyBlockIsItsFileAndEveryFileIsShown() throws {
        let recipes = try Self.recipes()
        let files = try FileManager.default.contentsOfDirectory(
            atPath: Fixtures.repository.appendingPathComponent("jobs/recipes").path
        ).filter { $0.hasSuffix(".job") }.sorted()
        #expect(recipes.count == 5)
        #expect(recipes.map(\.file).sorted() == files.map { "jobs/recipes/" + $0 })
        for recipe in recipes {
            let text = try String(contentsOf: Fixtures.repository.appendingPathComponent(recipe.file), encoding: .utf8)
            #expect(recipe.text == text, "\(recipe.file) differs from its block in docs/recipes.md")
        }
    }

    @Test func everyRecipeRunsOnTheSamplesAsItStands() throws {
        let scratch = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: scratch) }
        for folder in ["samples", "jobs"] {
            try FileManager.default.copyItem(
                at: Fixtures.repository.appendingPathComponent(folder), to: scratch.appendingPathComponent(folder))
        }
        for (file, _) in try Self.recipes() {
            let check = try Blurfarm.run(["check", file], in: scratch)
            #expect(check.status == 0, "\(file): \(check.stdout)\(check.stderr)")
            #expect(check.stderr.isEmpty, "\(file): \(check.stderr)")
            let run = try Blurfarm.run(["run", file], in: scratch)
            #expect(run.status == 0, "\(file): \(run.stderr)")
            #expect(run.stdout.contains(" written, 0 failed"), "\(file): \(run.stdout)")
            #expect(!run.stdout.contains(": 0 written"), "\(file): \(run.stdout)")
        }
        let written = FileManager.default.enumerator(atPath: scratch.appendingPathComponent("out/recipes").path)?
            .compactMap { $0 as? String }.filter { $0.contains(".") } ?? []
        #expect(written.contains { $0.hasPrefix("thumbs/") } && written.contains { $0.hasPrefix("backdrops/") }
            && written.contains { $0.hasPrefix("frosted/") } && written.contains { $0.hasPrefix("cards/") }
            && written.contains { $0.hasPrefix("redacted/") } && written.contains { $0.hasPrefix("portrait/") }
            && written.contains { $0.hasPrefix("faces/") } && written.contains { $0.hasPrefix("buttons/") }, "\(written)")
    }
}
