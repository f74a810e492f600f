import BlurfarmState
import BlurfarmCoordinator
import BlurfarmCore
import BlurfarmImageIO
import BlurfarmTestSupport
import Foundation
import Testing

/// The output map (`map:`, `run --map`; docs/json.md): after every run it lists exactly the
/// outputs up to date on disk, with their real size and bytes, valid against
/// docs/output-map.schema.json; a run that changes nothing leaves it byte for byte; each
/// input's placeholder decodes to the input's mean colour.
@Suite(.tags(.process), .blocking) struct OutputMapTests {
    typealias JobFolder = IncrementalRunTests.JobFolder

    /// A job of 3 photos and 2 generated images (40 and 47 pixels wide): a srcset variant at
    /// two sizes below every input's width (WebP) and a blurred backdrop (JPEG), its map in `site/`.
    static func makeJob(map: String? = "site/images.json") throws -> JobFolder {
        let job = try JobFolder.make(photos: 3, generated: 2)
        let text = """
            job: site
            inputs: [in/*.jpg, in/*.ppm]
            outputs:
              - name: srcset
                path: out/{stem}-{size}w.webp
                resize:
                  sizes: [16, 32]
              - name: backdrop
                path: out/backdrop/{stem}.jpg
                filters:
                  - gaussian:
                      sigma: 3

            """ + (map.map { "map: \($0)\n" } ?? "")
        try text.write(toFile: job.manifest, atomically: true, encoding: .utf8)
        return job
    }

    /// ``makeJob(map:)`` run once: the job, its map's path and bytes.
    static func firstRun() throws -> (job: JobFolder, map: String, written: Data) {
        let job = try makeJob()
        let (first, _) = try job.run()
        #expect(first.status == 0, "\(first.stderr)")
        let map = job.path("site/images.json")
        return (job, map, try Data(contentsOf: URL(fileURLWithPath: map)))
    }

    /// The stamp the records of ``firstRun()``'s job keep of its map (``OutputMapStamp``), read
    /// and kept through a fresh handle on the records, as another run would.
    struct KeptStamp {
        let folder: String
        let key: String

        init(_ job: JobFolder, map: String) throws {
            folder = try #require(IncrementalRunTests.recordsFolder(job))
            key = RealPath.resolveFolder(of: map)
        }

        func read() throws -> OutputMapStamp? { try OutputRecords(folder: folder).mapStamp(at: key) }
        func keep(_ stamp: OutputMapStamp) throws { try OutputRecords(folder: folder).keep(stamp, at: key) }
    }

    /// A run of `job` that must succeed and write no output.
    static func runWritingNothing(_ job: JobFolder, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws {
        let (result, report) = try job.run()
        #expect(result.status == 0 && report.outputs("written").isEmpty, "\(result.stderr)", sourceLocation: sourceLocation)
    }

    /// The map at `path`, parsed.
    static func load(_ path: String) throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// Every output the map lists: its absolute path, and the entry.
    static func outputs(of map: [String: Any], folder: String) -> [(path: String, entry: [String: Any], input: String)] {
        var all: [(String, [String: Any], String)] = []
        for input in map["inputs"] as? [[String: Any]] ?? [] {
            for output in input["outputs"] as? [[String: Any]] ?? [] {
                let path = URL(fileURLWithPath: folder).appendingPathComponent(output["path"] as? String ?? "").standardized.path
                all.append((path, output, input["path"] as? String ?? ""))
            }
        }
        return all
    }

    /// The image files under `out/`, absolute.
    static func filesOnDisk(_ job: JobFolder) -> Set<String> {
        Set(IncrementalRunTests.outputTree(job).filter { !$0.hasSuffix("/") }.map {
            URL(fileURLWithPath: job.path("out/\($0)")).standardized.path
        })
    }

    /// Whether the file at `path` is valid against the schema `docs/<schema>` (Python's
    /// jsonschema; the output map's by default), with its message.
    static func validate(_ path: String, schema name: String = "output-map.schema.json") throws -> CommandResult {
        let schema = Fixtures.repository.appendingPathComponent("docs/" + name).path
        let script = """
            import json, sys, jsonschema
            schema = json.load(open(sys.argv[1]))
            jsonschema.Draft202012Validator.check_schema(schema)
            jsonschema.Draft202012Validator(schema).validate(json.load(open(sys.argv[2])))
            """
        return try Blurfarm.run(["-c", "exec python3 -c \"$0\" \"$1\" \"$2\"", script, schema, path], shell: true)
    }

    /// Checks that the map of `job` lists exactly the files under `out/`, each with its real
    /// width, height, bytes and format, its variant and size, and that it is valid.
    static func expectMapMatchesDisk(_ job: JobFolder, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws {
        let mapPath = job.path("site/images.json")
        let map = try load(mapPath)
        let listed = outputs(of: map, folder: job.path("site"))
        #expect(Set(listed.map(\.path)) == filesOnDisk(job), sourceLocation: sourceLocation)
        #expect(listed.count == Set(listed.map(\.path)).count, "an output listed twice", sourceLocation: sourceLocation)
        for (path, entry, _) in listed {
            let header = try ImageReader.header(ofFile: path)
            let bytes = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
            #expect(entry["width"] as? Int == header.width && entry["height"] as? Int == header.height, "\(path)", sourceLocation: sourceLocation)
            #expect(entry["bytes"] as? Int == bytes, "\(path)", sourceLocation: sourceLocation)
            let webp = path.hasSuffix(".webp")
            #expect(entry["format"] as? String == (webp ? "webp" : "jpeg"), sourceLocation: sourceLocation)
            #expect(entry["variant"] as? String == (webp ? "srcset" : "backdrop"), sourceLocation: sourceLocation)
            // The size it came from is the one in its name, and its width.
            let size = entry["size"] as? Int
            #expect(webp ? path.hasSuffix("-\(size ?? -1)w.webp") : size == nil, "\(path)", sourceLocation: sourceLocation)
            if let size, webp { #expect(header.width == size, "\(path)", sourceLocation: sourceLocation) }
        }
        let validation = try validate(mapPath)
        #expect(validation.status == 0, "\(validation.stderr)", sourceLocation: sourceLocation)
    }

    @Test func theMapListsExactlyTheFilesOnDiskAfterRunsDeletionsAndPrunes() throws {
        let job = try Self.makeJob()
        defer { try? FileManager.default.removeItem(at: job.root) }
        let (first, _) = try job.run()
        #expect(first.status == 0, "\(first.stderr)")
        try Self.expectMapMatchesDisk(job)
        let map = try Self.load(job.path("site/images.json"))
        #expect(map["version"] as? Int == 1 && map["job"] as? String == "site")
        let inputs = try #require(map["inputs"] as? [[String: Any]])
        #expect(inputs.map { $0["path"] as? String } == ["../in/gen0.ppm", "../in/gen1.ppm", "../in/photo0.jpg", "../in/photo1.jpg", "../in/photo2.jpg"])
        #expect(inputs.allSatisfy { ($0["outputs"] as? [Any])?.count == 3 })
        #expect(Self.filesOnDisk(job).count == 15)
        let written = try Data(contentsOf: URL(fileURLWithPath: job.path("site/images.json")))

        // Nothing changed: the same bytes (and the file is not even rewritten).
        let before = try FileManager.default.attributesOfItem(atPath: job.path("site/images.json"))[.modificationDate] as? Date
        let (second, secondReport) = try job.run()
        #expect(second.status == 0 && secondReport.outputs("written").isEmpty, "\(second.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: job.path("site/images.json"))) == written)
        #expect(try FileManager.default.attributesOfItem(atPath: job.path("site/images.json"))[.modificationDate] as? Date == before)

        // An output deleted is written again: the same file, the same map.
        try FileManager.default.removeItem(atPath: job.path("out/photo1-32w.webp"))
        let (third, thirdReport) = try job.run()
        #expect(third.status == 0 && thirdReport.outputs("written") == ["out/photo1-32w.webp"], "\(third.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: job.path("site/images.json"))) == written)

        // An input gone and pruned: its outputs and its entry leave the map.
        try FileManager.default.removeItem(atPath: job.path("in/photo2.jpg"))
        let (pruning, pruneReport) = try job.run(["--prune"])
        #expect(pruning.status == 0 && pruneReport.pruned.count == 3, "\(pruning.stderr)")
        try Self.expectMapMatchesDisk(job)
        let pruned = try Self.load(job.path("site/images.json"))
        #expect((pruned["inputs"] as? [[String: Any]])?.map { $0["path"] as? String }.contains("../in/photo2.jpg") == false)

        // An input that now fails to decode: its outputs are no longer up to date, so they are
        // left out (the files of the earlier run stay on disk, as a failed output leaves them).
        try Data("P6\n40 30\n255\nshort".utf8).write(to: URL(fileURLWithPath: job.path("in/gen0.ppm")))
        let (failing, _) = try job.run()
        #expect(failing.status == 1, "\(failing.stderr)")
        let afterFailure = try Self.load(job.path("site/images.json"))
        let listed = Self.outputs(of: afterFailure, folder: job.path("site"))
        #expect(!listed.contains { $0.input == "../in/gen0.ppm" })
        #expect(Set(listed.map(\.path)) == Self.filesOnDisk(job).filter { !$0.contains("/gen0") })
        #expect(try Self.validate(job.path("site/images.json")).status == 0)
    }

    /// The photo folder moved away (an unmounted disk) and brought back: the run that cannot see
    /// it exits 1, refuses to prune, and leaves the map byte for byte as it was, with its time
    /// (a site build in between publishes every image still); the run after it finds all up to
    /// date. With `--force-prune` (the inputs are really gone) the map is written without them.
    @Test func aMissingInputFolderLeavesTheMapAsItWas() throws {
        let (job, mapPath, written) = try Self.firstRun()
        defer { try? FileManager.default.removeItem(at: job.root) }
        let time = try FileManager.default.attributesOfItem(atPath: mapPath)[.modificationDate] as? Date
        try FileManager.default.moveItem(atPath: job.path("in"), toPath: job.path("away"))
        for arguments in [[], ["--prune"]] {
            let (away, _) = try job.run(arguments)
            #expect(away.status == 1, "\(away.stderr)")
            #expect(away.stderr.contains("site/images.json: the output map is left as it was: input folder"), "\(away.stderr)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: mapPath)) == written)
            #expect(try FileManager.default.attributesOfItem(atPath: mapPath)[.modificationDate] as? Date == time)
        }
        #expect(Self.filesOnDisk(job).count == 15)
        try FileManager.default.moveItem(atPath: job.path("away"), toPath: job.path("in"))
        let (back, backReport) = try job.run()
        #expect(back.status == 0 && backReport.outputs("written").isEmpty, "\(back.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: mapPath)) == written)
        // Really gone: --force-prune removes the outputs, and the map follows.
        try FileManager.default.moveItem(atPath: job.path("in"), toPath: job.path("away"))
        let (forced, forcedReport) = try job.run(["--force-prune"])
        #expect(forcedReport.pruned.count == 15, "\(forced.stderr)")
        #expect(try Self.load(mapPath)["inputs"] as? [Any] == nil || (try Self.load(mapPath)["inputs"] as? [Any])?.isEmpty == true)
    }

    /// A variant renamed (its `path` changed) and a size removed leave outputs no plan makes:
    /// `check --status` lists them as `would be pruned`; a run without `--prune` keeps them;
    /// `--prune` removes them (from the records: a file beside them that blurfarm did not write
    /// stays, and so does its folder), and the map follows.
    @Test func outputsOfARenamedVariantOrARemovedSizeArePruned() throws {
        let job = try Self.makeJob()
        defer { try? FileManager.default.removeItem(at: job.root) }
        let (first, _) = try job.run()
        #expect(first.status == 0, "\(first.stderr)")
        try Data("not blurfarm's".utf8).write(to: URL(fileURLWithPath: job.path("out/backdrop/notes.txt")))
        var manifest = try String(contentsOfFile: job.manifest, encoding: .utf8)
        manifest = manifest.replacingOccurrences(of: "path: out/backdrop/{stem}.jpg", with: "path: out/blurred/{stem}.jpg")
            .replacingOccurrences(of: "sizes: [16, 32]", with: "sizes: [32]")
        try manifest.write(toFile: job.manifest, atomically: true, encoding: .utf8)
        let status = try Blurfarm.run(["check", job.manifest, "--config", job.config, "--status"])
        let wouldGo = status.stdout.split(separator: "\n").filter { $0.trimmingCharacters(in: .whitespaces).hasPrefix("would be pruned") }
        #expect(wouldGo.count == 10, "\(status.stdout)")
        #expect(wouldGo.contains { $0.contains("out/backdrop/photo0.jpg") } && wouldGo.contains { $0.contains("photo0-16w.webp") })
        let (kept, _) = try job.run()
        #expect(kept.status == 0, "\(kept.stderr)")
        #expect(FileManager.default.fileExists(atPath: job.path("out/backdrop/photo0.jpg")))
        // Ten of the twenty recorded outputs: not more than half, so no --force-prune is needed.
        let (pruning, report) = try job.run(["--prune"])
        #expect(pruning.status == 0, "\(pruning.stderr)")
        #expect(report.pruned.count == 10, "\(report.pruned)")
        #expect(!FileManager.default.fileExists(atPath: job.path("out/backdrop/photo0.jpg")))
        #expect(!FileManager.default.fileExists(atPath: job.path("out/photo0-16w.webp")))
        #expect(FileManager.default.fileExists(atPath: job.path("out/backdrop/notes.txt")))
        #expect(FileManager.default.fileExists(atPath: job.path("out/blurred/photo0.jpg")))
        try FileManager.default.removeItem(atPath: job.path("out/backdrop/notes.txt"))
        try Self.expectMapMatchesDisk(job)
        let after = try Blurfarm.run(["check", job.manifest, "--config", job.config, "--status"])
        #expect(!after.stdout.contains("would be pruned"), "\(after.stdout)")
    }

    /// The schema is not vacuous: a map with a wrong type, a missing key or an absolute path
    /// is refused.
    @Test func theSchemaRefusesABrokenMap() throws {
        let job = try Self.makeJob()
        defer { try? FileManager.default.removeItem(at: job.root) }
        _ = try job.run()
        let good = try Self.load(job.path("site/images.json"))
        let broken: [(String, ([String: Any]) -> [String: Any])] = [
            ("width as a string", { map in Self.editFirstOutput(map) { $0["width"] = "160" } }),
            ("no bytes", { map in Self.editFirstOutput(map) { $0["bytes"] = nil } }),
            ("an absolute path", { map in Self.editFirstOutput(map) { $0["path"] = "/srv/a.webp" } }),
            ("an unknown format", { map in Self.editFirstOutput(map) { $0["format"] = "gif" } }),
            ("another version", { map in var m = map; m["version"] = 2; return m }),
        ]
        for (what, edit) in broken {
            let path = job.path("broken.json")
            try JSONSerialization.data(withJSONObject: edit(good)).write(to: URL(fileURLWithPath: path))
            #expect(try Self.validate(path).status != 0, "\(what) passed the schema")
        }
    }

    static func editFirstOutput(_ map: [String: Any], _ change: (inout [String: Any]) -> Void) -> [String: Any] {
        var map = map
        var inputs = map["inputs"] as! [[String: Any]]
        var outputs = inputs[0]["outputs"] as! [[String: Any]]
        change(&outputs[0])
        inputs[0]["outputs"] = outputs
        map["inputs"] = inputs
        return map
    }

    /// The largest difference of two colours' channels.
    static func distance(_ a: SIMD3<Double>, _ b: SIMD3<Double>) -> Double {
        max(abs(a.x - b.x), abs(a.y - b.y), abs(a.z - b.z))
    }

    /// The mean of each colour channel of the image at `path`, in 0...255.
    static func meanColour(_ path: String) throws -> SIMD3<Double> {
        let image = try ImageReader.read(path)
        let rect = image.pixels.rect
        var sum = SIMD3<Double>(0, 0, 0)
        for y in rect.y..<rect.maxY {
            for x in rect.x..<rect.maxX {
                let p = image.pixels[x, y]
                sum += SIMD3(Double(p.x), Double(p.y), Double(p.z))
            }
        }
        return sum / Double(rect.width * rect.height) * 255
    }

    /// Each input's placeholder, its data URI decoded by libvips and its ThumbHash decoded as
    /// the reference decodes it (``ThumbHash/decode(_:)``, checked against the reference in
    /// ThumbHashTests), has the input's mean colour within 8 levels, and the input's size and
    /// orientation.
    @Test func thePlaceholderDecodesToTheInputsMeanColour() throws {
        let job = try Self.makeJob()
        defer { try? FileManager.default.removeItem(at: job.root) }
        let (result, _) = try job.run()
        #expect(result.status == 0, "\(result.stderr)")
        let map = try Self.load(job.path("site/images.json"))
        let inputs = try #require(map["inputs"] as? [[String: Any]])
        try #require(inputs.count == 5)
        for input in inputs {
            let inputPath = URL(fileURLWithPath: job.path("site")).appendingPathComponent(input["path"] as! String).path
            let expected = try Self.meanColour(inputPath)
            let header = try ImageReader.header(ofFile: inputPath)
            #expect(input["width"] as? Int == header.width && input["height"] as? Int == header.height)
            let placeholder = try #require(input["placeholder"] as? [String: String], "\(inputPath)")

            let uri = try #require(placeholder["dataURI"])
            let prefix = "data:image/png;base64,"
            try #require(uri.hasPrefix(prefix))
            let png = job.path("placeholder.png")
            try #require(Data(base64Encoded: String(uri.dropFirst(prefix.count)))).write(to: URL(fileURLWithPath: png))
            let decoded = try ImageReader.header(ofFile: png)
            #expect(uri.utf8.count <= InputPlaceholder.dataURILimit, "\(inputPath): \(uri.utf8.count) bytes")
            #expect(InputPlaceholder.dataURISides.contains(max(decoded.width, decoded.height)))
            #expect((decoded.width >= decoded.height) == (header.width >= header.height), "\(inputPath)")
            let fromURI = try Self.meanColour(png)
            #expect(Self.distance(fromURI, expected) <= 8, "\(inputPath): \(fromURI) vs \(expected)")

            let hashBytes = try #require(Data(base64Encoded: placeholder["thumbHash"] ?? ""))
            let hash = try #require(ThumbHash.decode(Array(hashBytes)))
            var sum = SIMD3<Double>(0, 0, 0)
            for i in stride(from: 0, to: hash.rgba.count, by: 4) {
                sum += SIMD3(Double(hash.rgba[i]), Double(hash.rgba[i + 1]), Double(hash.rgba[i + 2]))
            }
            let fromHash = sum / Double(hash.width * hash.height)
            #expect(Self.distance(fromHash, expected) <= 8, "\(inputPath): \(fromHash) vs \(expected)")
        }
    }

    /// Every placeholder of the corpus (photos, 1080p frames, the special files that decode) is
    /// at most 1 KB as a data URI (32 pixels on its longer side when that fits; 16 for most
    /// photos here, whose ThumbHash 16 samples already carry whole).
    @Test func everyPlaceholderIsUnderOneKilobyte() throws {
        var sides: [Int: Int] = [:]
        for folder in ["photos", "batch1080", "special"] {
            let names = try FileManager.default.contentsOfDirectory(atPath: Fixtures.corpus(folder)).sorted()
            for name in names {
                let path = Fixtures.corpus("\(folder)/\(name)")
                guard let placeholder = try? InputPlaceholder.make(
                    path, inputHash: "unused", pixelLimit: ImageReader.defaultPixelLimit, memoryLimit: ImageReader.usableMemory)
                else { continue }
                #expect(placeholder.dataURI.utf8.count <= 1024, "\(name): \(placeholder.dataURI.utf8.count) bytes")
                let png = Data(base64Encoded: String(placeholder.dataURI.dropFirst("data:image/png;base64,".count)))!
                // The PNG's IHDR: width and height, big-endian, at bytes 16 and 20.
                let side = max(png[16...19].reduce(0) { $0 << 8 | Int($1) }, png[20...23].reduce(0) { $0 << 8 | Int($1) })
                sides[side, default: 0] += 1
            }
        }
        #expect(sides.values.reduce(0, +) >= 40, "\(sides)")
        #expect(Set(sides.keys).isSubset(of: InputPlaceholder.dataURISides), "\(sides)")
    }

    /// A translucent input's placeholder keeps its alpha: the hash says so, and the data URI
    /// has an alpha channel whose mean is the input's within 8 levels.
    @Test func aTranslucentInputsPlaceholderKeepsItsAlpha() throws {
        let path = Fixtures.repository.appendingPathComponent("samples/alpha-garbage-under-transparent.png").path
        let placeholder = try InputPlaceholder.make(
            path, inputHash: "unused", pixelLimit: ImageReader.defaultPixelLimit, memoryLimit: ImageReader.usableMemory)
        #expect(placeholder.width == 640 && placeholder.height == 400)
        let hash = Array(try #require(Data(base64Encoded: placeholder.thumbHash)))
        #expect(hash[2] & 0x80 != 0, "the hash has no alpha")
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let png = folder.appendingPathComponent("placeholder.png")
        try #require(Data(base64Encoded: String(placeholder.dataURI.dropFirst("data:image/png;base64,".count)))).write(to: png)
        func meanAlpha(_ path: String) throws -> Double {
            let image = try ImageReader.read(path)
            let rect = image.pixels.rect
            var sum = 0.0
            for y in rect.y..<rect.maxY { for x in rect.x..<rect.maxX { sum += Double(image.pixels[x, y].w) } }
            return sum / Double(rect.width * rect.height) * 255
        }
        #expect(try ImageReader.header(ofFile: png.path).hasAlpha)
        let (input, decoded) = (try meanAlpha(path), try meanAlpha(png.path))
        #expect(abs(input - decoded) <= 8, "alpha \(decoded) vs \(input)")
    }

    /// `run --map FILE` writes the map there (paths relative to its folder) for a manifest
    /// without `map:`, or instead of the manifest's; it names one file, so one manifest.
    @Test func runMapWritesTheMapWhereItSays() throws {
        let job = try Self.makeJob(map: nil)
        defer { try? FileManager.default.removeItem(at: job.root) }
        let target = job.path("elsewhere/deeper/map.json")
        let (result, _) = try job.run(["--map", target])
        #expect(result.status == 0, "\(result.stderr)")
        let map = try Self.load(target)
        let listed = Self.outputs(of: map, folder: job.path("elsewhere/deeper"))
        #expect(Set(listed.map(\.path)) == Self.filesOnDisk(job))
        #expect(listed.allSatisfy { $0.entry["path"].map { ($0 as? String)?.hasPrefix("../../out/") == true } ?? false })
        #expect(!FileManager.default.fileExists(atPath: job.path("site")))

        let two = try Blurfarm.run(["run", job.manifest, job.manifest, "--config", job.config, "--map", target])
        #expect(two.status == 64 && two.stderr.contains("--map names one file: give it one manifest"), "\(two.stderr)")
        let yaml = try Blurfarm.run(["run", job.manifest, "--config", job.config, "--map", job.path("map.yaml")])
        #expect(yaml.status == 64 && yaml.stderr.contains("--map must name a .json file"), "\(yaml.stderr)")
    }

    /// The map is never a file the job reads nor one of its inputs: a map that is a region
    /// file is refused at its line (before anything is written); a map in the inputs' folder
    /// is left out of them, so the next run does nothing; `--map` likewise.
    @Test func theMapIsNeverAFileTheJobReadsNorAnInput() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(atPath: folder.appendingPathComponent("in").path, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: Fixtures.corpus("photos/plasma-Kite.jpg"), toPath: folder.appendingPathComponent("in/kite.jpg").path)
        let faces = #"{"width":1024,"height":640,"boxes":[{"x":10,"y":10,"width":100,"height":100}]}"#
        try Data(faces.utf8).write(to: folder.appendingPathComponent("in/kite.faces.json"))
        func job(inputs: String, map: String) -> String {
            """
            job: m
            inputs: [\(inputs)]
            exclude: [in/*.faces.json]
            map: \(map)
            outputs:
              - name: t
                path: out/{stem}.png
                resize:
                  width: 64
                filters:
                  - gaussian:
                      sigma: 2
                regions:
                  from: "{stem}.faces.json"

            """
        }
        try job(inputs: "in/*.jpg", map: "in/kite.faces.json").write(
            to: folder.appendingPathComponent("faces.job"), atomically: true, encoding: .utf8)
        for command in ["check", "run"] {
            let refused = try Blurfarm.run([command, "faces.job"], in: folder)
            #expect(refused.status == 2, "\(refused.stdout)\(refused.stderr)")
            #expect(
                refused.stderr.contains(
                    "faces.job:4:6: error: the output map cannot be 'in/kite.faces.json': it is the region file 'in/kite.faces.json', which the job reads"),
                "\(refused.stderr)")
        }
        #expect(String(decoding: try Data(contentsOf: folder.appendingPathComponent("in/kite.faces.json")), as: UTF8.self) == faces)
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("out").path))

        try job(inputs: "in/*", map: "in/images.json").write(
            to: folder.appendingPathComponent("all.job"), atomically: true, encoding: .utf8)
        let first = try Blurfarm.run(["run", "all.job"], in: folder)
        #expect(first.status == 0 && first.stdout.contains("1 written, 0 failed"), "\(first.stdout)\(first.stderr)")
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("in/images.json").path))
        let again = try Blurfarm.run(["run", "all.job", "--verbose"], in: folder)
        #expect(again.status == 0 && again.stdout.contains("0 written, 0 failed"), "\(again.stdout)\(again.stderr)")

        // `run --map` is planned as map: is: left out of the inputs, refused over a file the job
        // reads. (It takes map:'s place: the map written there is a file of the folder again.)
        try FileManager.default.removeItem(at: folder.appendingPathComponent("in/images.json"))
        for _ in 1...2 {
            let given = try Blurfarm.run(["run", "all.job", "--map", "in/other.json"], in: folder)
            #expect(given.status == 0, "\(given.stdout)\(given.stderr)")
        }
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("in/other.json").path))
        let overFaces = try Blurfarm.run(["run", "all.job", "--map", "in/kite.faces.json"], in: folder)
        #expect(overFaces.status == 2, "\(overFaces.stderr)")
        #expect(overFaces.stderr.contains("/in/kite.faces.json': it is the region file"), "\(overFaces.stderr)")
        #expect(String(decoding: try Data(contentsOf: folder.appendingPathComponent("in/kite.faces.json")), as: UTF8.self) == faces)
    }

    /// A run keeps the map's stamp (``OutputMapStamp``): the file's, with the digest of its
    /// entries. A no-change run whose entries have that digest, finding that file, leaves it
    /// without reading it: bytes changed by hand behind a stamp kept as theirs stay, which shows
    /// the run trusted the stamp; a run that writes an output encodes the map whatever the
    /// stamp. Any other change is seen: bytes changed in place (the file's status change time
    /// moves), the file replaced by a copy of itself (another inode: compared, the same bytes,
    /// left, and its stamp kept), or removed: the map is made again.
    @Test func aNoChangeRunTrustsTheMapsStampAndNothingElse() throws {
        let (job, mapPath, written) = try Self.firstRun()
        defer { try? FileManager.default.removeItem(at: job.root) }
        let stamps = try KeptStamp(job, map: mapPath)
        func kept() throws -> OutputMapStamp? { try stamps.read() }
        func run() throws { try Self.runWritingNothing(job) }
        let stamp = try #require(try kept())
        #expect(stamp.file == FileStamp.of(mapPath))
        /// The map with the job's name changed in place, the same length.
        func tamper() throws -> Data {
            let changed = try #require(
                String(decoding: written, as: UTF8.self).replacingOccurrences(of: "\"job\" : \"site\"", with: "\"job\" : \"sitf\"")
                    .data(using: .utf8))
            #expect(changed.count == written.count && changed != written)
            let handle = try #require(FileHandle(forWritingAtPath: mapPath))
            try handle.write(contentsOf: changed)
            try handle.close()
            return changed
        }

        // Changed in place: its stamp is another, so it is compared and made again.
        _ = try tamper()
        try run()
        #expect(try Data(contentsOf: URL(fileURLWithPath: mapPath)) == written)
        #expect(try kept()?.file == FileStamp.of(mapPath))

        // Changed in place behind a stamp kept as its own: trusted, left as it is.
        let tampered = try tamper()
        let trusted = try #require(try kept())
        try stamps.keep(OutputMapStamp(digest: trusted.digest, file: try #require(FileStamp.of(mapPath))))
        try run()
        #expect(try Data(contentsOf: URL(fileURLWithPath: mapPath)) == tampered)

        // A run that writes an output encodes the map at once, stamp or not: made again.
        try FileManager.default.removeItem(atPath: job.path("out/photo1-32w.webp"))
        let (rewriting, rewritingReport) = try job.run()
        #expect(rewriting.status == 0 && rewritingReport.outputs("written") == ["out/photo1-32w.webp"], "\(rewriting.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: mapPath)) == written)
        #expect(try kept()?.file == FileStamp.of(mapPath))

        // Replaced by a copy of the right bytes: compared, left, its stamp kept.
        let copy = job.path("site/copy.json")
        try written.write(to: URL(fileURLWithPath: copy))
        #expect(rename(copy, mapPath) == 0)
        let copied = FileStamp.of(mapPath)
        try run()
        #expect(FileStamp.of(mapPath) == copied)
        #expect(try kept()?.file == copied)
        #expect(try Data(contentsOf: URL(fileURLWithPath: mapPath)) == written)

        // Removed: made again.
        try FileManager.default.removeItem(atPath: mapPath)
        try run()
        #expect(try Data(contentsOf: URL(fileURLWithPath: mapPath)) == written)
        #expect(try kept()?.file == FileStamp.of(mapPath))
    }

    /// A no-change run with the plan of the run that made the map, over records unchanged
    /// since (``OutputMapStamp/plan``), leaves the map without hashing its entries: a digest
    /// kept wrong stays wrong. A record written again (the same bytes) is a change: the entries
    /// are hashed; found the same, the stamp is kept with the plan again; found another (the
    /// digest kept wrong), the map is compared and left, and the right stamp kept. A change of
    /// plan that renders nothing is seen: a variant renamed (its outputs up to date, their
    /// entries another variant's) and an input removed (the records as they were).
    @Test func aNoChangeRunOverTheSamePlanAndRecordsLeavesTheMapUnhashed() throws {
        let (job, mapPath, written) = try Self.firstRun()
        defer { try? FileManager.default.removeItem(at: job.root) }
        let stamps = try KeptStamp(job, map: mapPath)
        func kept() throws -> OutputMapStamp? { try stamps.read() }
        func run() throws { try Self.runWritingNothing(job) }
        /// A record of the job written again as it is: the records' generation moves.
        func rewriteARecord() throws {
            let records = try OutputRecords(folder: stamps.folder)
            try records.add(try #require(records.all.first))
        }
        let stamp = try #require(try kept())
        #expect(stamp.plan != nil && stamp.file == FileStamp.of(mapPath))
        var wrong = stamp
        wrong.digest = String(repeating: "0", count: 32)
        try stamps.keep(wrong)
        try run()
        #expect(try kept() == wrong)
        #expect(try Data(contentsOf: URL(fileURLWithPath: mapPath)) == written)

        try stamps.keep(stamp)
        try rewriteARecord()
        #expect(try kept()?.plan == nil)
        try run()
        #expect(try kept() == stamp)

        try stamps.keep(wrong)
        try rewriteARecord()
        try run()
        #expect(try kept() == stamp)
        #expect(try Data(contentsOf: URL(fileURLWithPath: mapPath)) == written)

        let manifest = try String(contentsOfFile: job.manifest, encoding: .utf8)
        try manifest.replacingOccurrences(of: "name: backdrop", with: "name: blurred")
            .write(toFile: job.manifest, atomically: true, encoding: .utf8)
        try run()
        let variants = Set(Self.outputs(of: try Self.load(mapPath), folder: job.path("site")).compactMap { $0.entry["variant"] as? String })
        #expect(variants == ["srcset", "blurred"])

        try FileManager.default.removeItem(atPath: job.path("in/photo1.jpg"))
        try run()
        let inputs = (try Self.load(mapPath)["inputs"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String }
        #expect(inputs.count == 4 && !inputs.contains { $0.hasSuffix("photo1.jpg") }, "\(inputs)")
        #expect(try kept()?.file == FileStamp.of(mapPath))
    }

    /// A map with gaps keeps no plan, so the next run goes through its entries again: an
    /// output the records trust whose size they lack and whose header cannot be read (left out
    /// of the map), and an input whose placeholder cannot be made (said, and its entry without
    /// one). Once both are mended, the stamp is kept with the plan again.
    @Test func aMapWithGapsKeepsNoPlan() throws {
        let (job, mapPath, _) = try Self.firstRun()
        defer { try? FileManager.default.removeItem(at: job.root) }
        let stamps = try KeptStamp(job, map: mapPath)
        #expect(try stamps.read()?.plan != nil)
        func entries() throws -> [(path: String, entry: [String: Any], input: String)] {
            Self.outputs(of: try Self.load(mapPath), folder: job.path("site"))
        }

        let records = try OutputRecords(folder: stamps.folder)
        /// `bytes` written to `path`, and the records of `path`, as an output (`sized`: with its
        /// size, else none) or as an input, made to trust them: a run takes the file as unchanged.
        func write(_ bytes: Data, to path: String, sized: Bool = true) throws {
            try bytes.write(to: URL(fileURLWithPath: path))
            let stamp = try #require(FileStamp.of(path))
            for var record in records.all where record.output == path || record.input == RealPath.resolveFolder(of: path) {
                if record.output == path {
                    record.outputFile.stamp = stamp
                    if !sized { (record.width, record.height) = (nil, nil) }
                } else {
                    record.inputFile.stamp = stamp
                }
                try records.add(record)
            }
        }

        // An output's bytes replaced, and its record made to trust them with no size: the
        // run takes it as up to date, and cannot read its header.
        let unsized = try #require(records.all.first { $0.output.hasSuffix("/backdrop/photo0.jpg") }).output
        let original = try Data(contentsOf: URL(fileURLWithPath: unsized))
        try write(Data("not an image any more".utf8), to: unsized, sized: false)
        try Self.runWritingNothing(job)
        #expect(try !entries().contains { $0.path == unsized })
        #expect(try entries().count == 14)
        #expect(try stamps.read()?.plan == nil)
        // Not kept with a plan, the next run reads the header again.
        try Self.runWritingNothing(job)
        #expect(try stamps.read()?.plan == nil)

        // The output's own bytes back, and an input's bytes replaced with its record trusting
        // them and its placeholder forgotten: the map says the placeholder is missing.
        try write(original, to: unsized)
        let input = job.path("in/photo1.jpg")
        let inputBytes = try Data(contentsOf: URL(fileURLWithPath: input))
        try write(Data(repeating: 0x5A, count: 64), to: input)
        try records.remove(placeholder: RealPath.resolveFolder(of: input))
        let (missing, report) = try job.run()
        #expect(missing.status == 0 && report.outputs("written").isEmpty, "\(missing.stderr)")
        #expect(missing.stderr.contains("photo1.jpg: no placeholder in the output map"), "\(missing.stderr)")
        #expect(try entries().count == 15)
        #expect(try stamps.read()?.plan == nil)

        // Its own bytes back (and its records trusting them): the placeholder is made, and the
        // plan kept.
        try write(inputBytes, to: input)
        try Self.runWritingNothing(job)
        #expect(try stamps.read()?.plan != nil)
        try Self.expectMapMatchesDisk(job)
    }

    /// A map that cannot be written (a file where its folder goes) fails the run, not the
    /// outputs; the next run, with the way clear, writes it though it renders nothing.
    @Test func aMapThatCannotBeWrittenFailsTheRunNotItsOutputs() throws {
        let job = try Self.makeJob()
        defer { try? FileManager.default.removeItem(at: job.root) }
        try Data("not a folder".utf8).write(to: URL(fileURLWithPath: job.path("site")))
        let (blocked, report) = try job.run()
        #expect(blocked.status == 1, "\(blocked.stderr)")
        #expect(blocked.stderr.contains("site/images.json: cannot write the output map: "), "\(blocked.stderr)")
        #expect(report.outputs("written").count == 15)
        try FileManager.default.removeItem(atPath: job.path("site"))
        let (cleared, clearedReport) = try job.run()
        #expect(cleared.status == 0 && clearedReport.outputs("written").isEmpty, "\(cleared.stderr)")
        try Self.expectMapMatchesDisk(job)
    }

    /// A FIFO where the map goes is never waited on: the run compares only a regular file of
    /// the map's size with the new map, and writes the map over the FIFO. The run is given a
    /// minute by `timeout` (status 124 if it hangs).
    @Test func aFIFOWhereTheMapGoesIsReplacedNotRead() throws {
        let job = try Self.makeJob()
        defer { try? FileManager.default.removeItem(at: job.root) }
        try FileManager.default.createDirectory(atPath: job.path("site"), withIntermediateDirectories: true)
        #expect(mkfifo(job.path("site/images.json"), 0o644) == 0)
        let result = try Blurfarm.run(
            ["-c", "exec timeout 60 \"$0\" \"$@\"", Blurfarm.executable.path, "run", job.manifest, "--config", job.config],
            shell: true)
        #expect(result.status == 0, "\(result.stderr)")
        try Self.expectMapMatchesDisk(job)
    }

    /// Records written before they kept the outputs' sizes (and before placeholders) still
    /// give the same map: the sizes are read from the files, the placeholders made anew.
    @Test func recordsWithoutSizesOrPlaceholdersGiveTheSameMap() throws {
        let job = try Self.makeJob()
        defer { try? FileManager.default.removeItem(at: job.root) }
        _ = try job.run()
        let written = try Data(contentsOf: URL(fileURLWithPath: job.path("site/images.json")))
        let folder = try #require(IncrementalRunTests.recordsFolder(job))
        do {
            let records = try OutputRecords(folder: folder)
            for var record in records.all {
                (record.width, record.height) = (nil, nil)
                try records.add(record)
            }
            for placeholder in records.placeholders { try records.remove(placeholder: placeholder.input) }
        }
        try FileManager.default.removeItem(atPath: job.path("site/images.json"))
        let (result, report) = try job.run()
        #expect(result.status == 0 && report.outputs("written").isEmpty, "\(result.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: job.path("site/images.json"))) == written)
        // The records have their sizes and placeholders again.
        let records = try OutputRecords.read(folder: folder)
        #expect(records.placeholders.count == 5)
        #expect(records.records.count == 15 && records.records.values.allSatisfy { $0.width != nil && $0.height != nil })
    }
}
