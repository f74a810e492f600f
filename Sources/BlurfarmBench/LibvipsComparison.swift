import BlurfarmCore
import BlurfarmImageIO
import BlurfarmKernels
import Foundation

/// The figures of docs/performance.md, each beside libvips 8.18 warm in-process (pyvips-binary,
/// scripts/vips818-bench.py: one long-lived process per lane), in the same run: blurfarm and
/// libvips alternate, run after run, and each figure is the median of the runs. Both sides use
/// the same exact 3σ mask (libvips `gaussblur(sigma, min_ampl=0.011)`).
///
/// blurfarm is the `blurfarm` executable given (a release build for published figures), run as
/// a whole process, as its users run it.
public final class LibvipsComparison {
    /// What to measure and how often; the defaults are the published figures.
    public struct Settings: Sendable, Hashable {
        /// Runs of each side per figure (medians; at least 3 for published figures).
        public var runs: Int
        /// The gaussian's sigmas (pixels) of the batch, the one image and the kernels.
        public var sigmas: [Double]
        /// The batch: at most this many of corpus/batch1080's JPEGs (all 48 by default).
        public var batchImages: Int
        /// The one image, relative to the corpus.
        public var image: String
        /// The big image's size, generated once into the cache from the one image.
        public var bigWidth: Int
        public var bigHeight: Int
        /// The big image's sigma.
        public var bigSigma = 8.0
        /// The web job: this many photos, generated once into the cache from corpus/photos.
        public var webPhotos: Int
        /// The web photos' sizes, from the smallest to the largest, in megapixels.
        public var webMegapixels: ClosedRange<Double> = 6...16
        /// The kernels' sigmas (pixels).
        public var kernelSigmas: [Double]
        /// Whether the kernels figure runs OpenCV too.
        public var includeOpenCV: Bool
        /// libvips processes of the batch and the web job (a pool of warm processes).
        public var lanes: Int

        /// Settings; each not given is the published figures'.
        public init(
            runs: Int = 3, sigmas: [Double] = [2, 8, 32], batchImages: Int = 48, image: String = "special/bench-3840x2160.jpg",
            bigWidth: Int = 21248, bigHeight: Int = 11952, webPhotos: Int = 24, kernelSigmas: [Double] = [2, 8, 32],
            includeOpenCV: Bool = true, lanes: Int = 2
        ) {
            self.runs = runs
            self.sigmas = sigmas
            self.batchImages = batchImages
            self.image = image
            self.bigWidth = bigWidth
            self.bigHeight = bigHeight
            self.webPhotos = webPhotos
            self.kernelSigmas = kernelSigmas
            self.includeOpenCV = includeOpenCV
            self.lanes = lanes
        }
    }

    public let executable: String
    public let locations: BenchLocations
    public let settings: Settings
    private var pool: [VipsLane] = []

    /// A comparison running `executable` (the `blurfarm` to time) beside lanes of
    /// `locations.python`.
    public init(executable: String, locations: BenchLocations, settings: Settings) {
        self.executable = executable
        self.locations = locations
        self.settings = settings
    }

    /// The warm libvips lanes, started on first use and kept for every figure.
    ///
    /// - Throws: `BenchError` when the venv is missing or loads another libvips.
    func lanes() throws(BenchError) -> [VipsLane] {
        while pool.count < max(settings.lanes, 1) {
            pool.append(try VipsLane(python: locations.python, script: locations.scripts + "/vips818-bench.py"))
        }
        return pool
    }

    /// The libvips version the lanes load ("8.18.7").
    public func libvipsVersion() throws(BenchError) -> String { try lanes()[0].hello.version }

    /// The runs of each side, at least one.
    var runs: Int { max(settings.runs, 1) }

    /// A corpus path, required to exist.
    func corpus(_ relative: String) throws(BenchError) -> String {
        let path = locations.corpus + "/" + relative
        guard FileManager.default.fileExists(atPath: path) else {
            throw BenchError("bench: \(path) is missing (the corpus is \(locations.corpus); give --corpus)")
        }
        return path
    }

    /// Sends each lane its part of `files` (every lane-th file) as `request` with "files" added,
    /// and waits for them all: the wall time of the pool, in seconds.
    func pooled(_ files: [String], _ request: [String: Any]) throws(BenchError) -> Double {
        let lanes = try lanes()
        let start = ContinuousClock.now
        var busy: [VipsLane] = []
        for (index, lane) in lanes.enumerated() {
            let share = stride(from: index, to: files.count, by: lanes.count).map { files[$0] }
            if share.isEmpty { continue }
            var message = request
            message["files"] = share
            try lane.send(message)
            busy.append(lane)
        }
        for lane in busy { _ = try lane.receive() }
        return (ContinuousClock.now - start).seconds
    }

