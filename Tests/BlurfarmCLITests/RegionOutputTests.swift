import BlurfarmCore
import BlurfarmImageIO
import BlurfarmTestSupport
import Foundation
import Testing

/// `output: region`: only the regions' box is written; in PNG the filtered pixels with the
/// coverage as alpha (laid over the source at the box's place, the whole image's blend), in
/// JPEG the box of the blended image. The same bytes every way the farm renders an image.
@Suite(.tags(.process), .blocking) struct RegionOutputTests {
    static func variant(_ name: String, path: String, output: String, x: String = "10%") -> String {
        """
          - name: \(name)
            path: \(path)
            quality: 95
            filters:
              - gaussian:
                  sigma: 6
              - tint:
                  style: light
            regions:
              - rect:
                  x: \(x)
                  y: 60%
                  width: 80%
                  height: 25%
                  corner-radius: 24
                  feather: 2
            output: \(output)

        """
    }

    static let manifest = "job: button\ninputs: [photos/*]\ntile: 64\noutputs:\n"
        + variant("button", path: "out/button/{stem}.png", output: "region")
        + variant("flat", path: "out/flat/{stem}.jpg", output: "region")
        + variant("whole", path: "out/whole/{stem}.png", output: "image")

    /// The regions of every variant, as the manifest places them.
    static let mask = RegionMask(regions: [
        Region(x: .percent(10), y: .percent(60), width: .percent(80), height: .percent(25), cornerRadius: 24, feather: 2)
    ])

    @Test func theBoxAloneIsWrittenTheSameEveryWayAndLaidOverTheSourceIsTheWholeImagesBlend() throws {
        let (folder, job) = try RegionJobTests.jobFolder(Self.manifest, photos: ["special/exif-orientation-6.jpg"])
        defer { try? FileManager.default.removeItem(at: folder) }
        let photos = folder.appendingPathComponent("photos")
        let files = try RegionJobTests.runEveryWay(job, in: folder)
        #expect(files.count == 3, "\(files.keys.sorted())")

        // The upright 853x1280 image; the box holds every pixel whose centre is inside the rectangle.
        let source = try ImageReader.read(photos.appendingPathComponent("exif-orientation-6.jpg").path).pixels
        let box = Self.mask.box(in: source.rect)
        #expect(box == Rect(x: 85, y: 768, width: 683, height: 320), "\(box)")
        let whole = try ImageReader.read(folder.appendingPathComponent("out/whole/exif-orientation-6.png").path).pixels
        let cutout = try ImageReader.read(folder.appendingPathComponent("out/button/exif-orientation-6.png").path)
        #expect(cutout.pixels.rect == Rect(width: box.width, height: box.height) && cutout.pixels.channels == 4)
        // Transparent beyond the rounded corner, opaque inside the feather.
        #expect(cutout.pixels[0, 0].w == 0 && cutout.pixels[box.width - 1, box.height - 1].w == 0)
        #expect(cutout.pixels[box.width / 2, box.height / 2].w == 1)
        // Premultiplied p with alpha a over the opaque source s: p + s (1 - a), the blend.
        var worst: Float = 0
        for y in 0..<box.height {
            for x in 0..<box.width {
                let p = cutout.pixels[x, y], s = source[box.x + x, box.y + y], w = whole[box.x + x, box.y + y]
                let over = SIMD3(p.x, p.y, p.z) + SIMD3(s.x, s.y, s.z) * (1 - p.w)
                let c = Float(Self.mask.coverage(x: box.x + x, y: box.y + y, in: source.rect))
                #expect(abs(p.w - c) <= 0.5 / 255 + 1e-6, "(\(x), \(y)): alpha \(p.w), coverage \(c)")
                let d = over - SIMD3(w.x, w.y, w.z)
                worst = max(worst, abs(d.x), abs(d.y), abs(d.z))
            }
        }
        // 8-bit samples each way (the cutout's straight colour, its alpha and the blend).
        #expect(worst <= 2.01 / 255, "laid over the source, the cutout is \(worst * 255) levels from the blend")

        // JPEG has no alpha: the box of the blended image, as the whole image has it.
        let flat = try ImageReader.read(folder.appendingPathComponent("out/flat/exif-orientation-6.jpg").path).pixels
        #expect(flat.rect == Rect(width: box.width, height: box.height) && flat.channels == 3)
        var sum: Float = 0
        for y in 0..<box.height {
            for x in 0..<box.width {
                let d = flat[x, y] - whole[box.x + x, box.y + y]
                sum += abs(d.x) + abs(d.y) + abs(d.z)
            }
        }
        let mean = sum / Float(box.area * 3) * 255
        #expect(mean < 1.5, "the JPEG's box is \(mean) levels from the whole image's, on average")

        // `apply --region-only` writes the same file, one image or many (`-o`).
        let filters = ["--filter", "gaussian sigma=6", "--filter", "tint style=light", "--region", "10%,60%,80%,25%,24,2"]
        let one = folder.appendingPathComponent("one.png").path
        let applied = try Blurfarm.run(["apply", photos.appendingPathComponent("exif-orientation-6.jpg").path, one, "--region-only"] + filters)
        #expect(applied.status == 0, "\(applied.stderr)")
        #expect(FileManager.default.contents(atPath: one) == files["button/exif-orientation-6.png"])
        let many = try Blurfarm.run(
            ["apply", photos.appendingPathComponent("exif-orientation-6.jpg").path, "-o", folder.path + "/many/{stem}.{ext}", "--region-only"] + filters)
        #expect(many.status == 0, "\(many.stderr)")
        #expect(FileManager.default.contents(atPath: folder.path + "/many/exif-orientation-6.jpg") != nil)
        let manyBox = try ImageReader.header(ofFile: folder.path + "/many/exif-orientation-6.jpg")
        #expect(manyBox.width == box.width && manyBox.height == box.height)
        for (extra, message) in [
            ([String](), "--region-only writes the regions' box: give --region or --regions (with boxes)"),
            (["--region", "0,0,10,10", "--invert-regions"], "--region-only writes the regions' box: not with --invert-regions"),
        ] {
            let refused = try Blurfarm.run(
                ["apply", photos.appendingPathComponent("exif-orientation-6.jpg").path, one, "--region-only", "--filter", "gaussian sigma=2"] + extra)
            #expect(refused.status != 0 && refused.stderr.contains(message), "\(refused.stderr)")
        }
    }

    @Test func regionsOutsideTheImageFailThatOutputAloneAndCheckSaysSo() throws {
        let (folder, job) = try RegionJobTests.jobFolder(
            "job: outside\ninputs: [photos/*]\noutputs:\n"
                + Self.variant("beyond", path: "out/beyond/{stem}.png", output: "region", x: "120%")
                + Self.variant("button", path: "out/button/{stem}.png", output: "region"),
            photos: ["special/exif-orientation-6.jpg"])
        defer { try? FileManager.default.removeItem(at: folder) }
        let check = try Blurfarm.run(["check", job.path])
        #expect(check.status != 0)
        #expect(check.stderr.contains(
            "beyond: 'output: region': every region lies outside the 853x1280 image, so there is no box to write"), "\(check.stderr)")
        #expect(check.stdout.contains("in 1 region; only their box, 683x320 at (85, 768), the coverage its alpha; "), "\(check.stdout)")
        for workers in ["0", "2"] {
            let report = folder.appendingPathComponent("report-\(workers).json").path
            let config = folder.appendingPathComponent("farm.conf")
            try "state: state\nwhole-image-pixels: 100000000\n".write(to: config, atomically: true, encoding: .utf8)
            let run = try Blurfarm.run(
                ["run", job.path, "--config", config.path, "--workers", workers, "--force", "--quiet", "--report", report])
            #expect(run.status == 1, "\(run.stderr)")
            #expect(run.stderr.contains("out/beyond/exif-orientation-6.png: 'output: region': every region lies outside"), "\(run.stderr)")
            let list = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [[String: Any]]
            let outputs = (list?.first?["outputs"] as? [[String: Any]]) ?? []
            let beyond = outputs.first { ($0["output"] as? String)?.contains("/out/beyond/") == true }
            #expect((beyond?["error"] as? [String: Any])?["kind"] as? String == "regions", "\(outputs)")
            #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("out/beyond/exif-orientation-6.png").path))
            #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("out/button/exif-orientation-6.png").path))
            try? FileManager.default.removeItem(at: folder.appendingPathComponent("out"))
        }
    }
}
