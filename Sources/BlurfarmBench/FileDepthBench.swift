import BlurfarmCore
import BlurfarmImageIO
import BlurfarmKernels

/// The gaussian at the file's depth, 8-bit samples in and 8-bit samples out, as one tile, beside
/// OpenCV's `cv2.GaussianBlur` (scripts/opencv-bench.py) and the linked libvips's integer
/// gaussblur on the same pixels, single-threaded, in the same run: `blurfarm bench file-depth`.
/// blurfarm and OpenCV in processor time (steady on a busy machine), libvips in wall time.
public struct FileDepthBench: Sendable {
    /// One sigma on one band count.
    public struct Row: Sendable, Hashable, Codable {
        public var sigma: Double
        public var bands: Int
        /// blurfarm's median processor seconds.
        public var blurfarmSeconds: Double
        /// OpenCV's median processor seconds, when it ran.
        public var opencvSeconds: Double?
        /// OpenCV time / blurfarm time: above 1, blurfarm is faster.
        public var opencvRatio: Double?
        /// The linked libvips's median wall seconds.
        public var libvipsSeconds: Double
        /// libvips time / blurfarm time.
        public var libvipsRatio: Double
    }

    /// The rows, OpenCV's version and why OpenCV is missing, if it is.
    public struct Result: Sendable, Hashable, Codable {
        public var rows: [Row]
        public var opencvVersion: String?
        public var note: String?
    }

    public var image: String
    public var runs: Int
    public var sigmas: [Double]
    public var locations: BenchLocations
    public var includeOpenCV: Bool

    public init(image: String, runs: Int, sigmas: [Double], locations: BenchLocations, includeOpenCV: Bool = true) {
        self.image = image
        self.runs = max(runs, 1)
        self.sigmas = sigmas
        self.locations = locations
        self.includeOpenCV = includeOpenCV
    }

    /// Times each sigma on 3 and on 4 bands.
    ///
    /// - Throws: `ImageIOError` when the image cannot be read or libvips fails.
    public func run() throws -> Result {
        LibvipsReference.setConcurrency(1)
        let pixels = try ImageReader.read(image).pixels
        let rect = pixels.rect
        var result = Result(rows: [], opencvVersion: nil, note: nil)
        let opencv = OpenCVRunner(python: locations.opencvPython, script: locations.scripts + "/opencv-bench.py")
        for bands in [3, 4] {
            let libvipsImage = try LibvipsReference.Image.eightBit(from: pixels, bands: bands)
            let source = SampleBuffer<UInt8>(rect: rect, channels: bands)
            source.withUnsafeSamples { $0.update(from: libvipsImage.data, count: libvipsImage.data.count) }
            let theirs =
                includeOpenCV
                ? try opencv.measure(
                    libvipsImage.data, width: rect.width, height: rect.height, bands: bands, sigmas: sigmas, runs: runs,
                    note: &result.note) : nil
            result.opencvVersion = theirs?.version ?? result.opencvVersion
            let output = SampleBuffer<UInt8>(rect: rect, channels: bands)
            for (i, s) in sigmas.enumerated() {
                let gaussian = GaussianBlur(sigma: s)
                let ours = BenchStatistics.median(
                    (0..<runs).map { _ in
                        BenchStatistics.processorSeconds {
                            gaussian.render(tile: rect, source: source, image: rect, edge: .clamp, into: output)
                        }
                    })
                let vips = BenchStatistics.median(
                    try LibvipsReference.timeGaussianBlur(libvipsImage, sigma: s, precision: .integer, runs: runs))
                result.rows.append(
                    Row(
                        sigma: s, bands: bands, blurfarmSeconds: ours, opencvSeconds: theirs?.seconds[i],
                        opencvRatio: theirs.map { $0.seconds[i] / ours }, libvipsSeconds: vips, libvipsRatio: vips / ours))
            }
        }
        return result
    }
}
