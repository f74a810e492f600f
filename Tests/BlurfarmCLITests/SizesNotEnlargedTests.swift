import BlurfarmCoordinator
import BlurfarmCore
import BlurfarmEngine
import BlurfarmImageIO
import BlurfarmKernels
import BlurfarmManifest
import BlurfarmState
import BlurfarmTestSupport
import Foundation
import PropertyBased
import Testing

/// `sizes` never writes a file narrower than its name says: the widths larger than the input
/// are not made (sharp's `withoutEnlargement`), said by `check`, the report and `check
/// --status`; `upscale: true` enlarges; `--prune` removes a recorded file at a size the input
/// no longer reaches.
@Suite(.tags(.process), .blocking) struct SizesNotEnlargedTests {
    /// A `width` × `height` PNG of a gradient at `path`.
    static func writeImage(_ path: String, width: Int, height: Int) throws {
        let pixels = PixelBuffer(rect: Rect(width: width, height: height), channels: 3)
        for y in 0..<height {
            for x in 0..<width {
                pixels[x, y] = SIMD4(Float(x) / Float(width), Float(y) / Float(height), 0.5, 1)
            }
        }
        try ImageWriter.write(
            pixels, to: path, sourceBitDepth: 8, sourceHadAlpha: false, metadata: nil, options: EncodeOptions())
    }

    static func writeManifest(_ folder: ThumbnailJobTests.Folder, upscale: Bool) throws {
        try """
            job: srcset
            inputs: [in/*.png]
            outputs:
              - name: w
                path: out/{stem}-{size}w.webp
                resize:
                  sizes: [320, 640, 1280]
                  upscale: \(upscale)

            """.write(toFile: folder.manifest, atomically: true, encoding: .utf8)
    }

    /// The report's JSON of a run of the folder's job.
    static func run(_ folder: ThumbnailJobTests.Folder, _ extra: [String] = []) throws -> (CommandResult, [String: Any]) {
        let report = folder.path("report-\(UUID().uuidString).json")
        let result = try Blurfarm.run(["run", folder.manifest, "--config", folder.config, "--report", report] + extra)
        let list = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [[String: Any]]
        return (result, list?.first ?? [:])
    }

    /// The inputs' sizes are kept in the job's records (``KeptSize``) so that a plan with
    /// `sizes` need not read every header, and trusted only while the input's stamp is the
    /// kept one: a width planted for the unchanged input is what `check` plans with (so no
    /// header was read), the input rewritten is read again and the run keeps its width anew.
    /// A garbled widths' file of earlier versions (`input-widths.json`) is not read, and the
    /// run removes it.
    @Test func theInputsWidthsAreKeptWhileTheInputsAreUnchanged() throws {
        let folder = try ThumbnailJobTests.Folder()
        defer { try? FileManager.default.removeItem(at: folder.root) }
        try FileManager.default.removeItem(atPath: folder.path("in/flower.jpg"))
        try Self.writeImage(folder.path("in/a.png"), width: 600, height: 400)
        try Self.writeManifest(folder, upscale: false)
        #expect(try Self.run(folder).0.status == 0)
        let files = FileManager.default.enumerator(atPath: folder.root.path)?.compactMap { $0 as? String } ?? []
        let index = try #require(files.first { $0.hasSuffix("/" + OutputRecords.fileName) })
        let state = folder.root.appendingPathComponent((index as NSString).deletingLastPathComponent).path
        func widths() throws -> [KeptSize] { try OutputRecords(folder: state).sizesPage(after: nil, limit: 10) }
        let first = try widths()
        #expect(first.count == 1 && first.first?.width == 600, "\(first)")
        let check = { try Blurfarm.run(["check", folder.manifest, "--config", folder.config]).stdout }
        let truth = "out/a-1280w.webp  not made: 1280 px is larger than the source (600 px)"

        var planted = try #require(first.first)
        planted.width = 2000
        var batches = [[planted]]
        try OutputRecords(folder: state).keepSizes { batches.popLast() }
        let believed = try check()
        // Planned at 1280 (check itself then reads the header to show the resize).
        #expect(believed.contains("out/a-1280w.webp  resize inside to 600x400") && !believed.contains(truth), "\(believed)")

        try Self.writeImage(folder.path("in/a.png"), width: 600, height: 400)
        #expect(try check().contains(truth))
        let legacy = state + "/" + InputSizes.legacyFileName
        try Data("{".utf8).write(to: URL(fileURLWithPath: legacy))
        #expect(try check().contains(truth))
        #expect(try Self.run(folder).0.status == 0)
        let kept = try widths()
        #expect(kept.count == 1 && kept.first?.width == 600 && kept.first?.stamp != planted.stamp, "\(kept)")
        #expect(!FileManager.default.fileExists(atPath: legacy))
        // A run that changes nothing: the plan's reader closed before the run's writer, which
        // leaves no log behind the index.
        #expect(try Self.run(folder).0.status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: state).sorted() == ["lock", OutputRecords.fileName])
    }

    @Test func aSixHundredPixelInputGetsOnlyTheSizesItReaches() throws {
        let folder = try ThumbnailJobTests.Folder()
        defer { try? FileManager.default.removeItem(at: folder.root) }
        try FileManager.default.removeItem(atPath: folder.path("in/flower.jpg"))
        try Self.writeImage(folder.path("in/a.png"), width: 600, height: 400)
        try Self.writeManifest(folder, upscale: false)

        let check = try Blurfarm.run(["check", folder.manifest, "--config", folder.config])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout.contains("1 input, 1 output"), "\(check.stdout)")
        #expect(check.stdout.contains("out/a-320w.webp  resize inside to 320x213"), "\(check.stdout)")
        for size in [640, 1280] {
            #expect(
                check.stdout.contains(
                    "out/a-\(size)w.webp  not made: \(size) px is larger than the source (600 px)"), "\(check.stdout)")
        }
        let json = try Blurfarm.run(["check", folder.manifest, "--config", folder.config, "--json"])
        let plan = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]
        let outputs = ((plan?.first?["inputs"] as? [[String: Any]])?.first?["outputs"] as? [[String: Any]]) ?? []
        #expect(outputs.map { $0["output"] as? String ?? "" }.map { ($0 as NSString).lastPathComponent }
            == ["a-320w.webp", "a-640w.webp", "a-1280w.webp"])
        #expect(outputs[0]["notMade"] == nil && outputs[0]["width"] as? Int == 320)
        #expect((outputs[2]["notMade"] as? String)?.contains("1280 px is larger than the source (600 px)") == true, "\(outputs)")

        let (first, report) = try Self.run(folder)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("2 not enlarged"), "\(first.stdout)")
        let counts = report["counts"] as? [String: Int] ?? [:]
        #expect(counts["written"] == 1 && counts["notEnlarged"] == 2, "\(counts)")
        let notEnlarged = report["notEnlarged"] as? [[String: Any]] ?? []
        #expect(notEnlarged.map { $0["width"] as? Int ?? 0 } == [640, 1280])
        #expect(notEnlarged.allSatisfy { $0["sourceWidth"] as? Int == 600 && $0["variant"] as? String == "w" })
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path("out")) == ["a-320w.webp"])
        #expect(try ImageReader.header(ofFile: folder.path("out/a-320w.webp")).width == 320)

        // Not missing: the next run has nothing to do, and says so in --status.
        let (_, second) = try Self.run(folder)
        #expect((second["counts"] as? [String: Int])?["written"] == 0)
        let status = try Blurfarm.run(["check", folder.manifest, "--config", folder.config, "--status"])
        #expect(status.stdout.contains("up to date"), "\(status.stdout)")
        #expect(status.stdout.contains("not made (larger than the source)  \(folder.path("out/a-1280w.webp"))")
            || status.stdout.contains("not made (larger than the source)  out/a-1280w.webp"), "\(status.stdout)")
        #expect(!status.stdout.contains("missing"), "\(status.stdout)")

        // upscale: true keeps the enlargement, every file at its width.
        try Self.writeManifest(folder, upscale: true)
        let (enlarged, third) = try Self.run(folder)
        #expect(enlarged.status == 0, "\(enlarged.stderr)")
        #expect((third["counts"] as? [String: Int])?["written"] == 3, "\(third)")
        for size in [320, 640, 1280] {
            #expect(try ImageReader.header(ofFile: folder.path("out/a-\(size)w.webp")).width == size)
        }

        // Back without upscale: the enlarged files are recorded at sizes the input does not
        // reach; --status says --prune removes them, and it does (the 320 stays).
        try Self.writeManifest(folder, upscale: false)
        let before = try Blurfarm.run(["check", folder.manifest, "--config", folder.config, "--status"])
        #expect(before.stdout.split(separator: "\n").filter { $0.hasPrefix("  would be pruned") }.count == 2, "\(before.stdout)")
        // Those two are listed once, as pruned, and not also as sizes not made.
        #expect(!before.stdout.contains("not made"), "\(before.stdout)")
        let (pruning, fourth) = try Self.run(folder, ["--prune", "--force-prune"])
        #expect(pruning.status == 0, "\(pruning.stderr)")
        #expect((fourth["pruned"] as? [String])?.count == 2, "\(fourth)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path("out")) == ["a-320w.webp"])

        // The input grows: its larger sizes appear.
        try Self.writeImage(folder.path("in/a.png"), width: 1300, height: 400)
        let (grown, fifth) = try Self.run(folder)
        #expect(grown.status == 0, "\(grown.stderr)")
        #expect((fifth["counts"] as? [String: Int])?["written"] == 3, "\(fifth)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path("out")).sorted()
            == ["a-1280w.webp", "a-320w.webp", "a-640w.webp"])
    }

    /// For any source width and any sizes: the plan makes exactly the sizes the source
    /// reaches, lists the rest as not enlarged, and the one decode the runner asks for them
    /// (``ImageReader/thumbnails(_:widths:upscale:sharpen:pixelLimit:memoryLimit:allocator:confinement:)``)
    /// gives each its width exactly.
    @Test func everyPlannedSizeIsItsRealWidth() async throws {
        let root = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        await propertyCheck(
            count: 30, input: Gen.int(in: 1...700), Gen.int(in: 1...60), Gen.uint64()
        ) { width, height, seed in
            var rng = SplitMix(seed: seed)
            let sizes = Set((0..<Int(1 + rng.next() % 4)).map { _ in Int(1 + rng.next() % 900) }).sorted()
            let folder = root.appendingPathComponent("\(seed)-\(width)x\(height)").path
            do {
                try FileManager.default.createDirectory(atPath: folder + "/in", withIntermediateDirectories: true)
                try Self.writeImage(folder + "/in/a.png", width: width, height: height)
                let manifest = folder + "/p.job"
                try """
                    job: p
                    inputs: [in/*.png]
                    outputs:
                      - name: w
                        path: out/{stem}-{size}.png
                        resize:
                          sizes: [\(sizes.map(String.init).joined(separator: ", "))]

                    """.write(toFile: manifest, atomically: true, encoding: .utf8)
                let spec = try JobDecoder.decode(fileAtPath: manifest, filters: FilterRegistry.builtIn.descriptors).get()
                let plan = try JobPlanner.plan(spec, manifestPath: manifest, defaultTile: 512).get()
                let input = plan.inputs[0]
                let made = input.outputs.map { $0.variant.resize!.width! }
                #expect(made == sizes.filter { $0 <= width }, "\(width): \(sizes)")
                #expect(input.notEnlarged.map(\.width) == sizes.filter { $0 > width })
                #expect(input.outputs.allSatisfy { $0.path.hasSuffix("-\($0.variant.resize!.width!).png") })
                #expect(input.outputs.allSatisfy { $0.largestSize == made.last })
                guard !made.isEmpty else { return }
                let images = try ImageReader.thumbnails(input.path, widths: made, upscale: false)
                #expect(images.map(\.pixels.rect.width) == made, "\(width): \(sizes)")
            } catch {
                Issue.record("\(width)x\(height) \(sizes): \(error)")
            }
        }
    }

    /// An input replaced by a narrower one between the plan and the run: the size it no longer
    /// reaches is not written (its name would lie), the others are.
    @Test func anInputNarrowedAfterThePlanWritesNoSizeItNoLongerReaches() throws {
        let root = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(atPath: root.path + "/in", withIntermediateDirectories: true)
        try Self.writeImage(root.path + "/in/a.png", width: 700, height: 50)
        let manifest = root.path + "/p.job"
        try """
            job: p
            inputs: [in/*.png]
            outputs:
              - name: w
                path: out/{stem}-{size}.png
                resize:
                  sizes: [320, 640]

            """.write(toFile: manifest, atomically: true, encoding: .utf8)
        let spec = try JobDecoder.decode(fileAtPath: manifest, filters: FilterRegistry.builtIn.descriptors).get()
        let plan = try JobPlanner.plan(spec, manifestPath: manifest, defaultTile: 512).get()
        #expect(plan.outputCount == 2)
        try Self.writeImage(root.path + "/in/a.png", width: 500, height: 50)
        let runner = JobRunner(
            registry: .builtIn, rendering: InProcessRendering(executor: ThreadedTileExecutor(threads: 1)),
            pixelLimit: 1 << 28)
        let outputs = runner.run(plan)
        #expect(outputs.map(\.status) == [.written, .failed], "\(outputs)")
        #expect(outputs[1].failure?.kind == "verification")
        #expect(outputs[1].error?.contains("narrower than 640 px") == true, "\(outputs[1].error ?? "")")
        #expect(try ImageReader.header(ofFile: root.path + "/out/a-320.png").width == 320)
        #expect(!FileManager.default.fileExists(atPath: root.path + "/out/a-640.png"))
    }
}
