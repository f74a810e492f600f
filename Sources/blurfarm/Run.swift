import ArgumentParser
import BlurfarmCoordinator
import BlurfarmCore
import BlurfarmEngine
import BlurfarmImageIO
import BlurfarmKernels
import BlurfarmManifest
import Foundation

/// `blurfarm run`: run jobs.
struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run job manifests: every output of every input, written atomically.",
        discussion: """
            Every manifest and the configuration are checked first; if any is invalid nothing
            runs. An input that cannot be read (corrupt, over the pixel limit) fails its outputs
            with one line naming the file, and the others go on.
            Exit status: 0 every output written; 1 some outputs failed (the others were
            written); 2 a manifest or the configuration is invalid (nothing ran).
            """)

    @Argument(help: "Job manifests.")
    var jobs: [String]

    @OptionGroup var farm: FarmOptions

    @Option(help: "Tile side in pixels, overriding the manifest and configuration (0: one tile per image).")
    var tile: Int?

    @Option(help: ArgumentHelp(
        "Worker processes that render tiles (default: the configuration's workers, else 0); "
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

    @Flag(help: "Print a line for every output written.")
    var verbose = false

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
        let cores = ProcessInfo.processInfo.activeProcessorCount
        // Plugins run in worker processes only (a plugin that crashes kills a worker, not the
        // run): jobs that use one are rendered by the pool.
        let plugins = Set(plans.flatMap { plan in
            plan.job.outputs.flatMap(\.filters).map(\.name).filter { registry.descriptor(named: $0)?.isPlugin == true }
        }).sorted()
        if !plugins.isEmpty, workers == 0 || threads != nil {
            printError(
                "the jobs use plugin filters (\(plugins.joined(separator: ", "))), which run in worker "
                    + "processes only: drop --workers 0 and --threads")
            throw ExitCode(ExitStatus.invalid)
        }
        // Otherwise worker processes only when asked for (--workers, or the configuration's
        // workers): for now the pool renders one image at a time and is slower than the
        // in-process engine (docs/performance.md), so that stays the default. --threads alone
        // asks for it too.
        let workerCount = workers ?? (threads != nil ? 0 : configuration.workers ?? (plugins.isEmpty ? 0 : cores))
        let threadCount = workerCount == 0 ? threads ?? cores : workerCount
        let pool: WorkerPool?
        let rendering: any ImageRendering
        if workerCount > 0 {
            // Capped at a million seconds so that the nanoseconds fit an Int64.
            let heartbeat = Duration.nanoseconds(Int64(min(configuration.heartbeatTimeout, 1e6) * 1e9))
            do throws(RenderFailure) {
                let started = try WorkerPool(
                    executable: "/proc/self/exe", workers: workerCount, retries: configuration.retries,
                    heartbeatTimeout: heartbeat, pluginFolders: farm.pluginFolders(configuration))
                pool = started
                rendering = started
            } catch {
                printError("blurfarm: \(error)")
                throw ExitCode(ExitStatus.someFailed)
            }
        } else {
            pool = nil
            rendering = InProcessRendering(executor: ThreadedTileExecutor(threads: threadCount))
        }
        // The pool lives for every job of the run; its workers are told to shut down and are
        // waited for at the end, whatever way the run ends.
        defer { pool?.shutdown() }
        let runner = JobRunner(registry: registry, rendering: rendering, pixelLimit: configuration.pixelLimit)
        var failed = 0
        var reports: [RunReport] = []
        let stop = StopRequest()
        let interrupts = Interrupts(stop: stop)
        defer { withExtendedLifetime(interrupts) {} }
        for plan in plans {
            let settings = RunSettings(
                configuration: farm.configurationPath, threads: threadCount, tile: plan.tileSize,
                pixelLimit: configuration.pixelLimit, verify: (verify ?? plan.job.verify).rawValue)
            let showProgress = !quiet && ProgressLine.isTerminal
            var progress = ProgressLine(job: plan.job.name, outputsTotal: plan.outputCount, inputsTotal: plan.inputs.count)
            let report = runner.run(plan, verify: verify, settings: settings, stop: stop) { output in
                if showProgress { progress.clear() }
                if let error = output.error {
                    printError(error)
                } else if verbose {
                    print("\(output.output): \(output.variant) of \(output.input), \(output.tiles) tiles")
                }
                if showProgress { progress.record(output) }
            }
            if showProgress { progress.clear() }
            failed += report.failed
            reports.append(report)
            if !write(report, to: report.pathInStateFolder(configuration.state)) { failed += 1 }
            if !quiet {
                let stopped = report.stopped > 0 ? ", \(report.stopped) not started (stopped)" : ""
                print(
                    "\(plan.job.name): \(report.written) written, \(report.failed) failed\(stopped), "
                        + "\(plan.inputs.count) inputs, in \(String(format: "%.2f", report.seconds)) s")
            }
        }
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
