import BlurfarmTestSupport
import Foundation
import Testing

/// A fenced block of README.md or docs/*.md marked runnable (info string `sh runnable`,
/// docs/writing.md): its commands, and where it stands.
struct RunnableBlock: Sendable, CustomTestStringConvertible {
    /// The page, relative to the repository (`docs/recipes.md`).
    let page: String
    /// The line of the opening fence, from 1.
    let line: Int
    /// The block's text: shell commands, one a line (or continued with `\`).
    let text: String

    var testDescription: String { "\(page):\(line)" }

    /// The info string that marks a block to run.
    static let marker = "```sh runnable"

    /// Every runnable block of README.md and docs/*.md, in page order.
    static func all() throws -> [RunnableBlock] {
        let docs = Fixtures.repository.appendingPathComponent("docs")
        let pages = ["README.md"]
            + (try FileManager.default.contentsOfDirectory(atPath: docs.path)).filter { $0.hasSuffix(".md") }.sorted()
            .map { "docs/" + $0 }
        return try pages.flatMap { page in
            try blocks(in: String(contentsOf: Fixtures.repository.appendingPathComponent(page), encoding: .utf8), page: page)
        }
    }

    /// The runnable blocks of one page's `markdown`; a block shown inside a longer fence
    /// (```` ```` ````, as docs/writing.md shows the marker) is an example, not run.
    static func blocks(in markdown: String, page: String) -> [RunnableBlock] {
        var blocks: [RunnableBlock] = []
        var open: (line: Int, lines: [Substring])?
        var inLongFence = false
        for (index, line) in markdown.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if open == nil, line.hasPrefix("````") {
                inLongFence.toggle()
            } else if inLongFence {
                continue
            } else if open == nil, line == marker {
                open = (index + 1, [])
            } else if let block = open, line.hasPrefix("```") {
                blocks.append(RunnableBlock(page: page, line: block.line, text: block.lines.joined(separator: "\n") + "\n"))
                open = nil
            } else {
                open?.lines.append(line)
            }
        }
        return blocks
    }
}

/// Every command of the documentation marked runnable runs as written (docs/writing.md): each
/// block through bash (`set -euo pipefail`) from a scratch copy of the repository's `samples/`,
/// `jobs/`, `config/` and `scripts/`, with the built `blurfarm` and `blurfarm-worker` first on
/// the PATH, and must exit 0.
@Suite(.tags(.process), .blocking) struct DocsCommandsTests {
    /// The pages have runnable blocks where the issue asks for them: the quick start, the
    /// one-liners and the recipes; and a marker is never misspelt (an unmarked `sh` block is
    /// fine, one whose info string starts with `sh run` but is not the marker is a typo).
    @Test func theRunnableBlocksAreWhereTheyShouldBe() throws {
        let blocks = try RunnableBlock.all()
        let pages = Set(blocks.map(\.page))
        #expect(pages.isSuperset(of: ["README.md", "docs/commands.md", "docs/recipes.md", "docs/performance.md"]), "\(pages)")
        #expect(blocks.contains { $0.text.contains("blurfarm apply ") && $0.text.contains(" -o ") })
        #expect(blocks.contains { $0.text.contains("blurfarm bench") })
        for recipe in try FileManager.default.contentsOfDirectory(
            atPath: Fixtures.repository.appendingPathComponent("jobs/recipes").path)
        {
            #expect(blocks.contains { $0.text.contains("jobs/recipes/\(recipe)") }, "\(recipe) is run by no block")
        }
        let docs = Fixtures.repository.appendingPathComponent("docs")
        for page in ["README.md"] + (try FileManager.default.contentsOfDirectory(atPath: docs.path)).map({ "docs/" + $0 }) {
            let text = try String(contentsOf: Fixtures.repository.appendingPathComponent(page), encoding: .utf8)
            for line in text.split(separator: "\n") where line.hasPrefix("```sh run") {
                #expect(line == RunnableBlock.marker, "\(page): '\(line)'")
            }
        }
    }

    @Test(arguments: try RunnableBlock.all())
    func runsAsWritten(_ block: RunnableBlock) throws {
        let scratch = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: scratch) }
        for folder in ["samples", "jobs", "config", "scripts"] {
            try FileManager.default.copyItem(
                at: Fixtures.repository.appendingPathComponent(folder), to: scratch.appendingPathComponent(folder))
        }
        let bin = BuiltExecutable.url.deletingLastPathComponent().path
        let path = bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let result = try Blurfarm.run(
            ["-c", "exec bash -c \"$1\"", "sh", "set -euo pipefail\n" + block.text], in: scratch,
            environment: ["PATH": path, "HOME": scratch.path], shell: true)
        #expect(
            result.status == 0,
            "\(block.page):\(block.line) exited \(result.status)\n\(block.text)\nstdout:\n\(result.stdout)\nstderr:\n\(result.stderr)")
    }
}
