import BlurfarmImageIO
import Foundation

/// `blurfarm run` on a batch of images beside `parallel -j N vips gaussblur` (Debian's vips
/// command) on the same files, or for thumbnails `parallel -j N vipsthumbnail`, in the same run,
/// with the peak memory of the coordinator and of its workers: `blurfarm bench farm PATH...`.
public struct FarmBench: Sendable {
    /// One command: its median time and the peaks of its processes.
    public struct Row: Sendable, Hashable, Codable {
        /// "blurfarm run --workers 2" or "parallel -j 2 vips gaussblur".
        public var command: String
        public var seconds: Double
        public var imagesPerSecond: Double
        public var megapixelsPerSecond: Double
        /// blurfarm: the report's filter seconds summed over the outputs (median).
        public var filterSeconds: Double?
        /// blurfarm: the coordinator's largest resident peak over the runs, in bytes.
        public var coordinatorPeak: Int?
        /// blurfarm: the largest resident peak of a worker, in bytes (nil in process).
        public var workerPeak: Int?
        /// blurfarm: the largest proportional sum of the coordinator and its workers, in bytes.
        public var togetherPeak: Int?
        /// vips time / blurfarm time (above 1: blurfarm is faster).
        public var ratio: Double?
        /// blurfarm: `blurfarm run` again at once, every output up to date (median seconds).
        public var rerunSeconds: Double?
    }

    /// The batch measured and its rows.
    public struct Result: Sendable, Hashable, Codable {
        public var images: Int
        public var megapixels: Double
        /// What each output is, e.g. "gaussian sigma 8.0 to JPEG q 90".
        public var work: String
        public var rows: [Row]
    }

    /// Images or folders of them (their `.jpg`, `.jpeg`, `.png`, `.webp`, `.tif` files).
    public var paths: [String]
    /// The batch is the images this many times over (links to them).
    public var copies: Int
    /// Worker counts to time, one row each; 0 is the in-process engine.
    public var workers: [Int]
    public var sigma: Double
    /// Instead of the gaussian: thumbnails inside this many pixels square, JPEG q 80.
    public var thumbnail: Int?
    public var runs: Int
    /// Whether to time `vips` too.
    public var vips: Bool
    /// The `blurfarm` executable that runs the batch.
    public var executable: String

    public init(
        paths: [String], copies: Int = 1, workers: [Int] = [2], sigma: Double = 8, thumbnail: Int? = nil, runs: Int,
        vips: Bool = true, executable: String
    ) {
        self.paths = paths
        self.copies = max(copies, 1)
        self.workers = workers.isEmpty ? [2] : workers
        self.sigma = sigma
        self.thumbnail = thumbnail
        self.runs = max(runs, 1)
        self.vips = vips
        self.executable = executable
    }

