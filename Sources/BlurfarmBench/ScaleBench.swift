import BlurfarmCore
import BlurfarmImageIO
import Foundation

/// A photo library kept up to date, as cron keeps it: `blurfarm bench scale` (issue "A
/// million photos"). For each size, that many small generated PNGs in 20 folders (made once
/// in the cache), a job of three variants each (a 24 px thumbnail, a sigma 2 blur to JPEG, a
/// WebP conversion): the first run from nothing, then a run with nothing changed, each timed
/// and its peak memory taken (coordinator and workers, shared pages counted once), the first
/// run beside warm libvips 8.18 lanes making the same three outputs of each input
/// (scripts/vips818-bench.py's `scale`, one process a core, alternating with it), the no-change
/// run beside the floor it stands on: `find` stating every input and output once; and a run
/// with one output to make again, as a cron run that finds one photo changed (its work, and its
/// report).
public struct ScaleBench: Sendable {
    public struct Row: Sendable, Hashable, Codable {
        public var inputs: Int
        public var outputs: Int
        /// The first run's median seconds and peak bytes.
        public var firstSeconds: Double
        public var firstPeak: Int
        /// The no-change run's.
        public var noChangeSeconds: Double
        public var noChangePeak: Int
        /// `find` over the inputs and outputs, a stat of each (`-printf '%s %T@'`).
        public var findSeconds: Double
        /// A run with one output to make again (its file deleted before): the median seconds.
        public var oneMadeSeconds: Double
        /// The libvips lanes making the first run's outputs: the median seconds, and the lanes
        /// ("libvips 8.18.7, 2 processes").
        public var libvipsSeconds: Double
        public var libvips: String

        /// The first run's milliseconds an input.
        public var firstMillisecondsPerInput: Double { firstSeconds * 1000 / Double(max(inputs, 1)) }
        /// The first run's time over the libvips lanes'.
        public var firstOverLibvips: Double { firstSeconds / max(libvipsSeconds, 1e-9) }
        /// The no-change run's time over `find`'s.
        public var noChangeOverFind: Double { noChangeSeconds / max(findSeconds, 1e-9) }
    }

    public var locations: BenchLocations
    /// The numbers of inputs, each a library of its own.
    public var sizes: [Int]
    public var runs: Int
    public var executable: String

    public init(locations: BenchLocations, sizes: [Int], runs: Int, executable: String) {
        self.locations = locations
        self.sizes = sizes
        self.runs = max(runs, 1)
        self.executable = executable
    }

    /// The folders the inputs are spread over, as a library's years or albums are.
    static let folders = 20

    /// The thumbnail's width, the blur's sigma and the encoders' quality (the default) of the
    /// variants below, which the libvips lanes are given.
    static let (thumbnailWidth, sigma, quality) = (24, 2.0, 90)

    /// The three variants: the issue's.
    static let variants = """
          - name: thumb
            path: out/thumb/{stem}.jpg
            resize:
              width: \(thumbnailWidth)
          - name: blur
            path: out/blur/{stem}.jpg
            filters:
              - gaussian:
                  sigma: \(ParameterValue.number(sigma))
          - name: webp
            path: out/webp/{stem}.webp
        """

    /// Measures each size in turn.
    ///
    /// - Throws: `BenchError`: the inputs cannot be made, a command failed, the libvips lanes
    ///   cannot start.
    public func run() throws -> [Row] {
        let comparison = LibvipsComparison(executable: executable, locations: locations, settings: .init(runs: runs))
        return try sizes.map { try measure($0, beside: comparison) }
    }

