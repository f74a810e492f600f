import Foundation

/// Where the benchmarks find what they need, each overridable by an option of `blurfarm bench`.
///
/// The lookup (docs/performance.md, "Running the benchmarks"):
/// - the **repository** is the first folder holding `scripts/vips818-bench.py`, going up from the
///   `blurfarm` executable's folder (`.build/<triple>/release/blurfarm` sits inside it), then from
///   the working folder;
/// - the **scripts** are its `scripts/`;
/// - the **corpus** is `$BLURFARM_CORPUS`, else the first `shared/corpus` beside the repository or
///   one of its ancestors (`/work/main` finds `/work/shared/corpus`);
/// - the **Python** with libvips 8.18 is `$BLURFARM_BENCH_VENV/bin/python`, else the repository's
///   `.venv-bench/bin/python` (scripts/setup.sh makes it);
/// - the **cache** of generated images is `$XDG_CACHE_HOME/blurfarm-bench`, else
///   `~/.cache/blurfarm-bench`.
public struct BenchLocations: Sendable, Hashable {
    /// The folder of scripts/vips818-bench.py and scripts/opencv-bench.py.
    public var scripts: String
    /// The shared corpus (`batch1080/`, `photos/`, `special/`).
    public var corpus: String
    /// The Python interpreter with pyvips and libvips 8.18.
    public var python: String
    /// The Python interpreter with OpenCV (scripts/setup.sh installs it for `python3`).
    public var opencvPython: String
    /// Where generated inputs (the 254 MP image, the web photos) are kept between runs.
    public var cache: String

    public init(scripts: String, corpus: String, python: String, opencvPython: String, cache: String) {
        self.scripts = scripts
        self.corpus = corpus
        self.python = python
        self.opencvPython = opencvPython
        self.cache = cache
    }

    /// The locations found by the lookup above from `executable` (the running `blurfarm`),
    /// each given value taking the place of its default.
    ///
    /// - Throws: `BenchError` naming the option to give when the repository or the corpus
    ///   cannot be found.
    public static func find(
        executable: String, scripts: String? = nil, corpus: String? = nil, python: String? = nil,
        opencvPython: String? = nil, cache: String? = nil
    ) throws(BenchError) -> BenchLocations {
        let environment = ProcessInfo.processInfo.environment
        let repository = repositoryFolder(from: executable)
        guard let scriptsFolder = scripts ?? repository.map({ $0 + "/scripts" }) else {
            throw BenchError(
                "bench: cannot find the repository (a folder with scripts/vips818-bench.py) above \(executable) "
                    + "or the working folder; give --scripts")
        }
        guard let corpusFolder = corpus ?? environment["BLURFARM_CORPUS"] ?? repository.flatMap(sharedCorpus) else {
            throw BenchError("bench: cannot find shared/corpus beside the repository or above it; give --corpus or set BLURFARM_CORPUS")
        }
        let venv = environment["BLURFARM_BENCH_VENV"] ?? ((repository ?? scriptsFolder + "/..") + "/.venv-bench")
        let cacheHome = environment["XDG_CACHE_HOME"] ?? (NSHomeDirectory() + "/.cache")
        return BenchLocations(
            scripts: scriptsFolder, corpus: corpusFolder, python: python ?? venv + "/bin/python",
            opencvPython: opencvPython ?? "python3", cache: cache ?? cacheHome + "/blurfarm-bench")
    }

    /// The first folder holding scripts/vips818-bench.py above `executable`, else above the
    /// working folder.
    static func repositoryFolder(from executable: String) -> String? {
        let starts = [
            URL(fileURLWithPath: executable).resolvingSymlinksInPath().deletingLastPathComponent(),
            URL(fileURLWithPath: FileManager.default.currentDirectoryPath),
        ]
        for start in starts {
            var folder = start.standardizedFileURL
            while true {
                if FileManager.default.fileExists(atPath: folder.path + "/scripts/vips818-bench.py") { return folder.path }
                if folder.path == "/" { break }
                folder.deleteLastPathComponent()
            }
        }
        return nil
    }

    /// The first `shared/corpus` beside `repository` or one of its ancestors.
    static func sharedCorpus(_ repository: String) -> String? {
        var folder = URL(fileURLWithPath: repository).deletingLastPathComponent()
        while true {
            let candidate = folder.path == "/" ? "/shared/corpus" : folder.path + "/shared/corpus"
            if FileManager.default.fileExists(atPath: candidate + "/batch1080") { return candidate }
            if folder.path == "/" { return nil }
            folder.deleteLastPathComponent()
        }
    }

    /// `path` if it exists, else a `BenchError` saying what it is and how to get it.
    func required(_ path: String, _ what: String) throws(BenchError) -> String {
        guard FileManager.default.fileExists(atPath: path) else { throw BenchError("bench: \(what) \(path) is missing") }
        return path
    }
}
