import Foundation
import Testing

/// docs/architecture.md is the module map a newcomer reads first; it must not drift from
/// Package.swift, which is what the modules really are.
@Suite struct ArchitectureDocTests {
    static let repository: URL = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }  // file, BlurfarmCLITests, Tests
        return url
    }()

    /// The names of the package's targets, test targets and the tests' support target aside.
    static func sourceTargets() throws -> Set<String> {
        let manifest = try String(contentsOf: repository.appendingPathComponent("Package.swift"), encoding: .utf8)
        let declaration = /\.(target|executableTarget|systemLibrary)\(\s*name:\s*"([^"]+)"/
        let names = manifest.matches(of: declaration).map { String($0.output.2) }
        return Set(names).subtracting(["BlurfarmTestSupport"])
    }

    /// The names in the first column of the module table: `` `A` `` or `` `A`, `B` ``.
    static func documentedModules() throws -> Set<String> {
        let document = try String(
            contentsOf: repository.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
        var names: Set<String> = []
        for line in document.split(separator: "\n") where line.hasPrefix("| `") {
            let cell = line.dropFirst(2).prefix { $0 != "|" }
            for match in cell.matches(of: /`([^`]+)`/) { names.insert(String(match.output.1)) }
        }
        return names
    }

    @Test func everyTargetHasItsRowAndEveryRowATarget() throws {
        let targets = try Self.sourceTargets()
        let documented = try Self.documentedModules()
        #expect(targets.count > 20, "Package.swift's targets were not found: \(targets.sorted())")
        #expect(targets.subtracting(documented).isEmpty, "not in docs/architecture.md: \(targets.subtracting(documented).sorted())")
        #expect(documented.subtracting(targets).isEmpty, "not in Package.swift: \(documented.subtracting(targets).sorted())")
    }

    /// A reference, not a diary: the details live in farm.md, rendering.md and pool.md.
    @Test func theMapStaysShort() throws {
        let document = try String(
            contentsOf: Self.repository.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
        let lines = document.split(separator: "\n", omittingEmptySubsequences: false).count
        #expect(lines <= 150, "docs/architecture.md has \(lines) lines")
    }
}