    /// One size: its library made (once), then the runs, the first beside `comparison`'s lanes.
    func measure(_ count: Int, beside comparison: LibvipsComparison) throws -> Row {
        let library = try Self.library(count, in: locations.cache)
        let folder = try BenchFolder()
        try FileManager.default.removeItem(atPath: folder.path + "/in")
        try FileManager.default.createSymbolicLink(atPath: folder.path + "/in", withDestinationPath: library)
        let job = folder.url.appendingPathComponent("scale.job").path
        try "job: scale\ninputs: [in/*/*.png]\noutputs:\n\(Self.variants)\n".write(toFile: job, atomically: true, encoding: .utf8)
        let run = ["run", job, "--config", folder.config, "--quiet"]
        let median = BenchStatistics.median
        let photos = try (0..<Self.folders).flatMap { try BenchFolder.images(in: library + String(format: "/f%02d", $0)) }
        let lanesOut = folder.path + "/libvips"
        let request: [String: Any] = [
            "op": "scale", "out": lanesOut, "width": Self.thumbnailWidth, "sigma": Self.sigma, "quality": Self.quality,
        ]
        var first: [Double] = [], lanes: [Double] = []
        for _ in 0..<runs {
            folder.clearOutputs()
            first.append(try MeasuredProcess.run(executable, run).seconds)
            try? FileManager.default.removeItem(atPath: lanesOut)
            for variant in ["thumb", "blur", "webp"] {
                try FileManager.default.createDirectory(atPath: lanesOut + "/" + variant, withIntermediateDirectories: true)
            }
            lanes.append(try comparison.pooled(photos, request))
        }
        let made = try ["thumb", "blur", "webp"].reduce(0) { $0 + (try FileManager.default.contentsOfDirectory(atPath: lanesOut + "/" + $1).count) }
        guard made == 3 * count else {
            throw BenchError("bench scale: the libvips lanes made \(made) outputs of \(count) inputs, where 3 each were asked")
        }
        /// A run's peak: its processes' proportional sum, sampled every 50 ms, or for a run too
        /// short for that (a no-change run starts no worker) the coordinator's own peak.
        func peak() throws -> Int {
            let measured = try MeasuredProcess.run(executable, run, memory: true)
            return max(measured.togetherPeak, measured.coordinatorPeak)
        }
        folder.clearOutputs()
        let firstPeak = try peak()
        var noChange: [Double] = [], find: [Double] = []
        let findArguments = [folder.path + "/in/", folder.path + "/out/", "-type", "f", "-printf", "%s %T@\\n"]
        for _ in 0..<runs {
            noChange.append(try MeasuredProcess.run(executable, run).seconds)
            find.append(try MeasuredProcess.run("/usr/bin/find", findArguments).seconds)
        }
        let noChangePeak = try peak()
        // The first input's thumbnail deleted before each run, and made again by it.
        let gone = folder.path + "/out/thumb/\(Self.photoName(0)).jpg"
        var oneMade: [Double] = []
        for _ in 0..<runs {
            try FileManager.default.removeItem(atPath: gone)
            oneMade.append(try MeasuredProcess.run(executable, run).seconds)
            guard FileManager.default.fileExists(atPath: gone) else {
                throw BenchError("bench scale: the run did not make \(gone) again")
            }
        }
        let outputs = try ["thumb", "blur", "webp"].reduce(0) {
            $0 + (try FileManager.default.contentsOfDirectory(atPath: folder.path + "/out/" + $1).count)
        }
        guard outputs == 3 * count else {
            throw BenchError("bench scale: \(outputs) outputs of \(count) inputs, where 3 each were asked")
        }
        return Row(
            inputs: count, outputs: outputs, firstSeconds: median(first), firstPeak: firstPeak,
            noChangeSeconds: median(noChange), noChangePeak: noChangePeak, findSeconds: median(find),
            oneMadeSeconds: median(oneMade), libvipsSeconds: median(lanes), libvips: try comparison.poolName())
    }

    /// The name of the library's photo `index` (its stem, and its outputs').
    static func photoName(_ index: Int) -> String { String(format: "i%07d", index) }

    /// The folder of `count` generated 64 x 48 PNGs in ``folders`` folders below `cache`, made
    /// once: each photo its own (a gradient and a square placed by its number), named by its
    /// number, so that no two outputs of a variant meet.
    static func library(_ count: Int, in cache: String) throws -> String {
        let root = cache + "/scale-\(count)"
        let done = root + "/.complete"
        if FileManager.default.fileExists(atPath: done) { return root }
        try? FileManager.default.removeItem(atPath: root)
        for folder in 0..<folders {
            try FileManager.default.createDirectory(
                atPath: root + String(format: "/f%02d", folder), withIntermediateDirectories: true)
        }
        let (width, height) = (64, 48)
        for index in 0..<count {
            let image = PixelBuffer(rect: Rect(width: width, height: height))
            let (sx, sy) = (index % (width - 8), (index / width) % (height - 8))
            for y in 0..<height {
                for x in 0..<width {
                    let inSquare = (sx..<sx + 8).contains(x) && (sy..<sy + 8).contains(y)
                    let shade = Float((index * 7 + x * 3 + y * 5) % 256) / 255
                    image[x, y] = inSquare ? SIMD4(1, 1 - shade, 0.2, 1) : SIMD4(shade, Float(y) / Float(height), 0.5, 1)
                }
            }
            let path = root + String(format: "/f%02d/", index % folders) + photoName(index) + ".png"
            do {
                let png = try ImageWriter.encode(
                    image, extension: "png", named: path, sourceBitDepth: 8, sourceHadAlpha: false, metadata: nil,
                    options: EncodeOptions(metadata: .strip, bitDepth: 8))
                try Data(png.bytes).write(to: URL(fileURLWithPath: path))
            } catch {
                throw BenchError("bench scale: cannot make \(path): \(error)")
            }
        }
        guard FileManager.default.createFile(atPath: done, contents: nil) else {
            throw BenchError("bench scale: cannot write \(done)")
        }
        return root
    }

    public func text(_ rows: [Row], version: String) -> String {
        let table = BenchTable(
            header: [
                "inputs", "outputs", "first run s", "ms an input", "its peak MB", "no-change s", "its peak MB", "find s",
                "no-change / find", "one made s", "libvips s", "first / libvips",
            ],
            rows: rows.map {
                [
                    "\($0.inputs)", "\($0.outputs)", BenchTable.fixed($0.firstSeconds), BenchTable.fixed($0.firstMillisecondsPerInput),
                    BenchTable.megabytes($0.firstPeak), BenchTable.fixed($0.noChangeSeconds), BenchTable.megabytes($0.noChangePeak),
                    BenchTable.fixed($0.findSeconds, 3), BenchTable.fixed($0.noChangeOverFind, 1),
                    BenchTable.fixed($0.oneMadeSeconds), BenchTable.fixed($0.libvipsSeconds),
                    BenchTable.fixed($0.firstOverLibvips),
                ]
            })
        return """
            blurfarm \(version): a library of small PNGs in \(Self.folders) folders, 3 variants each (24 px thumbnail, \
            sigma 2 blur to JPEG, WebP), medians of \(runs) runs; the first run beside \(rows.first?.libvips ?? "libvips")
            \(table.text)
            """
    }
}
