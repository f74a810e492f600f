import BlurfarmCore
import BlurfarmEngine
import BlurfarmImageIO
import BlurfarmKernels

/// blurfarm's kernels through its renderer (Float32 working buffers, one thread) beside the
/// libvips that blurfarm links (Debian's), in memory, in the same run: `blurfarm bench engine`.
///
/// blurfarm is timed from its working buffer to a new one, libvips from 8-bit pixels in memory
/// to pixels in memory (the input wrapped once, outside the timing). Each image on 3 bands
/// (blurfarm: opaque) and on 4 (RGBA with alpha 255; blurfarm: premultiplied RGBA).
public struct EngineBench: Sendable {
    /// One filter on one band count, blurfarm beside one libvips operation.
    public struct Row: Sendable, Hashable, Codable {
        /// The filter and its parameters, e.g. "gaussian sigma=8".
        public var filter: String
        public var bands: Int
        /// blurfarm's median, in seconds.
        public var blurfarmSeconds: Double
        /// Megapixels a second of blurfarm's median.
        public var megapixelsPerSecond: Double
        /// The libvips operation ("gaussblur", "conv (same mask)").
        public var libvipsOperation: String
        /// "integer" or "float".
        public var precision: String
        /// libvips's median, in seconds.
        public var libvipsSeconds: Double
        /// libvips time / blurfarm time: above 1, blurfarm is faster.
        public var ratio: Double
    }

    public var image: String
    public var runs: Int
    public var sigmas: [Double]
    public var tile: Int
    /// Whether to time libvips's float-precision gaussblur too (slow at large sigma).
    public var includeFloat: Bool

    public init(image: String, runs: Int, sigmas: [Double], tile: Int = RenderSchedule.benchmarkTileSize, includeFloat: Bool = true) {
        self.image = image
        self.runs = max(runs, 1)
        self.sigmas = sigmas
        self.tile = tile
        self.includeFloat = includeFloat
    }

    /// The linked libvips's version.
    public static var linkedLibvips: String { ImageReader.libvipsVersion }

    /// Times every filter; the rows in order: each sigma on 3 then 4 bands, then motion.
    ///
    /// - Throws: `ImageIOError` when the image cannot be read or libvips fails.
    public func run() throws -> [Row] {
        LibvipsReference.setConcurrency(1)
        let pixels = try ImageReader.read(image).pixels
        let megapixels = Double(pixels.rect.area) / 1e6
        let rgb = try LibvipsReference.Image.eightBit(from: pixels, bands: 3)
        let rgba = try LibvipsReference.Image.eightBit(from: pixels, bands: 4)
        func time(_ body: () throws -> Void) rethrows -> Double {
            BenchStatistics.median(try (0..<runs).map { _ in try BenchStatistics.wallSeconds(body) })
        }
        // The same pixels with alpha stored (4 channels), to compare with libvips on 4 bands.
        let withAlpha = PixelBuffer(rect: pixels.rect, channels: 4)
        for y in 0..<pixels.rect.height { for x in 0..<pixels.rect.width { withAlpha[x, y] = pixels[x, y] } }
        func blurfarm(_ filter: any Filter, bands: Int) -> Double {
            let renderer = Renderer(
                chain: FilterChain(filters: [filter]), tileSize: tile, executor: ThreadedTileExecutor(threads: 1))
            let source = bands == 4 ? withAlpha : pixels
            return time { _ = renderer.render(source) }
        }
        var rows: [Row] = []
        func row(_ name: String, _ ours: Double, _ what: String, _ bands: Int, _ precision: String, _ theirs: Double) {
            rows.append(
                Row(
                    filter: name, bands: bands, blurfarmSeconds: ours, megapixelsPerSecond: megapixels / ours,
                    libvipsOperation: what, precision: precision, libvipsSeconds: theirs, ratio: theirs / ours))
        }
        for s in sigmas {
            for (img, bands) in [(rgb, 3), (rgba, 4)] {
                let ours = blurfarm(GaussianBlur(sigma: s), bands: bands)
                let name = "gaussian sigma=\(ParameterValue.number(s))"
                let integer = BenchStatistics.median(
                    try LibvipsReference.timeGaussianBlur(img, sigma: s, precision: .integer, runs: runs))
                row(name, ours, "gaussblur", bands, "integer", integer)
                if includeFloat {
                    let float = BenchStatistics.median(
                        try LibvipsReference.timeGaussianBlur(img, sigma: s, precision: .float, runs: runs))
                    row(name, ours, "gaussblur", bands, "float", float)
                }
            }
        }
        let motion = MotionBlur(radius: 20, angle: 30)
        let (mask, maskWidth, maskHeight) = motion.mask.denseMask
        for (img, bands) in [(rgb, 3), (rgba, 4)] {
            let ours = blurfarm(motion, bands: bands)
            let theirs = BenchStatistics.median(
                try LibvipsReference.timeConvolve(
                    img, mask: mask, maskWidth: maskWidth, maskHeight: maskHeight, precision: .float, runs: runs))
            row("motion radius=20 angle=30", ours, "conv (same mask)", bands, "float", theirs)
        }
        return rows
    }
}

extension LibvipsReference.Image {
    /// The 8-bit interleaved copy of premultiplied pixels that libvips blurs in the benchmark:
    /// for an opaque image, the decoded 8-bit values (3 bands: RGB, 4 bands: RGBA).
    static func eightBit(from pixels: PixelBuffer, bands: Int) throws -> LibvipsReference.Image {
        let rect = pixels.rect
        var data = [UInt8](repeating: 0, count: rect.area * bands)
        var i = 0
        for y in rect.y..<rect.maxY {
            for x in rect.x..<rect.maxX {
                let p = pixels[x, y]
                let a = p[3]
                for c in 0..<bands {
                    let v = c == 3 ? a : (a > 0 ? p[c] / a : 0)
                    data[i] = UInt8((min(max(v, 0), 1) * 255).rounded())
                    i += 1
                }
            }
        }
        return LibvipsReference.Image(width: rect.width, height: rect.height, bands: bands, isFloat: false, data: data)
    }
}
