import BlurfarmState
import BlurfarmCore
import BlurfarmImageIO
import BlurfarmTestSupport
import Foundation
import Testing

/// The face recipe of docs/recipes.md, end to end: scripts/detect-faces.py (OpenCV 4's Haar
/// cascade, in the venv scripts/setup.sh makes) finds the face in scikit-image's astronaut
/// photo and writes its region file; jobs/recipes/faces.job blurs it. The face's box differs
/// from the photo, every pixel outside every box is the photo's.
@Suite(.tags(.process)) struct FaceRecipeTests {
    /// The venv of the face recipe (`BLURFARM_FACES_VENV`, else `.venv-faces/` of the repository).
    static var python: String {
        (ProcessInfo.processInfo.environment["BLURFARM_FACES_VENV"] ?? Fixtures.repository.appendingPathComponent(".venv-faces").path)
            + "/bin/python"
    }

    /// Runs the recipe's detector in `folder` on the files the shell `globs` give.
    static func detectFaces(in folder: URL, _ globs: [String]) throws -> CommandResult {
        let script = Fixtures.repository.appendingPathComponent("scripts/detect-faces.py").path
        return try Blurfarm.run(
            ["-c", "cd \"$0\" && exec \"$1\" \"$2\" " + globs.joined(separator: " "), folder.path, python, script], shell: true)
    }

    @Test func theAstronautsFaceIsFoundAndBlurredAndNothingElse() throws {
        let scratch = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let samples = scratch.appendingPathComponent("samples")
        try FileManager.default.createDirectory(at: samples, withIntermediateDirectories: true)
        let recipes = scratch.appendingPathComponent("jobs/recipes")
        try FileManager.default.createDirectory(at: recipes, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: Fixtures.repository.appendingPathComponent("jobs/recipes/faces.job"), to: recipes.appendingPathComponent("faces.job"))
        // scikit-image's astronaut (Eileen Collins, NASA: public domain), as a JPEG.
        let photo = samples.appendingPathComponent("astronaut.jpg").path
        let saved = try Blurfarm.run(
            ["-c", "exec \"$0\" -c \"import sys, cv2, skimage.data; cv2.imwrite(sys.argv[1], cv2.cvtColor(skimage.data.astronaut(), cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, 95])\" \"$1\"",
             Self.python, photo], shell: true)
        #expect(saved.status == 0, "\(saved.stderr)")

        let detected = try Self.detectFaces(in: scratch, ["samples/*.jpg"])
        #expect(detected.status == 0 && detected.stdout.contains("samples/astronaut.faces.json: 1 face"), "\(detected.stdout)\(detected.stderr)")
        let file = try JSONSerialization.jsonObject(
            with: Data(contentsOf: samples.appendingPathComponent("astronaut.faces.json"))) as? [String: Any]
        let boxes = (file?["boxes"] as? [[String: Any]]) ?? []
        try #require(boxes.count == 1)
        let box = Rect(
            x: boxes[0]["x"] as? Int ?? 0, y: boxes[0]["y"] as? Int ?? 0, width: boxes[0]["width"] as? Int ?? 0,
            height: boxes[0]["height"] as? Int ?? 0)
        #expect(file?["width"] as? Int == 512 && box.area > 40 * 40, "\(String(describing: file))")
        let validation = try OutputMapTests.validate(samples.appendingPathComponent("astronaut.faces.json").path, schema: "regions.schema.json")
        #expect(validation.status == 0, "\(validation.stderr)")

        let run = try Blurfarm.run(["run", "jobs/recipes/faces.job"], in: scratch)
        #expect(run.status == 0 && run.stdout.contains("1 written, 0 failed"), "\(run.stdout)\(run.stderr)")
        // Decoded by blurfarm both: the output (JPEG, quality 90) against the photo encoded the
        // same way with no filter, so that only the blur can differ.
        let reference = scratch.appendingPathComponent("reference.jpg").path
        let plain = try Blurfarm.run(["apply", photo, reference, "--quality", "90", "--workers", "0"])
        #expect(plain.status == 0, "\(plain.stderr)")
        let blurred = try ImageReader.read(scratch.appendingPathComponent("out/recipes/faces/astronaut.jpg").path).pixels
        let source = try ImageReader.read(reference).pixels
        #expect(blurred.rect == source.rect)
        func difference(in rect: Rect) -> Float {
            var sum: Float = 0
            for y in rect.y..<rect.maxY {
                for x in rect.x..<rect.maxX {
                    let d = blurred[x, y] - source[x, y]
                    sum += abs(d.x) + abs(d.y) + abs(d.z)
                }
            }
            return sum / Float(rect.area)
        }
        // The face's box, shrunk to well inside its ellipse: blurred.
        let inner = Rect(x: box.x + box.width / 4, y: box.y + box.height / 4, width: box.width / 2, height: box.height / 2)
        #expect(difference(in: inner) > 0.01, "the face is not blurred: \(difference(in: inner))")
        // Away from the box (the bottom half of the photo, the right third): the photo's pixels.
        let away = [Rect(x: 0, y: 300, width: 512, height: 212), Rect(x: 340, y: 0, width: 172, height: 300)]
        for rect in away {
            try #require(rect.intersection(box).isEmpty, "the face found at \(box) is not where the astronaut's is")
            #expect(difference(in: rect) == 0, "\(rect) differs from the photo")
        }
    }
}
