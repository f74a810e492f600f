import BlurfarmKernels
import BlurfarmManifest

/// The manifest parser on a generated manifest: `blurfarm bench manifest`.
public struct ManifestBench: Sendable {
    /// The medians of parsing and of parsing and checking.
    public struct Result: Sendable, Hashable, Codable {
        /// The generated manifest's size, in bytes.
        public var bytes: Int
        /// Parsing to a located tree, median seconds.
        public var parseSeconds: Double
        /// Parsing and checking into a job, median seconds.
        public var decodeSeconds: Double
    }

    public var bytes: Int
    public var runs: Int

    public init(bytes: Int, runs: Int) {
        self.bytes = bytes
        self.runs = max(runs, 1)
    }

    /// Times parsing and checking a generated manifest of about `bytes` bytes.
    public func run() -> Result {
        let text = Array(SyntheticManifest.make(bytes: bytes).utf8)
        let descriptors = FilterRegistry.builtIn.descriptors
        var parse: [Double] = [], decode: [Double] = []
        for _ in 0..<runs {
            parse.append(BenchStatistics.wallSeconds { _ = ManifestParser.parse(text, file: "bench.job") })
            decode.append(BenchStatistics.wallSeconds { _ = JobDecoder.decode(text, file: "bench.job", filters: descriptors) })
        }
        return Result(
            bytes: text.count, parseSeconds: BenchStatistics.median(parse), decodeSeconds: BenchStatistics.median(decode))
    }
}