    /// "libvips 8.18.7, 2 processes".
    func poolName() throws(BenchError) -> String {
        "libvips \(try libvipsVersion()), \(try lanes().count) processes"
    }

    /// The label of a sigma: "sigma 8".
    static func label(_ sigma: Double) -> String { "sigma \(ParameterValue.number(sigma))" }
}

extension LibvipsComparison {
    /// The batch: the first `batchImages` of corpus/batch1080 → gaussian at each sigma → JPEG q90,
    /// `blurfarm run` (a manifest in a temporary folder, first run with no state) vs the lanes
    /// splitting the files, and vs the codec floor (the lanes only decoding and encoding); and
    /// the cron figure: `blurfarm run` again at once (nothing changed) against the first run.
    ///
    /// - Throws: `BenchError`.
    public func batch() throws -> [Comparison] {
        let images = Array(try BenchFolder.images(in: try corpus("batch1080")).prefix(max(settings.batchImages, 1)))
        let folder = try BenchFolder()
        let files = try folder.link(images)
        var rows: [Comparison] = []
        for sigma in settings.sigmas {
            let job = try folder.writeJob(
                "batch.job", variants: [BenchJob.variant(name: "blur", path: "out/{stem}.jpg", sigma: sigma, quality: 90)])
            var first: [Double] = [], rerun: [Double] = [], libvips: [Double] = [], floor: [Double] = []
            for _ in 0..<runs {
                folder.clearOutputs()
                first.append(try MeasuredProcess.run(executable, ["run", job, "--config", folder.config, "--quiet"]).seconds)
                rerun.append(try MeasuredProcess.run(executable, ["run", job, "--config", folder.config, "--quiet"]).seconds)
                let out = try folder.freshFolder("vips")
                libvips.append(try pooled(files, ["op": "blur", "out": out, "sigma": sigma, "quality": 90]))
                floor.append(try pooled(files, ["op": "blur", "out": out, "sigma": NSNull(), "quality": 90]))
            }
            let label = Self.label(sigma) + ", \(files.count) images"
            rows.append(Comparison(figure: .batch, label: label, blurfarmRuns: first, baselineRuns: libvips, baseline: try poolName()))
            rows.append(
                Comparison(
                    figure: .codecFloor, label: label, blurfarmRuns: first, baselineRuns: floor,
                    baseline: "\(try poolName()), decode and encode only"))
            rows.append(Comparison(figure: .cron, label: label, blurfarmRuns: rerun, baselineRuns: first, baseline: "blurfarm's first run"))
        }
        return rows
    }

    /// One image at each sigma: `blurfarm apply` as a cold process (its default threads) vs a
    /// lane at concurrency 2, then `apply --threads 1` vs concurrency 1.
    ///
    /// - Throws: `BenchError`.
    public func image() throws -> [Comparison] {
        let image = try corpus(settings.image)
        let folder = try BenchFolder()
        let lane = try lanes()[0]
        let out = try folder.freshFolder("vips")
        let output = folder.path + "/apply.jpg"
        var rows: [Comparison] = []
        for (figure, threads) in [(Comparison.Figure.image, 2), (.imageOneThread, 1)] {
            for sigma in settings.sigmas {
                var ours: [Double] = [], theirs: [Double] = []
                var arguments = ["apply", image, output, "--filter", "gaussian sigma=\(sigma)", "--quality", "90"]
                if threads == 1 { arguments += ["--threads", "1"] }
                for _ in 0..<runs {
                    ours.append(try MeasuredProcess.run(executable, arguments).seconds)
                    try lane.setConcurrency(threads)
                    theirs.append(
                        try BenchStatistics.wallSeconds {
                            try lane.request(["op": "blur", "files": [image], "out": out, "sigma": sigma, "quality": 90])
                        })
                }
                rows.append(
                    Comparison(
                        figure: figure, label: Self.label(sigma), blurfarmRuns: ours, baselineRuns: theirs,
                        baseline: "libvips \(try libvipsVersion()) in-process, concurrency \(threads)"))
            }
        }
        try lane.setConcurrency(Machine.cores)
        return rows
    }
}

extension LibvipsComparison {
    /// The benchmarks of the comparison, as `bench all --figure` names them.
    public enum Figure: String, Sendable, CaseIterable {
        case batch, image, serve, big, web, kernels
    }

    /// Measures `figure`: its rows.
    ///
    /// - Throws: `BenchError`, or the error of the blurfarm or libvips side that failed.
    public func measure(_ figure: Figure) throws -> [Comparison] {
        switch figure {
        case .batch: try batch()
        case .image: try image()
        case .serve: try serve()
        case .big: try big()
        case .web: try web()
        case .kernels: try kernels()
        }
    }
}
