import ArgumentParser
import BlurfarmCore
import BlurfarmEngine
import BlurfarmImageIO
import BlurfarmKernels
import BlurfarmManifest
import Foundation

/// `blurfarm bench`: blurfarm's kernels beside libvips, in the same run, single-threaded.
struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Time blurfarm's kernels beside libvips on one image in memory, single-threaded.",
        discussion: """
            Times blurfarm's gaussian at each --sigma and its motion blur (radius 20, angle 30), \
            and beside them, in the same run: vips_gaussblur at integer precision on the 8-bit \
            image (libvips's fastest path) and at float precision, and vips_conv at float \
            precision with blurfarm's own sampled motion mask. Each is run on the image's 3 \
            bands (blurfarm: an opaque image, 3 channels) and on 4 bands (RGBA with alpha 255; \
            blurfarm: premultiplied RGBA).

            blurfarm is timed from its working buffer (Float32) to a new one, libvips from \
            8-bit pixels in memory to pixels in memory (the input is wrapped for libvips once, \
            outside the timing; the output is computed with vips_image_write_to_memory). Each \
            figure is the median of --runs runs. Build with -c release.

            A second table times the gaussian at the file's depth (8-bit samples in, 8-bit \
            samples out, as one tile) beside OpenCV's cv2.GaussianBlur, single-threaded, with \
            the same mask reach and border (scripts/opencv-bench.py, run with --python; \
            scripts/setup.sh installs opencv-python-headless), and libvips's integer gaussblur.
            """)

    @Option(help: "The image (3840x2160 for the published figures).")
    var image = "../shared/corpus/special/bench-3840x2160.jpg"

    @Option(help: "Runs per figure; the median is printed.")
    var runs = 5

    @Option(help: "Gaussian sigmas to time.")
    var sigma: [Double] = [2, 8, 32]

    @Option(help: "Tile side for blurfarm.")
    var tile = Renderer.defaultTileSize

    @Flag(help: "Leave out libvips's float-precision gaussblur (slow at large sigma).")
    var skipFloat = false

    @Flag(help: "Time the manifest parser on a generated manifest instead of the kernels.")
    var manifest = false

    @Option(help: ArgumentHelp(
        "Time 'blurfarm run' on these images (files or folders; repeatable) instead of the kernels, beside "
            + "'parallel -j N vips gaussblur' on the same files, with the peak memory of the coordinator and its workers "
            + "(each one's resident peak, and their proportional set sizes together: shared pages counted once).",
        valueName: "path"))
    var farm: [String] = []

    @Option(help: "With --farm: worker counts to time (repeatable; default 2); 0 is the in-process engine.")
    var workers: [Int] = []

    @Option(help: "With --farm: the gaussian's sigma.")
    var farmSigma = 8.0

    @Option(help: "With --farm: make thumbnails inside this many pixels square (JPEG q 80) instead of the gaussian, beside vipsthumbnail.")
    var thumbnail: Int?

    @Option(help: "With --farm: the batch is the images this many times over.")
    var copies = 1

    @Flag(help: "With --farm: leave out vips.")
    var skipVips = false

    @Flag(help: "Time only the 8-bit comparison (the file-depth gaussian beside OpenCV and libvips).")
    var fileDepth = false

    @Flag(help: "Leave out OpenCV (scripts/opencv-bench.py) from the 8-bit comparison.")
    var skipOpencv = false

    @Option(help: "The Python interpreter that runs scripts/opencv-bench.py.")
    var python = "python3"

    @Option(help: "Size of the generated manifest, in bytes.")
    var manifestBytes = 1 << 20

    func run() throws {
        if manifest {
            measureManifest()
            return
        }
        if !farm.isEmpty {
            do {
                try FarmBench(
                    paths: farm, copies: max(copies, 1), workers: workers.isEmpty ? [2] : workers, sigma: farmSigma, thumbnail: thumbnail,
                    runs: runs, vips: !skipVips
                ).run()
            } catch let error as CommandError {
                printError(error.message)
                throw ExitCode(error.exitCode)
            }
            return
        }
        do {
            try measure()
        } catch let error as ImageIOError {
            printError(error.description)
            throw ExitCode(1)
        }
    }

    private func measure() throws {
        LibvipsReference.setConcurrency(1)
        let decoded = try ImageReader.read(image)
        let pixels = decoded.pixels
        let megapixels = Double(pixels.rect.area) / 1e6
        let rgb = try LibvipsReference.Image.eightBit(from: pixels, bands: 3)
        let rgba = try LibvipsReference.Image.eightBit(from: pixels, bands: 4)

        print("blurfarm \(Blurfarm.version) bench: \(image), \(pixels.rect.width)x\(pixels.rect.height), single thread")
        print("machine: \(Machine.cpuModel), \(ProcessInfo.processInfo.activeProcessorCount) cores; libvips \(ImageReader.libvipsVersion)")
        if fileDepth {
            print("median of \(runs) runs")
            print("")
            try measureFileDepth(pixels)
            return
        }
        print("median of \(runs) runs; ratio = libvips time / blurfarm time (above 1: blurfarm is faster)")
        print("")
        let header = ["filter", "bands", "blurfarm ms", "MP/s", "libvips", "precision", "ms", "ratio"]
        var rows: [[String]] = []

        func median(_ times: [Double]) -> Double { times.sorted()[times.count / 2] }
        func time(_ body: () throws -> Void) rethrows -> Double {
            let clock = ContinuousClock()
            return median(try (0..<max(runs, 1)).map { _ in try clock.measure(body).seconds })
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
        func row(_ name: String, _ ours: Double, _ what: String, _ bands: Int, _ precision: String, _ theirs: Double) {
            rows.append([
                name, String(bands), ms(ours), String(format: "%.0f", megapixels / ours), what, precision, ms(theirs),
                String(format: "%.2f", theirs / ours),
            ])
        }

        for s in sigma {
            for (img, bands) in [(rgb, 3), (rgba, 4)] {
                let ours = blurfarm(GaussianBlur(sigma: s), bands: bands)
                let integer = median(try LibvipsReference.timeGaussianBlur(img, sigma: s, precision: .integer, runs: runs))
                row("gaussian sigma=\(ParameterValue.number(s))", ours, "gaussblur", bands, "integer", integer)
                if !skipFloat {
                    let float = median(try LibvipsReference.timeGaussianBlur(img, sigma: s, precision: .float, runs: runs))
                    row("gaussian sigma=\(ParameterValue.number(s))", ours, "gaussblur", bands, "float", float)
                }
            }
        }

        let motion = MotionBlur(radius: 20, angle: 30)
        let (mask, maskWidth, maskHeight) = motion.mask.denseMask
        for (img, bands) in [(rgb, 3), (rgba, 4)] {
            let ours = blurfarm(motion, bands: bands)
            let theirs = median(try LibvipsReference.timeConvolve(
                img, mask: mask, maskWidth: maskWidth, maskHeight: maskHeight, precision: .float, runs: runs))
            row("motion radius=20 angle=30", ours, "conv (same mask)", bands, "float", theirs)
        }
        printTable(header, rows)
        print("")
        try measureFileDepth(pixels)
    }

    func ms(_ seconds: Double) -> String { String(format: "%.0f", seconds * 1000) }

    func printTable(_ header: [String], _ rows: [[String]]) {
        let all = [header] + rows
        let widths = header.indices.map { c in all.map { $0[c].count }.max()! }
        for (i, r) in all.enumerated() {
            print(r.enumerated().map { c, v in v.padding(toLength: widths[c], withPad: " ", startingAt: 0) }
                .joined(separator: "  "))
            if i == 0 { print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")) }
        }
    }
}

/// Facts about this machine for benchmark reports.
enum Machine {
    static var cpuModel: String {
        guard let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
            let line = info.split(separator: "\n").first(where: { $0.hasPrefix("model name") }),
            let model = line.split(separator: ":", maxSplits: 1).last
        else { return "unknown CPU" }
        return model.trimmingCharacters(in: .whitespaces)
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

extension Bench {
    /// Times parsing and checking a generated manifest of `manifestBytes` bytes.
    func measureManifest() {
        let text = SyntheticManifest.make(bytes: manifestBytes)
        let bytes = Array(text.utf8)
        let descriptors = FilterRegistry.builtIn.descriptors
        let clock = ContinuousClock()
        var parse: [Double] = [], decode: [Double] = []
        for _ in 0..<max(runs, 1) {
            parse.append(clock.measure { _ = ManifestParser.parse(bytes, file: "bench.job") }.seconds)
            decode.append(clock.measure { _ = JobDecoder.decode(bytes, file: "bench.job", filters: descriptors) }.seconds)
        }
        let median = { (t: [Double]) in t.sorted()[t.count / 2] }
        print("blurfarm \(Blurfarm.version) bench --manifest: \(bytes.count) bytes, median of \(runs) runs")
        print(String(format: "parse to a located tree: %.1f ms; parse and check into a job: %.1f ms",
            median(parse) * 1000, median(decode) * 1000))
    }
}
