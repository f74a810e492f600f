import ArgumentParser
import BlurfarmCoordinator
import BlurfarmCore
import BlurfarmEngine
import BlurfarmImageIO
import BlurfarmKernels
import BlurfarmManifest
import BlurfarmWorker
import Foundation
import Synchronization

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

    @Option(help: ArgumentHelp(
        "Run only shard I (from 0) of N of each job's outputs, split by pixels the same on every host, with its own "
            + "lock and records (docs/cluster.md); 'env' or 'env/N' takes I (and N) from SLURM_ARRAY_TASK_ID "
            + "(SLURM_ARRAY_TASK_COUNT) or JOB_COMPLETION_INDEX.", valueName: "I/N"))
    var shard: ShardOption?

    @Option(help: ArgumentHelp(
        "With --shard, the split fixed earlier (by slurm submit): a JSON list of each shard's outputs.", valueName: "file"))
    var split: String?

    func validate() throws {
        if let tile, tile < 0 { throw ValidationError("--tile must be 0 (one tile) or a positive number of pixels") }
        if let threads, threads < 1 { throw ValidationError("--threads must be at least 1") }
        if let workers, workers < 0 { throw ValidationError("--workers must be 0 (in process) or more") }
        if watch, force || forcePrune {
            throw ValidationError("--watch runs again on every change: --force and --force-prune cannot go with it")
        }
        if split != nil, shard == nil { throw ValidationError("--split goes with --shard") }
        if shard != nil, watch || prune || forcePrune {
            throw ValidationError("--shard runs part of a job: --watch and --prune are for whole jobs")
        }
        if let workers, workers > 0, threads != nil {
            throw ValidationError("--threads is for the in-process engine (--workers 0), not for worker processes")
        }
    }

    func run() throws {
        let sharding = try Sharding(shard, splitFile: split)
        let (configuration, registry, plans) = try sharding.select(loadJobs(jobs, farm: farm, tileOverride: tile))
        let runLog: RunLog?
        do throws(CommandError) {
            runLog = try log.map { path throws(CommandError) in try RunLog(path: path) }
        } catch {
            printError(error.message)
            throw ExitCode(error.exitCode)
        }
        /// A failure: one line on standard error, and in the log.
        let fail: @Sendable (String) -> Void = { line in
            printError(line)
            runLog?.write(line)
        }
        /// A warning: one line on standard error, and in the log; the exit status stays 0.
        let warn: @Sendable (String) -> Void = { line in
            printWarning(line)
            runLog?.write("warning: \(line)")
        }
        // Every job's lock before anything runs (in path order, so that --wait runs cannot
        // deadlock); held until the process ends.
        let state = farm.stateFolder(configuration)
        let folders = plans.map {
            JobStateFolder(state: state, jobName: $0.job.name, manifestPath: $0.manifestPath)
        }
        var locks: [JobLock] = []
        for (folder, plan) in zip(folders, plans).sorted(by: { sharding.lockPath($0.0) < sharding.lockPath($1.0) })
        where !locks.contains(where: { $0.path == sharding.lockPath(folder) }) {
            let outcome: JobLock.Outcome
            do throws(StateError) {
                outcome = try JobLock.acquire(sharding.lockPath(folder), wait: wait)
            } catch {
                fail("\(error)")
                throw ExitCode(ExitStatus.someFailed)
            }
            switch outcome {
            case .acquired(let lock): locks.append(lock)
            case .busy(let holder):
                fail(
                    "job '\(plan.job.name)' is already running (pid \(holder.map(String.init) ?? "unknown"), "
                        + "lock \(sharding.lockPath(folder))); --wait waits for it")
                throw ExitCode(ExitStatus.locked)
            }
        }
        defer { withExtendedLifetime(locks) {} }
        // Plugins run in worker processes only (a plugin that crashes kills a worker, not the
        // run): jobs that use one are rendered by the pool.
        let plugins = pluginsUsed(by: plans, registry: registry)
        let engine = try Engine(
            workers: workers, threads: threads, configuration: configuration,
            pluginFolders: farm.pluginFolders(configuration), plugins: plugins)
        // Started at the first job with work, so that a run with nothing to do (cron, most of
        // the time) starts no process; it lives for every job of the run, and its workers are
        // told to shut down and are waited for at the end, whatever way the run ends.
        var runner: JobRunner?
        let started = StartedPool()
        defer { started.shutdown() }
        let versions = Blurfarm.recipeVersions
        let pluginHashes = pluginHashes(of: plans, registry: registry)
        var failed = 0
        var reports: [RunReport] = []
        let stop = StopRequest()
        let interrupts = Interrupts(stop: stop) { started.shutdown() }
        defer { withExtendedLifetime(interrupts) {} }
        let recordFailures = FailureCount()
        /// Runs one job of `plans` (by index) as `plan`: the whole of `run` for one job.
        func runJob(_ index: Int, _ plan: JobPlan) throws {
            let folder = folders[index]
            let began = Date()
            for line in plan.refused { fail("\(plan.manifestPath): \(line)") }
            failed += plan.refused.count
            let unmatched = Diagnostics(plan.unmatchedGlobs)
            printDiagnostics(unmatched)
            for diagnostic in unmatched { runLog?.write(diagnostic.description) }
            if unmatched.hasErrors { failed += 1 }
            let incremental: IncrementalRun
            do throws(StateError) {
                let records = try sharding.records(folder, plan: plan)
                incremental = IncrementalRun(
                    plan: plan, records: records, versions: versions, plugins: pluginHashes,
                    pixelLimit: configuration.pixelLimit, force: force, retryFailed: retryFailed)
            } catch {
                fail("\(error)")
                failed += 1
                return
            }
            let work = incremental.plan
            if runner == nil, work.outputCount > 0 {
                let (pool, rendering) = try engine.start(stop: stop)
                started.set(pool)
                runner = JobRunner(
                    registry: registry, rendering: rendering, pixelLimit: configuration.pixelLimit,
                    decodedImages: configuration.decodedImages)
            }
            let settings = RunSettings(
                configuration: farm.absoluteConfigurationPath, workers: engine.workers, threads: engine.threads,
                decodedImages: configuration.decodedImages, tile: plan.tileSize, pixelLimit: configuration.pixelLimit,
                verify: (verify ?? plan.job.verify).rawValue)
            let showProgress = !quiet && ProgressLine.isTerminal && work.outputCount > 0
            let progress = Mutex(
                ProgressLine(job: plan.job.name, outputsTotal: work.outputCount, inputsTotal: work.inputs.count))
            let verbose = verbose || (watch && !quiet)
            let onOutput: @Sendable (OutputReport) -> Void = { output in
                progress.withLock { progress in
                    if showProgress { progress.clear() }
                    if let error = output.error {
                        // A decoding failure is reported once per input, after the job.
                        if output.decodeError == nil { fail(error) }
                    } else if verbose {
                        let retried = output.retries > 0 ? ", \(counted(output.retries, "tile")) retried" : ""
                        print(
                            "\(ShownName.of(output.output)): \(output.variant) of \(ShownName.of(output.input)), "
                                + "\(counted(output.tiles, "tile"))\(retried)")
                    }
                    // Only outputs written and verified are recorded.
                    do throws(StateError) {
                        try incremental.recordWritten(output)
                    } catch {
                        fail("\(output.output) was written but not recorded (it will run again): \(error)")
                        recordFailures.add()
                    }
                    if showProgress { progress.record(output) }
                }
            }
            // A job with nothing to do has nothing to render with either.
            let ran =
                runner?.run(work, verify: verify, settings: settings, stop: stop, progress: onOutput)
                ?? RunReport(
                    job: plan.job.name, manifest: plan.manifestPath, started: began, finished: Date(), settings: settings,
                    outputs: [])
            if showProgress { progress.withLock { $0.clear() } }
            let (failedInputs, recordingProblem) = incremental.recordFailures(of: ran)
            for input in failedInputs { fail(input.description) }
            if let recordingProblem {
                fail("\(recordingProblem)")
                failed += 1
            }
            var pruned: [String] = []
            do throws(StateError) {
                // Inputs the globs could not see (an unreadable folder) are not gone: nothing is pruned.
                if prune || forcePrune, stop.signalNumber == nil, plan.refused.isEmpty {
                    if !forcePrune, let refusal = incremental.pruneRefusal() {
                        fail("\(plan.job.name): --prune refused: \(refusal); nothing removed (--force-prune removes them)")
                        failed += 1
                    } else {
                        let result = try incremental.prune()
                        for item in result.outputs {
                            switch item.action {
                            case .removed:
                                pruned.append(item.output)
                                if verbose { print("pruned \(ShownName.of(item.output))") }
                            case .alreadyGone: break
                            case .keptChanged:
                                warn("\(ShownName.of(item.output)): input gone but the file was changed since it was written: "
                                    + "left in place, record removed")
                            }
                        }
                        if verbose { for folder in result.folders { print("pruned \(ShownName.of(folder))/") } }
                    }
                }
                try incremental.records.compact()
            } catch {
                fail("\(error)")
                failed += 1
            }
            let report = ran.merging(incremental, started: began, pruned: pruned)
            failed += report.failed
            reports.append(report)
            let didWork = report.written + report.failed + report.stopped + pruned.count > 0
            // A run that did nothing leaves no report in the state folder (cron would fill it).
            if didWork {
                do {
                    _ = try report.writeInStateFolder(state)
                } catch {
                    fail("cannot write the report: \(error)")
                    failed += 1
                }
            }
            let stopped = report.stopped > 0 ? ", \(report.stopped) not started (stopped)" : ""
            let removed = prune || forcePrune ? ", \(pruned.count) pruned" : ""
            let earlier = report.failedEarlier > 0 ? ", \(report.failedEarlier) failed earlier" : ""
            let summary = "\(plan.job.name): \(report.written) written, \(report.failed) failed\(stopped), "
                + "\(counted(plan.inputs.count, "input")), in \(String(format: "%.2f", report.seconds)) s; "
                + "\(report.skipped) up to date, \(report.decoded) decoded\(earlier)\(removed)"
            if !quiet && (didWork || self.verbose) { print(summary) }
            runLog?.write(summary)
        }
        if watch {
            try RunWatch(stop: stop).run(plans, runJob: runJob) { plan in
                replan(plan, configuration: configuration, registry: registry, farm: farm, tileOverride: tile)
            }
        } else {
            for (index, plan) in plans.enumerated() { try runJob(index, plan) }
        }
        failed += recordFailures.value
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

/// Failures counted from the runner's progress callback, which may run on several threads.
final class FailureCount: Sendable {
    private let count = Mutex(0)

    func add() { count.withLock { $0 += 1 } }

    var value: Int { count.withLock { $0 } }
}
