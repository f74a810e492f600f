import BlurfarmCommandSupport
import ArgumentParser
import BlurfarmBench
import BlurfarmCore
import Foundation

/// The image and sigmas of the in-memory kernel benchmarks.
struct KernelImageOptions: ParsableArguments {
    @Option(help: "The image: a file (such as samples/plasma-Kite.jpg), else a path relative to the corpus.")
    var image = "special/bench-3840x2160.jpg"

    @Option(help: "Gaussian sigmas to time (repeatable).")
    var sigma: [Double] = [2, 8, 32]

    /// The image's path: `--image` itself when it names a file (no corpus needed), else in the
    /// corpus of `locations`.
    func path(_ locations: () throws(BenchError) -> BenchLocations) throws(BenchError) -> String {
        FileManager.default.fileExists(atPath: image) ? image : try locations().corpus + "/" + image
    }
}

/// `blurfarm bench engine`: the kernels through the renderer beside the linked libvips.
struct BenchEngine: FarmCommand {
    static let configuration = CommandConfiguration(
        commandName: "engine",
        abstract: "blurfarm's kernels (Float32, one thread) beside the libvips blurfarm links, in memory.",
        discussion: """
            Times blurfarm's gaussian at each --sigma and its motion blur (radius 20, angle 30), \
            and beside them: vips_gaussblur at integer and float precision and vips_conv with \
            blurfarm's own motion mask, on 3 bands and on 4 (RGBA, alpha 255). ratio = libvips \
            time / blurfarm time (above 1: blurfarm is faster).
            """)
    @OptionGroup var options: BenchOptions
    @OptionGroup var kernel: KernelImageOptions
    @Option(help: "Tile side for blurfarm.")
    var tile = RenderSchedule.benchmarkTileSize
    @Flag(help: "Leave out libvips's float-precision gaussblur (slow at large sigma).")
    var skipFloat = false

    func execute() throws {
        let path = try kernel.path(options.locations)
        let bench = EngineBench(image: path, runs: options.runs, sigmas: kernel.sigma, tile: tile, includeFloat: !skipFloat)
        try bench.print(json: options.json)
    }
}

/// `blurfarm bench file-depth`: the 8-bit gaussian beside OpenCV and the linked libvips.
struct BenchFileDepth: FarmCommand {
    static let configuration = CommandConfiguration(
        commandName: "file-depth",
        abstract: "The gaussian 8-bit in, 8-bit out, one thread, beside OpenCV's GaussianBlur and the linked libvips.",
        discussion: """
            blurfarm's file-depth gaussian as one tile into an output allocated once, OpenCV's \
            GaussianBlur likewise (ksize 2*ceil(3 sigma)+1, BORDER_REPLICATE, cv2.setNumThreads(1), \
            scripts/opencv-bench.py), both in processor time, and libvips's integer gaussblur in \
            wall time; ratio = their time / blurfarm's time (above 1: blurfarm is faster).
            """)
    @OptionGroup var options: BenchOptions
    @OptionGroup var kernel: KernelImageOptions
    @Flag(help: "Leave out OpenCV.")
    var skipOpencv = false

    func execute() throws {
        let locations = try options.locations()
        let path = try kernel.path { locations }
        let bench = FileDepthBench(
            image: path, runs: options.runs, sigmas: kernel.sigma, locations: locations, includeOpenCV: !skipOpencv)
        try bench.print(json: options.json)
    }
}

/// `blurfarm bench manifest`: the manifest parser on a generated manifest.
struct BenchManifest: FarmCommand {
    static let configuration = CommandConfiguration(
        commandName: "manifest", abstract: "Time the manifest parser on a generated manifest.")
    @OptionGroup var options: BenchOptions
    @Option(help: "Size of the generated manifest, in bytes.")
    var manifestBytes = 1 << 20

    func execute() throws {
        let bench = ManifestBench(bytes: manifestBytes, runs: options.runs)
        try bench.print(json: options.json)
    }
}

