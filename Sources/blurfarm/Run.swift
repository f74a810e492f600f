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
            Every manifest and the configuration are checked first; if any is invalid
            nothing runs. Outputs that are up to date (same input bytes, same recipe, the
            file as written: docs/scheduling.md) are skipped without decoding anything. An
            input that cannot be read (corrupt, over the pixel limit) fails its outputs
            with one line naming the file, and the others go on. A run with nothing to do
            prints nothing.
            Exit status: 0 every output written or up to date; 1 some outputs failed (the
            others were written); 2 a manifest or the configuration is invalid (nothing
            ran); 3 another run holds a job's lock (nothing ran; --wait waits instead).
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

    @Flag(help: ArgumentHelp(
        "Remove the outputs this job recorded as written whose input no longer exists (and their records); "
            + "nothing else is ever removed."))
    var prune = false

    @Flag(help: "Wait for another run of the same job to finish instead of exiting with status 3.")
    var wait = false

    @Option(help: ArgumentHelp("Append a timestamped log of the run's summary and failures to this file.", valueName: "file"))
    var log: String?

    func validate() throws {
        if let tile, tile < 0 { throw ValidationError("--tile must be 0 (one tile) or a positive number of pixels") }
        if let threads, threads < 1 { throw ValidationError("--threads must be at least 1") }
        if let workers, workers < 0 { throw ValidationError("--workers must be 0 (in process) or more") }
        if let workers, workers > 0, threads != nil {
            throw ValidationError("--threads is for the in-process engine (--workers 0), not for worker processes")
        }
    }

    func run() throws {
        let (configuration, registry, plans) = try loadJobs(jobs, farm: farm, tileOverride: tile)
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
        // Every job's lock before anything runs (in path order, so that --wait runs cannot
        // deadlock); held until the process ends.
        let folders = plans.map {
            JobStateFolder(state: configuration.state, jobName: $0.job.name, manifestPath: $0.manifestPath)
        }
        var locks: [JobLock] = []
        for (folder, plan) in zip(folders, plans).sorted(by: { $0.0.lockPath < $1.0.lockPath })
        where !locks.contains(where: { $0.path == folder.lockPath }) {
            let outcome: JobLock.Outcome
            do throws(StateError) {
                outcome = try JobLock.acquire(folder.lockPath, wait: wait)
            } catch {
                fail("\(error)")
                throw ExitCode(ExitStatus.someFailed)
            }
            switch outcome {
            case .acquired(let lock): locks.append(lock)
            case .busy(let holder):
                fail(
                    "blurfarm: job '\(plan.job.name)' is already running (pid \(holder.map(String.init) ?? "unknown"), "
                        + "lock \(folder.lockPath)); --wait waits for it")
                throw ExitCode(ExitStatus.locked)
            }
        }
        defer { withExtendedLifetime(locks) {} }
        // Plugins run in worker processes only (a plugin that crashes kills a worker, not the
        // run): jobs that use one are rendered by the pool.
        let plugins = Set(plans.flatMap { plan in
            plan.job.outputs.flatMap(\.filters).map(\.name).filter { registry.descriptor(named: $0)?.isPlugin == true }
        }).sorted()
        let engine = try Engine(
            workers: workers, threads: threads, configuration: configuration,
            pluginFolders: farm.pluginFolders(configuration), plugins: plugins)
        // Started at the first job with work, so that a run with nothing to do (cron, most of
        // the time) starts no process; it lives for every job of the run, and its workers are
        // told to shut down and are waited for at the end, whatever way the run ends.
        var runner: JobRunner?
        let started = StartedPool()
        defer { started.shutdown() }
        let versions = "blurfarm \(Blurfarm.version); libvips \(ImageReader.libvipsVersion)"
        // A rebuilt plugin makes the outputs of its filters run again.
        var pluginHashes: [String: String] = [:]
        for name in plugins {
            if case .plugin(let path) = registry.descriptor(named: name)?.origin,
                let hash = try? ContentHash.ofFile(path)
            {
                pluginHashes[name] = hash
            }
        }
        var failed = 0
        var reports: [RunReport] = []
        let stop = StopRequest()
        let interrupts = Interrupts(stop: stop) { started.shutdown() }
        defer { withExtendedLifetime(interrupts) {} }
        let recordFailures = FailureCount()
        for (plan, folder) in zip(plans, folders) {
            let began = Date()
            let incremental: IncrementalRun
            do throws(StateError) {
                let records = try OutputRecords(folder: folder.path)
                incremental = IncrementalRun(
                    plan: plan, records: records, versions: versions, plugins: pluginHashes, force: force)
            } catch {
                fail("\(error)")
                failed += 1
                continue
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
                configuration: farm.configurationPath, workers: engine.workers, threads: engine.threads,
                decodedImages: configuration.decodedImages, tile: plan.tileSize, pixelLimit: configuration.pixelLimit,
                verify: (verify ?? plan.job.verify).rawValue)
            let showProgress = !quiet && ProgressLine.isTerminal && work.outputCount > 0
            let progress = Mutex(
                ProgressLine(job: plan.job.name, outputsTotal: work.outputCount, inputsTotal: work.inputs.count))
            let verbose = verbose
            let onOutput: @Sendable (OutputReport) -> Void = { output in
                progress.withLock { progress in
                    if showProgress { progress.clear() }
                    if let error = output.error {
                        fail(error)
                    } else if verbose {
                        let retried = output.retries > 0 ? ", \(output.retries) tiles retried" : ""
                        print("\(output.output): \(output.variant) of \(output.input), \(output.tiles) tiles\(retried)")
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
            var pruned: [String] = []
            do throws(StateError) {
                if prune, stop.signalNumber == nil {
                    for item in try incremental.prune() {
                        switch item.action {
                        case .removed: pruned.append(item.output)
                        case .alreadyGone: break
                        case .keptChanged:
                            fail("\(item.output): input gone but the file was changed since it was written: left in place, record removed")
                        }
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
            if didWork, !write(report, to: report.pathInStateFolder(configuration.state)) { failed += 1 }
            let stopped = report.stopped > 0 ? ", \(report.stopped) not started (stopped)" : ""
            let removed = prune ? ", \(pruned.count) pruned" : ""
            let summary = "\(plan.job.name): \(report.written) written, \(report.failed) failed\(stopped), "
                + "\(plan.inputs.count) inputs, in \(String(format: "%.2f", report.seconds)) s; "
                + "\(report.skipped) up to date, \(report.decoded) decoded\(removed)"
            if !quiet && (didWork || verbose) { print(summary) }
            runLog?.write(summary)
        }
        failed += recordFailures.value
        if let report, !write(reports, to: report) { failed += 1 }
        if let signal = stop.signalNumber { throw ExitCode(128 + signal) }
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
