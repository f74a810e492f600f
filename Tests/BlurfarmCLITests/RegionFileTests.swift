import BlurfarmState
import BlurfarmCore
import BlurfarmImageIO
import BlurfarmTestSupport
import Foundation
import Testing

/// `regions: {from: "{stem}.regions.json"}`: each input's boxes from a file beside it, as a
/// detector writes them (docs/regions.schema.json). Outside the boxes the source, bit for bit;
/// a changed file makes its input run again; a missing or malformed one fails its input alone,
/// naming the file (and the JSON path); `missing: skip` passes the input through, said.
@Suite(.tags(.process), .blocking) struct RegionFileTests {
    static func manifest(missing: String) -> String {
        """
        job: faces
        inputs: [photos/*.jpg]
        outputs:
          - name: blurred
            path: out/{stem}.png
            filters:
              - gaussian:
                  sigma: 6
            regions:
              from: "{stem}.regions.json"
              missing: \(missing)

        """
    }

    /// A region file of `boxes` (x, y, width, height) measured on a `width` × `height` image.
    static func regionFile(width: Int, height: Int, boxes: [(Int, Int, Int, Int)]) -> String {
        let items = boxes.map { "{\"x\": \($0.0), \"y\": \($0.1), \"width\": \($0.2), \"height\": \($0.3), \"label\": \"face\", \"score\": 0.9}" }
        return "{\"width\": \(width), \"height\": \(height), \"boxes\": [\(items.joined(separator: ", "))]}"
    }

    /// The report's outputs by input file name: status.
    static func run(_ folder: URL) throws -> (CommandResult, [String: String]) {
        let report = folder.appendingPathComponent("report-\(UUID().uuidString).json").path
        let result = try Blurfarm.run(
            ["run", folder.appendingPathComponent("faces.job").path, "--config", folder.appendingPathComponent("farm.conf").path,
             "--report", report])
        let list = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [[String: Any]]
        var statuses: [String: String] = [:]
        for output in (list?.first?["outputs"] as? [[String: Any]]) ?? [] {
            statuses[((output["input"] as? String ?? "") as NSString).lastPathComponent] = output["status"] as? String
        }
        return (result, statuses)
    }

    @Test func eachInputsBoxesFromTheFileBesideIt() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let photos = folder.appendingPathComponent("photos")
        try FileManager.default.createDirectory(at: photos, withIntermediateDirectories: true)
        for name in ["a", "b", "c"] {
            try FileManager.default.copyItem(
                atPath: Fixtures.corpus("photos/mate-GreenMeadow.jpg"), toPath: photos.appendingPathComponent("\(name).jpg").path)
        }
        try "state: state\n".write(to: folder.appendingPathComponent("farm.conf"), atomically: true, encoding: .utf8)
        try Self.manifest(missing: "error").write(to: folder.appendingPathComponent("faces.job"), atomically: true, encoding: .utf8)
        // a: one box (on the image at half its size: the box lands at twice its numbers); b: a box
        // with a negative width; c: none.
        let source = try ImageReader.read(photos.appendingPathComponent("a.jpg").path).pixels
        let (w, h) = (source.rect.width, source.rect.height)
        try Self.regionFile(width: w / 2, height: h / 2, boxes: [(100, 80, 150, 120)])
            .write(to: photos.appendingPathComponent("a.regions.json"), atomically: true, encoding: .utf8)
        try Self.regionFile(width: w, height: h, boxes: [(10, 10, 50, 50), (10, 10, -5, 50)])
            .write(to: photos.appendingPathComponent("b.regions.json"), atomically: true, encoding: .utf8)

        // The files as docs/regions.schema.json says: a's valid, b's not.
        let valid = try OutputMapTests.validate(photos.appendingPathComponent("a.regions.json").path, schema: "regions.schema.json")
        #expect(valid.status == 0, "\(valid.stderr)")
        let invalid = try OutputMapTests.validate(photos.appendingPathComponent("b.regions.json").path, schema: "regions.schema.json")
        #expect(invalid.status != 0)

        let (first, statuses) = try Self.run(folder)
        #expect(first.status == 1, "\(first.stderr)")
        #expect(first.stderr.contains("photos/b.regions.json': $.boxes[1].width: must be a number > 0"), "\(first.stderr)")
        #expect(first.stderr.contains("photos/c.regions.json': no such file: the regions of variant 'blurred'"), "\(first.stderr)")
        #expect(statuses == ["a.jpg": "written"], "\(statuses)")
        // Outside the box the source, bit for bit; inside, blurred.
        let output = try ImageReader.read(folder.appendingPathComponent("out/a.png").path).pixels
        let box = Rect(x: 200, y: 160, width: 300, height: 240)
        var inside = 0
        for y in 0..<h {
            for x in 0..<w {
                if box.contains(Rect(x: x, y: y, width: 1, height: 1)) {
                    if output[x, y] != source[x, y] { inside += 1 }
                } else if output[x, y] != source[x, y] {
                    Issue.record("(\(x), \(y)) outside the box differs from the source")
                    return
                }
            }
        }
        #expect(inside > box.area / 2)

        // Unchanged: up to date (counted, not listed in the report). The box moved: a runs
        // again. `missing: skip`: c is its source, said as a warning; b still fails.
        try Self.manifest(missing: "skip").write(to: folder.appendingPathComponent("faces.job"), atomically: true, encoding: .utf8)
        let (second, again) = try Self.run(folder)
        #expect(second.status == 1 && again["a.jpg"] == nil && again["c.jpg"] == "written", "\(again) \(second.stderr)")
        #expect(second.stderr.contains("photos/c.regions.json': no such file: variant 'blurred' of 'photos/c.jpg' is published unredacted, its source unfiltered (missing: skip)"), "\(second.stderr)")
        let passed = try ImageReader.read(folder.appendingPathComponent("out/c.png").path).pixels
        #expect(passed.firstDifference(from: source) == nil)
        try Self.regionFile(width: w / 2, height: h / 2, boxes: [(10, 10, 20, 20)])
            .write(to: photos.appendingPathComponent("a.regions.json"), atomically: true, encoding: .utf8)
        let (third, moved) = try Self.run(folder)
        #expect(moved["a.jpg"] == "written" && moved["c.jpg"] == nil, "\(moved) \(third.stderr)")

        // A file without boxes (the detector found none): the source, unfiltered, not a word.
        try Self.regionFile(width: w, height: h, boxes: []).write(
            to: photos.appendingPathComponent("b.regions.json"), atomically: true, encoding: .utf8)
        let (fourth, empty) = try Self.run(folder)
        #expect(empty["b.jpg"] == "written" && !fourth.stderr.contains("b.regions.json"), "\(empty) \(fourth.stderr)")
        #expect(try ImageReader.read(folder.appendingPathComponent("out/b.png").path).pixels.firstDifference(from: source) == nil)
        // Inverted, a file without boxes filters everything.
        try Self.manifest(missing: "skip").replacingOccurrences(of: "      missing: skip\n", with: "      missing: skip\n    invert: true\n")
            .write(to: folder.appendingPathComponent("faces.job"), atomically: true, encoding: .utf8)
        let (fifth, inverted) = try Self.run(folder)
        #expect(fifth.status == 0 && inverted["b.jpg"] == "written", "\(inverted) \(fifth.stderr)")
        let everywhere = try ImageReader.read(folder.appendingPathComponent("out/b.png").path).pixels
        #expect(everywhere[w / 2, h / 2] != source[w / 2, h / 2])
    }

    /// `apply --regions FILE` places the file's boxes as `--region` places rectangles: the
    /// same bytes; a file without boxes filters nothing; a malformed one is refused naming
    /// its JSON path.
    @Test func applyTakesARegionFile() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = Fixtures.corpus("photos/mate-GreenMeadow.jpg")
        let header = try ImageReader.header(ofFile: input)
        let file = folder.appendingPathComponent("boxes.json")
        try Self.regionFile(width: header.width, height: header.height, boxes: [(100, 50, 200, 100), (400, 300, 60, 60)])
            .write(to: file, atomically: true, encoding: .utf8)
        func apply(_ output: String, _ more: [String]) throws -> (CommandResult, Data) {
            let path = folder.appendingPathComponent(output).path
            let result = try Blurfarm.run(["apply", input, path, "--filter", "gaussian sigma=4", "--workers", "0"] + more)
            return (result, (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data())
        }
        let fromFile = try apply("f.png", ["--regions", file.path])
        let fromOptions = try apply("o.png", ["--region", "100,50,200,100", "--region", "400,300,60,60"])
        #expect(fromFile.0.status == 0 && fromOptions.0.status == 0, "\(fromFile.0.stderr)")
        #expect(!fromFile.1.isEmpty && fromFile.1 == fromOptions.1)

        try Self.regionFile(width: header.width, height: header.height, boxes: []).write(to: file, atomically: true, encoding: .utf8)
        let none = try apply("n.png", ["--regions", file.path])
        let plain = try apply("p.png", [])
        #expect(none.0.status == 0 && plain.0.status == 0)
        let unfiltered = try Blurfarm.run(["apply", input, folder.appendingPathComponent("u.png").path, "--workers", "0"])
        #expect(unfiltered.status == 0)
        #expect(none.1 == (try Data(contentsOf: folder.appendingPathComponent("u.png"))) && none.1 != plain.1)

        try "{\"width\": \(header.width), \"height\": \(header.height), \"boxes\": [{\"x\": 1, \"y\": \"top\", \"width\": 2, \"height\": 2}]}"
            .write(to: file, atomically: true, encoding: .utf8)
        let bad = try apply("b.png", ["--regions", file.path])
        #expect(bad.0.status != 0 && bad.0.stderr.contains("boxes.json': $.boxes[0].y: must be a number"), "\(bad.0.stderr)")
        // The boxes are placed on the image: not on the larger output of `--edge grow`.
        try Self.regionFile(width: header.width, height: header.height, boxes: [(100, 50, 200, 100)])
            .write(to: file, atomically: true, encoding: .utf8)
        let grown = try apply("g.png", ["--regions", file.path, "--edge", "grow"])
        #expect(grown.0.status == 1 && grown.0.stderr.hasPrefix("blurfarm: error: --regions cannot be used with --edge grow"), "\(grown.0.stderr)")
        #expect(grown.1.isEmpty)
    }

    /// Every way a photo could be published unredacted fails closed: numbers that place
    /// nothing (a feather of inf, nan, -5 or 1e400; a box of 1e20) are refused; a region file
    /// measured on the stored pixels of a turned photo fails its input, naming both sizes, and
    /// the output an earlier run made with other boxes is removed and leaves the map; `missing:
    /// skip` is counted in the summary and the report as published unredacted; `check` warns
    /// when a fixed sigma is too weak for a region's size and when a redacting variant keeps
    /// the metadata.
    @Test func redactionFailsClosed() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = Fixtures.corpus("special/exif-orientation-6.jpg")
        let header = try ImageReader.header(ofFile: input)
        try #require(header.orientation == 6 && header.width < header.height)
        for feather in ["inf", "nan", "-5", "1e400"] {
            let result = try Blurfarm.run([
                "apply", input, folder.appendingPathComponent("f.png").path, "--filter", "gaussian sigma=4", "--region",
                "10,10,100,100", "--regions-feather=\(feather)",
            ])
            #expect(result.status == 64, "\(feather): \(result.stderr)")
        }
        let boxes = folder.appendingPathComponent("boxes.json")
        try Self.regionFile(width: header.width, height: header.height, boxes: [(0, 0, 100, 100)])
            .replacingOccurrences(of: "\"width\": 100", with: "\"width\": 1e20").write(to: boxes, atomically: true, encoding: .utf8)
        let huge = try Blurfarm.run(["apply", input, folder.appendingPathComponent("h.png").path, "--filter", "gaussian sigma=4", "--regions", boxes.path])
        #expect(huge.status != 0 && huge.stderr.contains("$.boxes[0].width: places the box beyond any image"), "\(huge.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("h.png").path))
        // Nor are a detector's boxes placed on the larger output of `--edge grow` (it crashed
        // the engine, and was refused by each worker, before any option said so).
        let grown = try Blurfarm.run(["apply", input, folder.appendingPathComponent("g.png").path, "--redact", "faces", "--edge", "grow"])
        #expect(grown.status == 64 && grown.stderr.contains("--redact faces places its boxes on the image: not with --edge grow\n"), "\(grown.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("g.png").path))

        // A job: the turned photo, its faces file beside it, a map.
        let photos = folder.appendingPathComponent("photos")
        try FileManager.default.createDirectory(at: photos, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: input, toPath: photos.appendingPathComponent("a.jpg").path)
        try FileManager.default.copyItem(atPath: Fixtures.corpus("photos/mate-GreenMeadow.jpg"), toPath: photos.appendingPathComponent("b.jpg").path)
        try "state: state\n".write(to: folder.appendingPathComponent("farm.conf"), atomically: true, encoding: .utf8)
        try (Self.manifest(missing: "skip") + "map: site/map.json\n")
            .write(to: folder.appendingPathComponent("faces.job"), atomically: true, encoding: .utf8)
        let faces = photos.appendingPathComponent("a.regions.json")
        try Self.regionFile(width: header.width, height: header.height, boxes: [(100, 100, 200, 200)]).write(to: faces, atomically: true, encoding: .utf8)
        let (first, firstStatuses) = try Self.run(folder)
        #expect(first.status == 0 && firstStatuses == ["a.jpg": "written", "b.jpg": "written"], "\(firstStatuses) \(first.stderr)")
        #expect(first.stderr.contains("variant 'blurred' of 'photos/b.jpg' is published unredacted"), "\(first.stderr)")
        // A fixed sigma too weak for the face's size: check says what it needs.
        let weak = try Blurfarm.run(["check", folder.appendingPathComponent("faces.job").path, "--config", folder.appendingPathComponent("farm.conf").path])
        #expect(weak.stderr.contains("output 'blurred' blurs its regions with sigma 6, too weak to hide a region 200 pixels across"), "\(weak.stderr)")
        #expect(weak.stderr.contains("it needs sigma 29 or more; 'redact' hides each region at its own size"), "\(weak.stderr)")
        let verbose = try Blurfarm.run([
            "run", folder.appendingPathComponent("faces.job").path, "--config", folder.appendingPathComponent("farm.conf").path,
            "--verbose", "--force",
        ])
        #expect(verbose.stdout.contains("1 published unredacted (no region file: missing: skip)"), "\(verbose.stdout)")
        let reports = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("state/reports").path)
        let reportData = try Data(contentsOf: folder.appendingPathComponent("state/reports/" + reports.sorted().last!))
        let report = try #require(try JSONSerialization.jsonObject(with: reportData) as? [String: Any])
        #expect((report["unredacted"] as? [String])?.count == 1 && (report["unredacted"] as? [String])?.first?.hasSuffix("out/b.png") == true, "\(report["unredacted"] ?? "none")")
        #expect((report["counts"] as? [String: Any])?["unredacted"] as? Int == 1)

        // Measured on the stored pixels (what a detector ignoring EXIF writes): a fails, its
        // earlier output goes, and the map lists only b.
        try Self.regionFile(width: header.height, height: header.width, boxes: [(100, 100, 200, 200)]).write(to: faces, atomically: true, encoding: .utf8)
        let (second, _) = try Self.run(folder)
        #expect(second.status == 1, "\(second.stderr)")
        #expect(second.stderr.contains("the boxes were measured on \(header.height)x\(header.width), the stored pixels of a photo shown \(header.width)x\(header.height) (EXIF orientation 6)"), "\(second.stderr)")
        #expect(second.stderr.contains("out/a.png: removed: made with regions this run could not have"), "\(second.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("out/a.png").path))
        let map = try OutputMapTests.load(folder.appendingPathComponent("site/map.json").path)
        #expect((map["inputs"] as? [[String: Any]])?.compactMap { $0["path"] as? String } == ["../photos/b.jpg"], "\(map)")

        // metadata: keep on a redacting variant: check warns.
        try (Self.manifest(missing: "skip").replacingOccurrences(of: "    regions:\n", with: "    metadata: keep\n    regions:\n"))
            .write(to: folder.appendingPathComponent("faces.job"), atomically: true, encoding: .utf8)
        let check = try Blurfarm.run(["check", folder.appendingPathComponent("faces.job").path, "--config", folder.appendingPathComponent("farm.conf").path])
        #expect(check.stderr.contains("output 'blurred' filters regions and keeps the photo's metadata (metadata: keep)"), "\(check.stderr)")
    }
}
