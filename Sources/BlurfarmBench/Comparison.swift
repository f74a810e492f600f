/// One figure of `blurfarm bench` beside its baseline (libvips 8.18 warm in-process, its codec
/// floor, OpenCV, or blurfarm's own first run), measured in the same run, alternating.
public struct Comparison: Sendable, Hashable, Codable {
    /// The figures of docs/performance.md.
    public enum Figure: String, Sendable, Hashable, Codable, CaseIterable {
        /// 48 × 1080p JPEG → gaussian → JPEG q90, `blurfarm run` vs 2 warm libvips processes.
        case batch
        /// The same batch against 2 libvips processes that only decode and encode.
        case codecFloor = "codec-floor"
        /// One 3840×2160 JPEG, `blurfarm apply` (a cold process) vs libvips at concurrency 2.
        case image
        /// The same at `--threads 1` vs libvips at concurrency 1.
        case imageOneThread = "image-threads-1"
        /// The one image submitted to a warm `blurfarm serve` by `blurfarm submit --wait` (a
        /// client process) vs libvips at concurrency 2.
        case serve
        /// The same submitted by a client that stays (the API from a program's own process).
        case serveWarmClient = "serve-warm-client"
        /// A 254 MP JPEG, σ8, 2 cores, with both peaks.
        case big
        /// 24 photos → srcset 1280/640/320 + a 640-wide σ8 backdrop, q85.
        case web
        /// The gaussian alone in memory, one thread, vs libvips 8.18's gaussblur.
        case kernel
        /// The same vs OpenCV's GaussianBlur.
        case kernelOpenCV = "kernel-opencv"
        /// The batch's no-change rerun against its first run.
        case cron
    }

    public var figure: Figure
    /// What varies within the figure: "sigma 8", "RGBA sigma 2".
    public var label: String
    /// blurfarm's median, in seconds.
    public var blurfarmSeconds: Double
    /// The baseline's median, in seconds.
    public var baselineSeconds: Double
    /// blurfarm / baseline: below 1, blurfarm is faster.
    public var ratio: Double
    /// What the baseline is: "libvips 8.18.7, 2 processes", "OpenCV 4.10.0", "first run".
    public var baseline: String
    /// Every run's blurfarm time, in seconds, in order.
    public var blurfarmRuns: [Double]
    /// Every run's baseline time, in seconds, in order (alternating with blurfarm's).
    public var baselineRuns: [Double]
    /// blurfarm's peak memory, coordinator and workers together (their largest proportional
    /// sum), in bytes, where measured.
    public var blurfarmPeakBytes: Int?
    /// The baseline process's peak resident memory, in bytes, where measured.
    public var baselinePeakBytes: Int?

    public init(
        figure: Figure, label: String, blurfarmRuns: [Double], baselineRuns: [Double], baseline: String,
        blurfarmPeakBytes: Int? = nil, baselinePeakBytes: Int? = nil
    ) {
        self.figure = figure
        self.label = label
        self.blurfarmRuns = blurfarmRuns
        self.baselineRuns = baselineRuns
        self.blurfarmSeconds = BenchStatistics.median(blurfarmRuns)
        self.baselineSeconds = BenchStatistics.median(baselineRuns)
        self.ratio = baselineSeconds > 0 ? blurfarmSeconds / baselineSeconds : 0
        self.baseline = baseline
        self.blurfarmPeakBytes = blurfarmPeakBytes
        self.baselinePeakBytes = baselinePeakBytes
    }
}

/// What a run of the libvips 8.18 comparison measured, with what it ran on.
public struct ComparisonReport: Sendable, Hashable, Codable {
    public var blurfarmVersion: String
    /// The libvips the lanes loaded ("8.18.7").
    public var libvipsVersion: String
    /// The libvips blurfarm links (Debian's).
    public var linkedLibvipsVersion: String
    public var machine: String
    /// When the run started, ISO 8601 in UTC.
    public var date: String
    public var runs: Int
    public var rows: [Comparison]

    public init(
        blurfarmVersion: String, libvipsVersion: String, linkedLibvipsVersion: String, machine: String, date: String, runs: Int,
        rows: [Comparison]
    ) {
        self.blurfarmVersion = blurfarmVersion
        self.libvipsVersion = libvipsVersion
        self.linkedLibvipsVersion = linkedLibvipsVersion
        self.machine = machine
        self.date = date
        self.runs = runs
        self.rows = rows
    }
}
