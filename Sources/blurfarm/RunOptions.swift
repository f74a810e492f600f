import ArgumentParser
import BlurfarmCommandSupport
import BlurfarmManifest

/// The options of `blurfarm run`.
struct RunOptions: ParsableArguments {

    @Option(help: "Tile side in pixels, overriding the manifest and configuration (0: one tile per image).")
    var tile: Int?

    @Option(help: ArgumentHelp(
        "Worker processes that render tiles (default: the configuration's workers, else one per core); "
            + "0 renders in this process, with --threads threads."))
    var workers: Int?

    @Option(help: ArgumentHelp(
        "Threads of the in-process engine (default: the number of cores); implies --workers 0 when --workers is not given."))
    var threads: Int?

    @OptionGroup var admission: AdmissionOptions

    @Option(help: "Verification, overriding the manifests' verify: checksum, decode, untiled.")
    var verify: VerifyMode?

    @Option(help: ArgumentHelp(
        "Also write the run's JSON report here (a list, one report per job; docs/report.md).", valueName: "file"))
    var report: String?

    @Flag(help: "Print nothing but failures (another run holding a job's lock, exit 3, goes to --log alone).")
    var quiet = false

    @Flag(help: "Print a line for every output written, and the summary even when nothing was to do.")
    var verbose = false

    @Flag(help: "Run every output, up to date or not (and record them again).")
    var force = false

    @Flag(help: "Try again the inputs that failed in an earlier run and have not changed since (corrupt, over the pixel limit).")
    var retryFailed = false

    @Flag(help: ArgumentHelp(
        "Remove the outputs this job recorded as written whose input no longer exists (and their records), "
            + "and the folders blurfarm made for them that this leaves empty; nothing else is ever removed. "
            + "Refused (exit 1, nothing removed) when an input glob's folder is missing, a glob that matched "
            + "removed inputs matches nothing, or more than half of the recorded outputs would go."))
    var prune = false

    @Flag(help: "Prune even when --prune would refuse (a missing input folder, an empty glob, more than half); implies --prune.")
    var forcePrune = false

    @Flag(help: "Wait for another run of the same job to finish instead of exiting with status 3.")
    var wait = false

    @Flag(help: ArgumentHelp(
        "After the run, watch the input folders and render new and changed inputs as they appear, once they have "
            + "been quiet for a second, printing a line per output written; until SIGTERM or SIGINT (exit 0). "
            + "Deleted inputs are pruned only with --prune."))
    var watch = false

    @Option(help: ArgumentHelp("Append a timestamped log of the run's summary and failures to this file.", valueName: "file"))
    var log: String?

    @Option(help: ArgumentHelp(
        "Run only shard I (from 0) of N of each job's outputs, split by pixels the same on every host, with its own "
            + "lock and records (docs/cluster.md); 'env' or 'env/N' takes I (and N) from SLURM_ARRAY_TASK_ID "
            + "(SLURM_ARRAY_TASK_COUNT) or JOB_COMPLETION_INDEX.", valueName: "I/N"))
    var shard: ShardOption?

    @Option(help: ArgumentHelp(
        "With --shard, the split fixed earlier (by slurm submit): a JSON list of each shard's outputs.", valueName: "file"))
    var split: String?

    @Option(help: ArgumentHelp(
        "Write the job's output map here (JSON: every output up to date with its size and bytes, and each input's "
            + "placeholder; docs/json.md), instead of the manifest's map:.", valueName: "file.json"))
    var map: String?

    func validate() throws {
        if let map, !map.lowercased().hasSuffix(".json") || map.hasSuffix("/") {
            throw ValidationError("--map must name a .json file, such as site/images.json")
        }
        if map != nil, shard != nil { throw ValidationError("--map is for whole jobs: a shard writes no map") }
        if let problem = WorkerChoice.problem(tile: tile, threads: threads, workers: workers) { throw ValidationError(problem) }
        if watch, force || forcePrune {
            throw ValidationError("--watch runs again on every change: --force and --force-prune cannot go with it")
        }
        if split != nil, shard == nil { throw ValidationError("--split goes with --shard") }
        if shard != nil, watch || prune || forcePrune {
            throw ValidationError("--shard runs part of a job: --watch and --prune are for whole jobs")
        }
    }
}

extension VerifyMode: ExpressibleByArgument {}
