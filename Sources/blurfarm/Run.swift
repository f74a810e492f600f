import ArgumentParser
import BlurfarmCoordinator
import BlurfarmCore
import BlurfarmManifest
import Foundation

/// `blurfarm run`: run jobs.
struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run job manifests: every output of every input, written atomically.",
        discussion: """
            Every manifest and the configuration are checked first; if any is invalid \
            nothing runs. Outputs that are up to date (same input bytes, same recipe, the \
            file as written: docs/scheduling.md) are skipped without decoding anything. An \
            input that cannot be read (corrupt, over the pixel limit) fails its outputs \
            with one line naming the file and the variants it cost, and the others go on; \
            a corrupt input or one over the pixel limit is remembered and skipped quietly by \
            later runs until the file changes (counted as "failed earlier"; --retry-failed \
            tries it again, check --status lists it). An input glob that matches no file is \
            named: a warning when another glob of the job matched, an error (exit status 1) \
            when none did. A run with nothing to do prints nothing else.

            Exit status: 0 every output written, up to date or failed earlier; 1 some outputs failed (the \
            others were written), or --prune refused (nothing removed); 2 a manifest or the \
            configuration is invalid (nothing ran); 3 another run holds a job's lock (nothing \
            ran; --wait waits instead). With --watch: 0 when stopped by SIGTERM or SIGINT \
            (failures are reported as they happen), 1 when a folder cannot be watched.
            """)

    @Argument(help: "Job manifests.")
    var jobs: [String]

    @OptionGroup var farm: FarmOptions

    @Option(help: "Tile side in pixels, overriding the manifest and configuration (0: one tile per image).")
    var tile: Int?

    @Option(help: ArgumentHelp(
        "Worker processes that render tiles (default: the configuration's workers, else one per core); "
            + "0 renders in this process, with --threads threads."))
    var workers: Int?

    @Option(help: ArgumentHelp(
        "Threads of the in-process engine (default: the number of cores); implies --workers 0 when --workers is not given."))
    var threads: Int?

    @Option(help: "Verification, overriding the manifests' verify: checksum, decode, untiled.")
    var verify: VerifyMode?

    @Option(help: ArgumentHelp(
        "Also write the run's JSON report here (a list, one report per job; docs/report.md).", valueName: "file"))
    var report: String?

    @Flag(help: "Print nothing but failures.")
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

    func validate() throws {
        if let tile, tile < 0 { throw ValidationError("--tile must be 0 (one tile) or a positive number of pixels") }
        if let threads, threads < 1 { throw ValidationError("--threads must be at least 1") }
        if let workers, workers < 0 { throw ValidationError("--workers must be 0 (in process) or more") }
        if watch, force || forcePrune {
            throw ValidationError("--watch runs again on every change: --force and --force-prune cannot go with it")
        }
        if let workers, workers > 0, threads != nil {
            throw ValidationError("--threads is for the in-process engine (--workers 0), not for worker processes")
        }
    }

    func run() throws {
        let (configuration, registry, plans) = try loadJobs(jobs, farm: farm, tileOverride: tile)
        let printer = RunPrinter(
            quiet: quiet, verbose: verbose || (watch && !quiet), alwaysSummary: verbose, log: try RunLog.open(log))
        let engine = try Engine(
            workers: workers, threads: threads, configuration: configuration,
            pluginFolders: farm.pluginFolders(configuration), plugins: FarmJob.pluginsUsed(by: plans, registry: registry))
        // Every job's lock before anything runs; held until the process ends.
        let locks = try JobLocks.acquire(plans, state: farm.stateFolder(configuration), wait: wait, printer: printer)
        let stop = StopRequest()
        let engineFarm = Farm(engine.farmSettings(farm: farm, stop: stop, logger: farm.logger()))
        engineFarm.onEvent(printer.handle)
        // The workers start with the first job that has work, and stop at the end, however it ends.
        defer { engineFarm.shutdown() }
        let interrupts = Interrupts(stop: stop, onStop: engineFarm.shutdown) { engineFarm.removeTemporaryFiles() }
        defer { withExtendedLifetime(interrupts) {} }
        var failed = 0
        var reports: [RunReport] = []
        func runJob(_ index: Int, _ plan: JobPlan) {
            let job = FarmJob(
                plan: plan, registry: registry, force: force, retryFailed: retryFailed, prune: prune,
                forcePrune: forcePrune, verify: verify, lock: locks[index])
            let outcome = engineFarm.wait(engineFarm.submit(job))!
            failed += outcome.failures
            reports.append(outcome.report)
        }
        if watch {
            try RunWatch(stop: stop).run(plans, runJob: runJob) { plan in
                replan(plan, configuration: configuration, registry: registry, farm: farm, tileOverride: tile)
            }
        } else {
            for (index, plan) in plans.enumerated() { runJob(index, plan) }
        }
        if let report, !write(reports, to: report) { failed += 1 }
        // A watch ends with a signal: the way to stop it, not a failure.
        if let signal = stop.signalNumber, !watch { throw ExitCode(128 + signal) }
        if watch { return }
        if failed > 0 { throw ExitCode(ExitStatus.someFailed) }
    }
}

extension Run {
    /// Writes a report (or a list of them); says so on stderr and returns false when it cannot.
    private func write(_ value: some Encodable, to path: String) -> Bool {
        do {
            try RunReport.write(value, to: path)
            return true
        } catch {
            printError("\(path): cannot write the report: \(error.localizedDescription)")
            return false
        }
    }
}

extension VerifyMode: ExpressibleByArgument {}
