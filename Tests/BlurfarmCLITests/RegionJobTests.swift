import BlurfarmCore
import BlurfarmEngine
import BlurfarmImageIO
import BlurfarmKernels
import BlurfarmTestSupport
import Foundation
import Testing

/// A job with regions, run every way the farm renders an image (streamed in bands by workers,
/// whole in a worker, whole in this process, tile by tile for `verify: decode`): the same bytes
/// each way; outside the regions the source's pixels, inside the filter's.
@Suite(.tags(.process), .blocking) struct RegionJobTests {
    static let manifest = """
        job: regions
        inputs: [photos/*]
        tile: 64
        outputs:
          - name: card
            path: out/card/{stem}.png
            filters:
              - gaussian:
                  sigma: 5
              - tint:
                  style: light
            regions:
              - rect:
                  x: 10%
                  y: 60%
                  width: 80%
                  height: 30%
                  corner-radius: 24
                  feather: 3
              - ellipse:
                  x: 90%
                  y: -40
                  width: 200
                  height: 160
                  feather: 6
          - name: keep-subject
            path: out/keep/{stem}.png
            filters:
              - gaussian:
                  sigma: 4
            regions:
              - rect:
                  x: 100
                  y: 50
                  width: 300
                  height: 200
            invert: true
          - name: small
            path: out/small/{stem}.png
            resize:
              width: 300
            filters:
              - gaussian:
                  sigma: 3
            regions:
              - ellipse:
                  x: 25%
                  y: 25%
                  width: 50%
                  height: 50%
                  feather: 4

        """

    /// The `card` variant's regions, as the manifest places them.
    static let card = RegionMask(regions: [
        Region(x: .percent(10), y: .percent(60), width: .percent(80), height: .percent(30), cornerRadius: 24, feather: 3),
        Region(shape: .ellipse, x: .percent(90), y: .pixels(-40), width: .pixels(200), height: .pixels(160), feather: 6),
    ])
    static let keep = RegionMask(
        regions: [Region(x: .pixels(100), y: .pixels(50), width: .pixels(300), height: .pixels(200))], invert: true)

    /// Every way the farm renders an image: streamed in bands by workers, whole in a worker,
    /// whole in this process, tiles of a whole image (`verify: decode`, tiles of 37).
    static let ways: [(config: String, arguments: [String])] = [
        ("whole-image-pixels: 0", ["--workers", "2"]),
        ("whole-image-pixels: 100000000", ["--workers", "2"]),
        ("", ["--workers", "0"]),
        ("whole-image-pixels: 0", ["--workers", "3", "--verify", "decode", "--tile", "37"]),
    ]

    /// A folder with `photos/` holding the corpus's `photos` (by their file names) and
    /// `job.job` holding `manifest`; remove it when done.
    static func jobFolder(_ manifest: String, photos: [String]) throws -> (folder: URL, job: URL) {
        let folder = try Fixtures.temporaryFolder()
        let folderOfPhotos = folder.appendingPathComponent("photos")
        try FileManager.default.createDirectory(at: folderOfPhotos, withIntermediateDirectories: true)
        for photo in photos {
            try FileManager.default.copyItem(
                atPath: Fixtures.corpus(photo), toPath: folderOfPhotos.appendingPathComponent((photo as NSString).lastPathComponent).path)
        }
        let job = folder.appendingPathComponent("job.job")
        try manifest.write(to: job, atomically: true, encoding: .utf8)
        return (folder, job)
    }

    /// Runs `job` every one of ``ways`` (`check(way, report)` after each) and expects the same
    /// files each way; the files of the last, by their paths below `out/`.
    static func runEveryWay(
        _ job: URL, in folder: URL, check: (Int, String) throws -> Void = { _, _ in }
    ) throws -> [String: Data] {
        var runs: [[String: Data]] = []
        for (k, way) in ways.enumerated() {
            let config = folder.appendingPathComponent("farm.conf")
            try "state: state\n\(way.config)\n".write(to: config, atomically: true, encoding: .utf8)
            let report = folder.appendingPathComponent("report-\(k).json").path
            let result = try Blurfarm.run(
                ["run", job.path, "--config", config.path, "--force", "--quiet", "--report", report] + way.arguments)
            #expect(result.status == 0, "\(way): \(result.stderr)")
            try check(k, report)
            runs.append(try StreamedRunTests.outputs(folder))
            if runs.count < ways.count { try FileManager.default.removeItem(at: folder.appendingPathComponent("out")) }
        }
        for (k, run) in runs.enumerated().dropFirst() {
            #expect(Set(run.keys) == Set(runs[0].keys))
            for (path, bytes) in runs[0] { #expect(run[path] == bytes, "\(path): way \(k) differs from the first") }
        }
        return runs.last!
    }

    /// Expects every pixel of `output` outside `mask` (coverage 0) to be `reference`'s, bit for
    /// bit; returns how many are, and how many inside it (coverage 1) differ.
    static func compare(_ output: PixelBuffer, _ reference: PixelBuffer, outside mask: RegionMask) -> (same: Int, changed: Int) {
        #expect(output.rect == reference.rect)
        var same = 0, changed = 0
        for y in 0..<output.rect.height {
            for x in 0..<output.rect.width {
                let c = mask.coverage(x: x, y: y, in: output.rect)
                if c == 0 {
                    guard output[x, y] == reference[x, y] else {
                        Issue.record("(\(x), \(y)) outside the regions is \(output[x, y]), not \(reference[x, y])")
                        return (same, changed)
                    }
                    same += 1
                } else if c == 1, output[x, y] != reference[x, y] {
                    changed += 1
                }
            }
        }
        return (same, changed)
    }

    @Test func everyPathRendersTheSameBytesAndTheSourcePassesThroughOutsideTheRegions() throws {
        let (folder, job) = try Self.jobFolder(
            Self.manifest, photos: ["special/alpha-garbage-under-transparent.png", "special/exif-orientation-6.jpg"])
        defer { try? FileManager.default.removeItem(at: folder) }
        let photos = folder.appendingPathComponent("photos")
        let files = try Self.runEveryWay(job, in: folder) { k, report in
            try Self.expectCopiedTiles(report: report, photos: photos, streamed: k == 0, tile: k == 3 ? 37 : 64)
        }
        #expect(files.count == 6, "\(files.keys.sorted())")
        // Outside every region, the decoded source's pixels, bit for bit; inside, blurred.
        for (stem, variant, mask) in [
            ("alpha-garbage-under-transparent", "card", Self.card), ("exif-orientation-6", "card", Self.card),
            ("alpha-garbage-under-transparent", "keep", Self.keep), ("exif-orientation-6", "keep", Self.keep),
        ] {
            let source = try ImageReader.read(photos.appendingPathComponent(stem + (stem.hasPrefix("exif") ? ".jpg" : ".png")).path).pixels
            let output = try ImageReader.read(folder.appendingPathComponent("out/\(variant)/\(stem).png").path).pixels
            let (untouched, changed) = Self.compare(output, source, outside: mask)
            #expect(untouched > 1000 && changed > 1000, "\(variant)/\(stem): \(untouched) untouched, \(changed) changed")
        }
    }

    /// The report counts the tiles copied from the source, no region reaching them: for the
    /// `card` variant, the tiles of the image's grid (tiles of `tile` pixels) with no pixel
    /// centre inside either region's box, when the image is rendered whole; band by band
    /// (`streamed`: the bands cut the tiles), some but not all of its tiles.
    static func expectCopiedTiles(report: String, photos: URL, streamed: Bool, tile: Int) throws {
        let list = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [[String: Any]]
        let outputs = (list?.first?["outputs"] as? [[String: Any]]) ?? []
        var checked = 0
        for output in outputs where (output["output"] as? String)?.contains("/out/card/") == true {
            let tiles = output["tiles"] as? Int ?? -1, copied = output["tilesCopied"] as? Int ?? -1
            let name = ((output["input"] as? String ?? "") as NSString).lastPathComponent
            let header = try ImageReader.header(ofFile: photos.appendingPathComponent(name).path)
            let image = Rect(width: header.width, height: header.height)
            let grid = TileGrid(bounds: image, tileSize: tile).tiles
            let expected = grid.filter { t in
                !card.regions.contains { region in
                    let b = region.box(in: image)
                    return b.left < Double(t.maxX) - 0.5 && Double(t.x) + 0.5 < b.right
                        && b.top < Double(t.maxY) - 0.5 && Double(t.y) + 0.5 < b.bottom
                }
            }.count
            if streamed {
                #expect(copied > 0 && copied < tiles, "\(name): \(copied) of \(tiles) copied")
            } else {
                #expect(tiles == grid.count && copied == expected, "\(name): \(copied) of \(tiles) copied, not \(expected)")
            }
            checked += 1
        }
        #expect(checked == 2)
        // The inverted variant filters every tile but those wholly inside its rectangle.
        let keep = outputs.filter { ($0["output"] as? String)?.contains("/out/keep/") == true }
        #expect(keep.count == 2 && keep.allSatisfy { ($0["tilesCopied"] as? Int ?? -1) < ($0["tiles"] as? Int ?? 0) })
    }

    /// One filter of a chain placed in regions of its own: a frosted photo whose face box is
    /// blurred further. The same bytes every way; outside the box, the frost the chain computed
    /// (in `Float32`, as chains are), bit for bit; the `frost` variant alone renders in fixed
    /// point (``FilterChain/fixedPointFilter(forSourceChannels:)``), within a level of that.
    @Test func aFiltersOwnRegionsRenderTheSameEveryWayAndOutsideThemTheChainWithoutIt() throws {
        let manifest = """
            job: placed
            inputs: [photos/*]
            tile: 64
            outputs:
              - name: face
                path: out/face/{stem}.png
                filters:
                  - frost:
                      style: light
                  - gaussian:
                      sigma: 8
                      regions:
                        - ellipse:
                            x: 30%
                            y: 20%
                            width: 40%
                            height: 30%
                            feather: 6
              - name: frost
                path: out/frost/{stem}.png
                filters:
                  - frost:
                      style: light

            """
        let (folder, job) = try Self.jobFolder(manifest, photos: ["special/exif-orientation-6.jpg"])
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try Self.runEveryWay(job, in: folder).count == 2)
        let face = try ImageReader.read(folder.appendingPathComponent("out/face/exif-orientation-6.png").path).pixels
        let frost = try ImageReader.read(folder.appendingPathComponent("out/frost/exif-orientation-6.png").path).pixels
        let mask = RegionMask(regions: [
            Region(shape: .ellipse, x: .percent(30), y: .percent(20), width: .percent(40), height: .percent(30), feather: 6)
        ])
        // The frost in Float32 over the decoded photo, written as the encoder writes it.
        let photo = try ImageReader.read(folder.appendingPathComponent("photos/exif-orientation-6.jpg").path).pixels
        let chain = FilterChain(filters: [FrostBlur(style: .light)], edge: .clamp)
        #expect(chain.fixedPointFilter(forSourceChannels: 3) != nil)
        let frosted = Renderer(chain: chain, tileSize: 64, executor: ThreadedTileExecutor(threads: 2)).render(photo)
        let levels = AnyPixels.uninitialized(frosted.rect, channels: 3, format: .uint8)
        levels.store(frosted, in: frosted.rect, background: .zero)
        let inFloat32 = levels.floats(in: levels.rect)
        let (same, blurred) = Self.compare(face, inFloat32, outside: mask)
        #expect(same > 100_000 && blurred > 10_000, "\(same) the frost's, \(blurred) blurred further")
        #expect(frost.rect == inFloat32.rect)
        var worst: Float = 0
        for y in 0..<frost.rect.height {
            for x in 0..<frost.rect.width { worst = max(worst, ((frost[x, y] - inFloat32[x, y]) * 255).max(), ((inFloat32[x, y] - frost[x, y]) * 255).max()) }
        }
        #expect(worst <= 1.001, "the fixed-point frost is \(worst) levels from the Float32 one")
        // The plan says where the filter applies.
        let check = try Blurfarm.run(["check", job.path])
        #expect(check.stdout.contains("frost "), "\(check.stdout)")
        #expect(check.stdout.contains("gaussian sigma=8 regions=[ellipse x=30% y=20% width=40% height=30% feather=6]"), "\(check.stdout)")
        #expect(!check.stderr.contains("warning"), "\(check.stderr)")
        // A filter's region beyond the image is warned about at the filter.
        try manifest.replacingOccurrences(of: "x: 30%", with: "x: 90%").write(to: job, atomically: true, encoding: .utf8)
        let beyond = try Blurfarm.run(["check", job.path])
        #expect(beyond.status == 0)
        #expect(beyond.stderr.contains(
            job.path + ":10:9: warning: region 1 of filter 2 ('gaussian') of output 'face' reaches beyond its 853x1280 image ("),
            "\(beyond.stderr)")
    }

    @Test func checkWarnsAtARegionThatReachesBeyondTheImage() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let photos = folder.appendingPathComponent("photos")
        try FileManager.default.createDirectory(at: photos, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: Fixtures.corpus("special/exif-orientation-6.jpg"), toPath: photos.appendingPathComponent("turned.jpg").path)
        let job = folder.appendingPathComponent("job.job")
        try Self.manifest.write(to: job, atomically: true, encoding: .utf8)
        let result = try Blurfarm.run(["check", job.path])
        #expect(result.status == 0, "\(result.stderr)")
        // The ellipse at 90% is clipped; the rectangle at (100, 50) of 'keep-subject' fits the
        // upright 853x1280 image; nothing of 'small' reaches out.
        let warning = result.stderr.split(separator: "\n").first { $0.contains("warning: region") }.map(String.init) ?? ""
        #expect(warning.hasPrefix(job.path + ":20:9: warning: region 2 of output 'card' reaches beyond its 853x1280 image ("))
        #expect(warning.hasSuffix("out/card/turned.png): it is clipped"), "\(result.stderr)")
        // The plan says where each variant's filters apply.
        #expect(result.stdout.contains("edge clamp, colour gamma; in 2 regions; "), "\(result.stdout)")
        #expect(result.stdout.contains("edge clamp, colour gamma; everywhere but 1 region; "), "\(result.stdout)")
        #expect(!result.stderr.contains("region 1 of output 'card'") && !result.stderr.contains("'keep-subject'")
            && !result.stderr.contains("'small'"), "\(result.stderr)")
    }
}