/// `blurfarm bench farm PATH...`: `blurfarm run` beside `parallel vips` with peak memory.
struct BenchFarm: FarmCommand {
    static let configuration = CommandConfiguration(
        commandName: "farm",
        abstract: "Time 'blurfarm run' on images beside 'parallel -j N vips gaussblur' (Debian's vips), with peak memory.",
        discussion: """
            The peaks: the coordinator's and a worker's resident peaks, and their proportional set \
            sizes together (shared pages counted once). ratio = vips time / blurfarm time; rerun: \
            blurfarm run again at once, every output up to date.
            """)
    @OptionGroup var options: BenchOptions
    @Argument(help: "Images or folders of them.")
    var paths: [String]
    @Option(help: "Worker counts to time (repeatable; default 2); 0 is the in-process engine.")
    var workers: [Int] = []
    @Option(help: "The gaussian's sigma.")
    var sigma = 8.0
    @Option(help: "Make thumbnails inside this many pixels square (JPEG q 80) instead of the gaussian, beside vipsthumbnail.")
    var thumbnail: Int?
    @Option(help: "The batch is the images this many times over.")
    var copies = 1
    @Flag(help: "Leave out vips.")
    var skipVips = false

    func execute() throws {
        let bench = FarmBench(
            paths: paths, copies: copies, workers: workers, sigma: sigma, thumbnail: thumbnail, runs: options.runs,
            vips: !skipVips, executable: Bench.executable)
        try bench.print(json: options.json)
    }
}

struct BenchFaces: FarmCommand {
    static let configuration = CommandConfiguration(
        commandName: "faces",
        abstract: "Time 'apply --redact faces' on 6-16 MP photos beside deface 1.5.0, with peak memory and the faces found.",
        discussion: """
            The photos are made once in the cache (scripts/faces-bench.py: the corpus's photos \
            made 6 to 16 MP with NASA's astronaut pasted in at up to seven sizes). deface runs \
            from .venv-deface (scripts/setup.sh makes it) with its defaults. Every blurfarm run \
            starts from an empty state folder: it detects every photo. throughput = deface's \
            time / blurfarm's; memory = the peak of the redacting job / the same job redacting \
            whole photos (coordinator and workers, shared pages counted once).
            """)
    @OptionGroup var options: BenchOptions
    @Option(help: "The Python with deface and onnxruntime (default: the repository's .venv-deface/bin/python).")
    var defacePython: String?

    func execute() throws {
        let locations = try options.locations()
        let bench = FaceBench(
            locations: locations, defacePython: defacePython ?? locations.scripts + "/../.venv-deface/bin/python",
            runs: options.runs, executable: Bench.executable)
        try bench.print(json: options.json)
    }
}

struct BenchScale: FarmCommand {
    static let configuration = CommandConfiguration(
        commandName: "scale",
        abstract: "A photo library kept up to date: the first run and a no-change run of 1k, 10k and 100k small inputs, beside libvips and find.",
        discussion: """
            For each --inputs: that many 64 x 48 PNGs in 20 folders (made once in the cache), a job of three \
            variants (a 24 px thumbnail, a sigma 2 blur to JPEG, a WebP conversion). The first run from nothing \
            and a run with nothing changed, timed (medians of --runs), their peak memory taken (coordinator and \
            workers, shared pages once), the first beside warm libvips 8.18 lanes making the same outputs, the \
            second beside `find` stating every input and output; then a run making a deleted output again.
            """)
    @OptionGroup var options: BenchOptions
    @Option(help: "The libraries' numbers of inputs (repeatable).")
    var inputs: [Int] = [1000, 10000, 100_000]

    func validate() throws {
        if inputs.isEmpty || inputs.contains(where: { $0 < 1 }) { throw ValidationError("--inputs must be 1 or more") }
    }

    func execute() throws {
        let bench = ScaleBench(locations: try options.locations(), sizes: inputs, runs: options.runs, executable: Bench.executable)
        try bench.print(json: options.json)
    }
}
