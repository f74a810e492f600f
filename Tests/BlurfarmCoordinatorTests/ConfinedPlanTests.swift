import BlurfarmCore
import BlurfarmImageIO
import BlurfarmKernels
import BlurfarmManifest
import Foundation
import Testing

@testable import BlurfarmCoordinator

/// A served job's plan reads its files beneath the server's roots (``JobLoader/confinement``):
/// a region file that is a link out of them is not read, its input left out, saying why. (The
/// service's check of the plan's files came after the plan had read them: a region file
/// swapped for a link while the job planned, and back, was read from outside the roots.)
@Suite struct ConfinedPlanTests {
    @Test func aRegionFileLeadingOutOfTheRootsIsNotRead() throws {
        let manifest = """
            job: confined
            inputs: [photos/*.jpg]
            outputs:
              - name: redacted
                path: out/{stem}.png
                filters: [redact]
                regions:
                  from: "{stem}.faces.json"

            """
        let (root, _, _) = try RecipeVersionsTests.plannedJob(photos: ["a"], manifest)
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: "\(root)/outside", withIntermediateDirectories: true)
        try #"{"width": 64, "height": 40, "boxes": [{"x": 1, "y": 1, "width": 50, "height": 30}]}"#
            .write(toFile: "\(root)/outside/boxes.json", atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: "\(root)/job/photos/a.faces.json", withDestinationPath: "\(root)/outside/boxes.json")
        let path = "\(root)/job/job.job"
        let spec = try JobDecoder.decode(fileAtPath: path, filters: FilterRegistry.builtIn.descriptors).get()
        let confined = try JobPlanner.plan(
            spec, manifestPath: path, defaultTile: 512, confinement: RootConfinement(roots: ["\(root)/job"])
        ).get()
        #expect(confined.inputs.isEmpty)
        #expect(confined.refused.count == 1 && confined.refused[0].contains("a.faces.json': leads outside the roots"), "\(confined.refused)")
        // Unconfined (`run`), the link is followed, as any file the job names.
        let followed = try JobPlanner.plan(spec, manifestPath: path, defaultTile: 512).get()
        #expect(followed.refused.isEmpty && followed.inputs.count == 1, "\(followed.refused)")
    }
}
