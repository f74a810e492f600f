import BlurfarmTestSupport
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

    /// The targets of Package.swift, as `swift package dump-package` reads them.
    static func packageTargets() throws -> [[String: Any]] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // A scratch folder of its own: `swift test` holds the lock of the package's .build. And a
        // temporary folder of its own, removed with it: SwiftPM leaves its locks there.
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("architecture-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        try FileManager.default.createDirectory(at: scratch.appendingPathComponent("tmp"), withIntermediateDirectories: true)
        process.environment = ProcessInfo.processInfo.environment.merging(["TMPDIR": scratch.appendingPathComponent("tmp").path]) { $1 }
        process.arguments = ["swift", "package", "--scratch-path", scratch.appendingPathComponent("build").path, "dump-package"]
        process.currentDirectoryURL = Self.repository
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "swift package dump-package failed")
        let package = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        return try #require(package["targets"] as? [[String: Any]])
    }

    /// Every module a Swift target of Package.swift depends on is imported by one of its files,
    /// and every module of the package its files import is among its dependencies: the map of
    /// the modules is the code's (architecture.md: "a module imports only modules below it").
    @Test(.tags(.process)) func everyDependencyIsImportedAndEveryImportDeclared() throws {
        let targets = try Self.packageTargets()
        let names = Set(targets.compactMap { $0["name"] as? String })
        let importLine = /^\s*(?:@testable\s+|@preconcurrency\s+)?(?:public\s+|package\s+|internal\s+)?import\s+(\w+)/
        for target in targets where ["regular", "executable"].contains(target["type"] as? String) {
            let name = try #require(target["name"] as? String)
            let folder = Self.repository.appendingPathComponent(target["path"] as? String ?? "Sources/\(name)")
            let files = (FileManager.default.enumerator(atPath: folder.path)?.compactMap { $0 as? String } ?? [])
                .filter { $0.hasSuffix(".swift") }
            guard !files.isEmpty else { continue }  // C targets: their headers say what they use
            var imports: Set<String> = []
            for file in files {
                let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
                for line in text.split(separator: "\n") {
                    if let match = line.firstMatch(of: importLine) { imports.insert(String(match.output.1)) }
                }
            }
            let dependencies = Set((target["dependencies"] as? [[String: [Any]]] ?? []).compactMap { $0.values.first?.first as? String })
            #expect(dependencies.subtracting(imports).isEmpty, "\(name) depends on \(dependencies.subtracting(imports).sorted()) but imports none of them")
            let undeclared = imports.intersection(names).subtracting(dependencies).subtracting([name])
            #expect(undeclared.isEmpty, "\(name) imports \(undeclared.sorted()) without depending on them")
        }
    }

    /// Each Swift or C target's row ends with what it depends on, exactly as Package.swift
    /// says (as `swift package dump-package` reads it): module names without their `Blurfarm`,
    /// products by name; a system library's last cell says where it comes from instead.
    @Test(.tags(.process)) func everyRowsDependenciesAreThePackages() throws {
        let targets = try Self.packageTargets()
        var declared: [String: Set<String>] = [:]
        for target in targets where ["regular", "executable"].contains(target["type"] as? String) {
            let name = try #require(target["name"] as? String)
            let dependencies = (target["dependencies"] as? [[String: [Any]]] ?? []).compactMap { $0.values.first?.first as? String }
            declared[name] = Set(dependencies)
        }
        try #require(declared.count > 20, "dump-package's targets were not read: \(declared.keys.sorted())")
        let names = Set(targets.compactMap { $0["name"] as? String })
        let document = try String(contentsOf: Self.repository.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
        var documented: [String: Set<String>] = [:]
        for line in document.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 4, let name = cells[1].firstMatch(of: /^`([^`]+)`$/)?.output.1 else { continue }
            let last = cells[cells.count - 2]
            documented[String(name)] = last == "—" ? [] : Set(last.components(separatedBy: ", ").map { word in
                names.contains("Blurfarm" + word) ? "Blurfarm" + word : word
            })
        }
        for (name, dependencies) in declared.sorted(by: { $0.key < $1.key }) where name != "BlurfarmTestSupport" {
            let row = documented[name]
            #expect(row == dependencies, "\(name): docs/architecture.md says \(row.map { $0.sorted() } ?? []), Package.swift \(dependencies.sorted())")
        }
    }

    /// A reference, not a diary: the details live in farm.md, rendering.md and pool.md.
    @Test func theMapStaysShort() throws {
        let document = try String(
            contentsOf: Self.repository.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
        let lines = document.split(separator: "\n", omittingEmptySubsequences: false).count
        #expect(lines <= 150, "docs/architecture.md has \(lines) lines")
    }

    /// The command is a thin driver of the library modules (architecture.md): parsing, printing
    /// and exit statuses. What it grows beyond that belongs in a module the tests reach, so its
    /// files stay under 2,000 lines together.
    @Test func theCommandStaysADriver() throws {
        let folder = Self.repository.appendingPathComponent("Sources/blurfarm")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }
        try #require(files.count > 10, "Sources/blurfarm's files were not found: \(files)")
        let lines = try files.reduce(0) { total, file in
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            return total + text.split(separator: "\n", omittingEmptySubsequences: false).count - 1
        }
        #expect(lines < 2000, "Sources/blurfarm has \(lines) lines")
    }
}
