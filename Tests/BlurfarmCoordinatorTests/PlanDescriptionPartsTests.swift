import BlurfarmKernels
import BlurfarmManifest
import BlurfarmTestSupport
import BlurfarmCore
import Foundation
import Testing
@testable import BlurfarmCoordinator

/// `check` describes a plan's inputs in parts, several at once, and prints them as they come
/// (``PlanDescription/describe(_:configuration:registry:atOnce:threads:each:)``): whatever the
/// parts, the description and its warnings are those of one input at a time.
@Suite struct PlanDescriptionPartsTests {
    @Test func aPlanDescribedInPartsIsThePlanDescribedOneInputAtATime() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("described-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/in", withIntermediateDirectories: true)
        // Photos of three sizes and, every seventh, a file that is no image (its header cannot be read).
        let photos = ["exif-orientation-6.jpg", "display-p3.jpg", "cmyk.jpg"].map { Corpus.path("special/" + $0) }
        for index in 0..<600 {
            let path = root + "/in/" + String(format: "p%04d.jpg", index)
            if index % 7 == 3 {
                _ = FileManager.default.createFile(atPath: path, contents: Data("no image".utf8))
            } else {
                try FileManager.default.linkItem(atPath: photos[index % 3], toPath: path)
            }
        }
        // A region that reaches beyond the smaller photos: a warning for each of their outputs.
        let manifest = root + "/parts.job"
        try """
            job: parts
            inputs: [in/*.jpg]
            outputs:
              - name: card
                path: out/{stem}.png
                filters:
                  - gaussian:
                      sigma: 4
                regions:
                  - rect:
                      x: 0
                      y: 0
                      width: 900
                      height: 100
              - name: small
                path: small/{stem}.jpg
                resize:
                  width: 32

            """.write(toFile: manifest, atomically: true, encoding: .utf8)
        let loader = JobLoader(configuration: FarmConfiguration(), registry: .builtIn, reads: [])
        let plan = try loader.plan(fileAtPath: manifest).get()
        #expect(plan.inputs.count == 600)
        /// The description in parts of `atOnce` over `threads`, and how many parts were handed on.
        func described(atOnce: Int, threads: Int) throws -> (json: String, warnings: [String], handedOn: Int) {
            var (inputs, handedOn) = ([PlanDescription.Input](), 0)
            let warnings = PlanDescription.describe(
                plan, configuration: loader.configuration, registry: loader.registry, atOnce: atOnce, threads: threads
            ) {
                inputs += $0
                handedOn += 1
            }
            let description = PlanDescription(job: "parts", manifest: manifest, tile: 512, refused: [], inputs: inputs)
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            let json = String(decoding: try encoder.encode(description), as: UTF8.self)
            return (json, warnings.map { "\($0.message) at \(String(describing: $0.location))" }, handedOn)
        }
        let one = try described(atOnce: 1, threads: 1)
        #expect(one.handedOn == 600)
        #expect(one.json.contains("\"error\"") && one.json.contains("\"width\":32"))
        #expect(one.warnings.count > 100, "\(one.warnings.prefix(2))")
        for (atOnce, threads) in [(4096, 2), (512, 2), (300, 3), (599, 1)] {
            let parts = try described(atOnce: atOnce, threads: threads)
            // Compared whole, shown by their sizes (a plan of 600 inputs).
            let (sameDescription, sameWarnings) = (parts.json == one.json, parts.warnings == one.warnings)
            #expect(sameDescription, "\(atOnce) at once on \(threads) threads: \(parts.json.count) bytes, not \(one.json.count)")
            #expect(sameWarnings, "\(atOnce) at once on \(threads) threads: \(parts.warnings.count) warnings, not \(one.warnings.count)")
        }
        // The text `check` prints as it describes is the headline, then each input's lines, as
        // the description made whole says them; its errors theirs. And `check --json`, made as
        // it describes, is the description made whole encoded, twice over (two jobs).
        var wholeInputs: [PlanDescription.Input] = []
        let wholeWarnings = PlanDescription.describe(plan, configuration: loader.configuration, registry: loader.registry) {
            wholeInputs += $0
        }
        let whole = PlanDescription(
            job: plan.job.name, manifest: plan.manifestPath, tile: plan.tileSize, refused: plan.refused, inputs: wholeInputs)
        var json: [UInt8] = []
        var told: [(warnings: [Diagnostic], errors: [String])] = []
        try PlanDescription.json(of: [plan, plan], configuration: loader.configuration, registry: loader.registry, { json += $0 }) {
            told.append(($0, $1))
        }
        #expect(json == Array(try RunReport.json([whole, whole])) + Array("\n".utf8))
        #expect(told.count == 2 && told.allSatisfy { $0.errors == whole.inputs.flatMap(\.errors) && $0.warnings.map(\.message) == wholeWarnings.map(\.message) })
        var printed: [String] = []
        let (warnings, errors) = PlanDescription.text(of: plan, configuration: loader.configuration, registry: loader.registry) {
            printed.append($0)
        }
        #expect(printed.joined(separator: "\n") == ([PlanDescription.headline(of: plan)] + whole.inputs.flatMap(\.lines)).joined(separator: "\n"))
        #expect(errors == whole.inputs.flatMap(\.errors) && errors.count == 86)
        #expect(warnings.map(\.message) == wholeWarnings.map(\.message))
    }
}