    /// Times every worker count and vips, each run timing every row once, in turn.
    ///
    /// - Throws: `BenchError` (no images, a command failed, vips or parallel missing).
    public func run() throws -> Result {
        let images = try inputs()
        guard !images.isEmpty else { throw BenchError("bench farm: no images in \(paths.joined(separator: ", "))") }
        if vips, !MeasuredProcess.onPath("parallel") || !MeasuredProcess.onPath("vips") {
            throw BenchError("bench farm: 'parallel' and 'vips' are needed to time libvips (bash scripts/setup.sh installs them)")
        }
        let folder = try BenchFolder()
        let files = try folder.link(images, copies: copies)
        let variant =
            if let thumbnail {
                BenchJob.variant(name: "thumb", path: "out/{stem}.jpg", resize: "width: \(thumbnail)\n      height: \(thumbnail)", quality: 80)
            } else {
                BenchJob.variant(name: "blur", path: "out/{stem}.jpg", sigma: sigma, quality: 90)
            }
        let job = try folder.writeJob("bench.job", variants: [variant])
        let megapixels = try images.reduce(0.0) { sum, image in
            let header = try ImageReader.header(ofFile: image)
            return sum + Double(header.width * header.height) / 1e6
        } * Double(copies)

        var vipsSeconds: [Double] = []
        var farm: [Int: [(MeasuredProcess, filter: Double, rerun: Double)]] = [:]
        let report = folder.url.appendingPathComponent("report.json")
        func arguments(_ count: Int) -> [String] {
            ["run", job, "--config", folder.config, "--workers", "\(count)", "--quiet", "--report", report.path]
        }
        // The peaks from a run of their own for each worker count (sampling memory takes processor
        // time from the run it samples: MeasuredProcess).
        var peaks: [Int: MeasuredProcess] = [:]
        for count in workers {
            folder.clearOutputs()
            peaks[count] = try MeasuredProcess.run(executable, arguments(count), memory: true)
        }
        for _ in 0..<runs {
            for count in workers {
                folder.clearOutputs()
                let arguments = arguments(count)
                let measurement = try MeasuredProcess.run(executable, arguments)
                let filter = try Self.filterSeconds(report)
                let rerun = try MeasuredProcess.run(executable, Array(arguments.dropLast(2))).seconds
                farm[count, default: []].append((measurement, filter, rerun))
            }
            if vips {
                let out = folder.url.appendingPathComponent("vips")
                try? FileManager.default.removeItem(at: out)
                try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
                let command =
                    if let thumbnail {
                        ["vipsthumbnail", "{}", "-s", "\(thumbnail)x\(thumbnail)", "-o", "\(out.path)/%s.jpg[Q=80]"]
                    } else {
                        ["vips", "gaussblur", "{}", "\(out.path)/{/.}.jpg[Q=90]", "\(sigma)"]
                    }
                let arguments = ["-j", "\(workers.max() ?? 1)"] + command + [":::"] + files
                vipsSeconds.append(try MeasuredProcess.run("/usr/bin/env", ["parallel"] + arguments).seconds)
            }
        }
        let median = BenchStatistics.median
        let vipsMedian = vipsSeconds.isEmpty ? nil : median(vipsSeconds)
        var rows: [Row] = []
        for count in workers {
            let measured = farm[count] ?? []
            let seconds = median(measured.map(\.0.seconds))
            rows.append(
                Row(
                    command: "blurfarm run --workers \(count)", seconds: seconds,
                    imagesPerSecond: Double(files.count) / seconds, megapixelsPerSecond: megapixels / seconds,
                    filterSeconds: median(measured.map(\.filter)), coordinatorPeak: peaks[count]?.coordinatorPeak,
                    workerPeak: count == 0 ? nil : peaks[count]?.workerPeak,
                    togetherPeak: peaks[count]?.togetherPeak, ratio: vipsMedian.map { $0 / seconds },
                    rerunSeconds: median(measured.map(\.rerun))))
        }
        if let vipsMedian {
            rows.append(
                Row(
                    command: "parallel -j \(workers.max() ?? 1) \(thumbnail == nil ? "vips gaussblur" : "vipsthumbnail")",
                    seconds: vipsMedian, imagesPerSecond: Double(files.count) / vipsMedian,
                    megapixelsPerSecond: megapixels / vipsMedian, ratio: 1))
        }
        let work = thumbnail.map { "thumbnails inside \($0)x\($0) to JPEG q 80" } ?? "gaussian sigma \(sigma) to JPEG q 90"
        return Result(images: files.count, megapixels: megapixels, work: work, rows: rows)
    }

    /// The image files named by `paths`, folders expanded, sorted.
    private func inputs() throws(BenchError) -> [String] {
        var images: [String] = []
        for path in paths {
            let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: absolute, isDirectory: &isFolder) else {
                throw BenchError("bench farm: \(path): no such file or folder")
            }
            images += isFolder.boolValue ? try BenchFolder.images(in: absolute) : [absolute]
        }
        return images
    }

    /// The `filterSeconds` of every output of a `--report` file, summed.
    static func filterSeconds(_ report: URL) throws -> Double {
        struct Output: Decodable { let filterSeconds: Double }
        struct Report: Decodable { let outputs: [Output] }
        let reports = try JSONDecoder().decode([Report].self, from: Data(contentsOf: report))
        return reports.flatMap(\.outputs).reduce(0) { $0 + $1.filterSeconds }
    }
}
