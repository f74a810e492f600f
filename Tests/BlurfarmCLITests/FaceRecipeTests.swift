import BlurfarmCore
import BlurfarmImageIO
import BlurfarmTestSupport
import Foundation
import Testing

/// The face recipe of docs/recipes.md, end to end: jobs/recipes/faces.job finds the face in
/// NASA's portrait of Eileen Collins with blurfarm's detector and redacts it. The face differs
/// from the photo, every pixel away from it is the photo's.
@Suite(.tags(.process), .blocking) struct FaceRecipeTests {
    /// The test photo with a face (Tests/BlurfarmCLITests/faces/README.md).
    static let astronaut = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("faces/astronaut.jpg")

    /// The mean absolute difference of `a` and `b` over `rect`, per colour sample.
    static func difference(_ a: PixelBuffer, _ b: PixelBuffer, in rect: Rect) -> Float {
        var sum: Float = 0
        for y in rect.y..<rect.maxY {
            for x in rect.x..<rect.maxX {
                let d = a[x, y] - b[x, y]
                sum += abs(d.x) + abs(d.y) + abs(d.z)
            }
        }
        return sum / Float(rect.area * 3)
    }

    @Test func theAstronautsFaceIsFoundAndRedactedAndNothingElse() throws {
        let scratch = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let samples = scratch.appendingPathComponent("samples")
        try FileManager.default.createDirectory(at: samples, withIntermediateDirectories: true)
        let recipes = scratch.appendingPathComponent("jobs/recipes")
        try FileManager.default.createDirectory(at: recipes, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: Fixtures.repository.appendingPathComponent("jobs/recipes/faces.job"), to: recipes.appendingPathComponent("faces.job"))
        let photo = samples.appendingPathComponent("astronaut.jpg").path
        try FileManager.default.copyItem(atPath: Self.astronaut.path, toPath: photo)

        let run = try Blurfarm.run(["run", "jobs/recipes/faces.job"], in: scratch)
        #expect(run.status == 0 && run.stdout.contains("1 written, 0 failed"), "\(run.stdout)\(run.stderr)")
        // Decoded by blurfarm both: the output (JPEG, quality 90) against the photo encoded the
        // same way with no filter, so that only the redaction can differ.
        let reference = scratch.appendingPathComponent("reference.jpg").path
        let plain = try Blurfarm.run(["apply", photo, reference, "--quality", "90", "--workers", "0"])
        #expect(plain.status == 0, "\(plain.stderr)")
        let redacted = try ImageReader.read(scratch.appendingPathComponent("out/recipes/faces/astronaut.jpg").path).pixels
        let source = try ImageReader.read(reference).pixels
        #expect(redacted.rect == source.rect)
        // The middle of her face (CenterFace's box is about 88 x 120 px at 181, 58): redacted.
        let face = Rect(x: 205, y: 95, width: 40, height: 50)
        #expect(Self.difference(redacted, source, in: face) > 0.02, "the face is not redacted")
        // Away from it (the bottom half of the photo, the right third): the photo's pixels.
        for rect in [Rect(x: 0, y: 300, width: 512, height: 212), Rect(x: 340, y: 0, width: 172, height: 300)] {
            #expect(Self.difference(redacted, source, in: rect) == 0, "\(rect) differs from the photo")
        }
    }
}
