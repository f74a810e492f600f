import BlurfarmCommandSupport
import ArgumentParser
import BlurfarmBench
import BlurfarmFarm
import Foundation

/// `blurfarm bench`: the benchmarks of the BlurfarmBench module, as subcommands; this file
/// parses, prints and maps their errors to exit codes.
struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Time blurfarm beside libvips 8.18 warm in-process (and beside its other baselines).",
        discussion: """
            'blurfarm bench all' runs every figure of docs/performance.md, each beside libvips \
            8.18 warm in-process (pyvips-binary in .venv-bench, made by scripts/setup.sh; one \
            long-lived process per lane, driven by scripts/vips818-bench.py), with the same exact \
            3-sigma mask (gaussblur min_ampl 0.011), blurfarm and libvips alternating, medians of \
            --runs runs, ratios blurfarm / libvips (below 1: blurfarm is faster). Build with \
            -c release.

            Paths (docs/performance.md): the repository is found above the executable, the \
            corpus at $BLURFARM_CORPUS or shared/corpus beside the repository or above it, the \
            Python at $BLURFARM_BENCH_VENV/bin/python or the repository's .venv-bench, the cache \
            of generated images at $XDG_CACHE_HOME/blurfarm-bench or ~/.cache/blurfarm-bench.
            """,
        subcommands: [
            BenchAll.self, BenchBatch.self, BenchImage.self, BenchServe.self, BenchBig.self, BenchWeb.self, BenchKernels.self,
            BenchEngine.self, BenchFileDepth.self, BenchManifest.self, BenchFarm.self, BenchFaces.self, BenchScale.self,
        ],
        defaultSubcommand: BenchAll.self)

    /// The running executable: what the benchmarks time and where the lookup starts.
    static var executable: String { Installation.executable }
}

/// The options every benchmark shares.
struct BenchOptions: ParsableArguments {
    @Option(help: "Runs of each side per figure; the median is printed (at least 3 for published figures).")
    var runs = 3

    @Option(help: "The shared corpus (default: $BLURFARM_CORPUS, else shared/corpus beside the repository or above it).")
    var corpus: String?

    @Option(help: "The folder of vips818-bench.py and opencv-bench.py (default: the repository's scripts/).")
    var scripts: String?

    @Option(help: "The Python with pyvips and libvips 8.18 (default: the repository's .venv-bench/bin/python).")
    var python: String?

    @Option(help: "The Python with OpenCV for scripts/opencv-bench.py.")
    var opencvPython = "python3"

    @Option(help: "Where generated inputs are kept (default: $XDG_CACHE_HOME/blurfarm-bench or ~/.cache/blurfarm-bench).")
    var cache: String?

    @Flag(help: "Print the typed rows as JSON instead of a table.")
    var json = false

    func locations() throws(BenchError) -> BenchLocations {
        try BenchLocations.find(
            executable: Bench.executable, scripts: scripts, corpus: corpus, python: python, opencvPython: opencvPython,
            cache: cache)
    }
}

extension Benchmark {
    /// Runs, and prints the result: as JSON with `json` (docs/json.md's encoding), else as its table.
    func print(json: Bool) throws {
        let result = try run()
        if json { return try printJSON(result) }
        Swift.print(text(result, version: Release.version))
    }
}
