import BlurfarmCommandSupport
import ArgumentParser
import BlurfarmBench
import Foundation

/// The options of the figures beside libvips 8.18 (after those every benchmark shares).
struct ComparisonOptions: ParsableArguments {
    @OptionGroup var options: BenchOptions

    @Option(help: "Gaussian sigmas of the batch and the one image (repeatable).")
    var sigma: [Double] = [2, 8, 32]

    @Option(help: "Gaussian sigmas of the kernels figure (repeatable).")
    var kernelSigma: [Double] = [2, 8, 32]

    @Option(help: "The batch: at most this many images of corpus/batch1080.")
    var images = 48

    @Option(help: "The one image (and the source of the big one), relative to the corpus.")
    var image = "special/bench-3840x2160.jpg"

    @Option(help: "The web job: this many photos, generated from corpus/photos into the cache.")
    var photos = 24

    @Option(help: "The big image's width (generated from the one image into the cache).")
    var bigWidth = 21248

    @Option(help: "The big image's height.")
    var bigHeight = 11952

    @Option(help: "libvips processes of the batch and the web job.")
    var lanes = 2

    @Flag(help: "Leave OpenCV out of the kernels figure.")
    var skipOpencv = false

    var settings: LibvipsComparison.Settings {
        LibvipsComparison.Settings(
            runs: options.runs, sigmas: sigma, batchImages: images, image: image, bigWidth: bigWidth, bigHeight: bigHeight,
            webPhotos: photos, kernelSigmas: kernelSigma, includeOpenCV: !skipOpencv, lanes: lanes)
    }
}

/// A command that runs some of the figures beside libvips 8.18 and prints them.
protocol ComparisonCommand: FarmCommand {
    var comparison: ComparisonOptions { get }
    /// The figures to run, in order.
    var figures: [BenchFigure] { get }
}

typealias BenchFigure = LibvipsComparison.Figure
extension BenchFigure: ExpressibleByArgument {}

extension ComparisonCommand {
    func execute() throws {
        let started = Date()
        let (options, settings) = (comparison.options, comparison.settings)
        let bench = LibvipsComparison(executable: Bench.executable, locations: try options.locations(), settings: settings)
        if !options.json { print(try bench.heading(version: Release.version)) }
        var rows: [Comparison] = []
        for figure in figures {
            let measured = try bench.measure(figure)
            rows += measured
            if !options.json { print(Comparison.table(measured).text + "\n") }
        }
        if options.json { try printJSON(bench.report(rows, version: Release.version, started: started)) }
    }
}

struct BenchAll: ComparisonCommand {
    static let configuration = CommandConfiguration(
        commandName: "all", abstract: "Every figure beside libvips 8.18: batch (with the codec floor and cron), image, serve, big, web, kernels.")
    @OptionGroup var comparison: ComparisonOptions
    @Option(help: "Only these figures (repeatable): batch, image, serve, big, web, kernels.")
    var figure: [BenchFigure] = BenchFigure.allCases
    var figures: [BenchFigure] { figure }
}

struct BenchBatch: ComparisonCommand {
    static let configuration = CommandConfiguration(
        commandName: "batch",
        abstract: "The 48 x 1080p batch: 'blurfarm run' vs 2 warm libvips processes, vs their codec floor, and the no-change rerun (cron).")
    @OptionGroup var comparison: ComparisonOptions
    var figures: [BenchFigure] { [.batch] }
}

struct BenchImage: ComparisonCommand {
    static let configuration = CommandConfiguration(
        commandName: "image", abstract: "One 3840x2160 JPEG: 'blurfarm apply' (cold) vs libvips in-process at concurrency 2, and at --threads 1 vs 1.")
    @OptionGroup var comparison: ComparisonOptions
    var figures: [BenchFigure] { [.image] }
}

struct BenchServe: ComparisonCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "The 3840x2160 JPEG submitted to a warm 'blurfarm serve' vs libvips in-process at concurrency 2.")
    @OptionGroup var comparison: ComparisonOptions
    var figures: [BenchFigure] { [.serve] }
}

struct BenchBig: ComparisonCommand {
    static let configuration = CommandConfiguration(
        commandName: "big", abstract: "A 254 MP JPEG, sigma 8, 2 cores, with both peaks of memory.")
    @OptionGroup var comparison: ComparisonOptions
    var figures: [BenchFigure] { [.big] }
}

struct BenchWeb: ComparisonCommand {
    static let configuration = CommandConfiguration(
        commandName: "web", abstract: "24 photos to srcset 1280/640/320 and a 640-wide sigma 8 backdrop vs a 2-process libvips pool.")
    @OptionGroup var comparison: ComparisonOptions
    var figures: [BenchFigure] { [.web] }
}

struct BenchKernels: ComparisonCommand {
    static let configuration = CommandConfiguration(
        commandName: "kernels", abstract: "The gaussian in memory, one thread, 8-bit RGB and RGBA, vs libvips 8.18's gaussblur and OpenCV.")
    @OptionGroup var comparison: ComparisonOptions
    var figures: [BenchFigure] { [.kernels] }
}
