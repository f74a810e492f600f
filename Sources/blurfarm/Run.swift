import BlurfarmCommandSupport
import ArgumentParser
import BlurfarmCluster
import BlurfarmCoordinator
import BlurfarmFarm
import BlurfarmImageIO
import BlurfarmState
import BlurfarmSystem
import BlurfarmWatch
import Foundation

/// `blurfarm run`: run jobs.
struct Run: FarmCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
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
            (failures are reported as they happen), 1 when a folder cannot be watched or a watched \
            folder went away and none came back at its path within 10 seconds.
            """)

    @Argument(help: "Job manifests.")
    var jobs: [String]

    @OptionGroup var farm: FarmOptions

    @OptionGroup var options: RunOptions

    func validate() throws {
        if options.map != nil, jobs.count > 1 { throw ValidationError("--map names one file: give it one manifest") }
    }

    func execute() throws {
        let sharding = try Sharding(
            options.shard?.selector, splitFile: options.split, environment: ProcessInfo.processInfo.environment)
        let (runFiles, log) = try CommandError.invalid { () throws(OptionError) in try RunFiles.open(report: options.report, log: options.log) }
        let printer = RunPrinter(
            quiet: options.quiet, verbose: options.verbose || (options.watch && !options.quiet), alwaysSummary: options.verbose, log: log)
        // Every job's lock before its inputs are walked (another run's is found at once); held to the end.
        var locks: [JobLock] = []
        let (loader, allPlans) = try loadJobs(
            jobs, farm: farm, admission: options.admission, tileOverride: options.tile, map: options.map, runFiles: runFiles) {
            do throws(JobLocks.Failure) {
                locks = try JobLocks.acquire($1, state: farm.stateFolder($0.configuration), shard: sharding.shard, wait: options.wait)
            } catch {
                if error.isBusy { printer.busy(error.description) } else { printer.fail(error.description) }
                throw ExitCode(error.isBusy ? ExitStatus.locked : ExitStatus.someFailed)
            }
        }
        let registry = loader.registry
        let plans = try sharding.select(allPlans)
        let configuration = loader.configuration
        let choice = try WorkerChoice.chosen(
            workers: options.workers, threads: options.threads, configuration: configuration,
            plugins: registry.plugins(usedBy: plans))
        // SIGINT and SIGTERM answered from here, before anything is started (a worker asked
        // libvips's version): a signal stops the run whenever it comes.
        let interrupts = Interrupts(stop: StopRequest())
        defer { withExtendedLifetime(interrupts) {} }
        let stop = interrupts.stop
        // The recipes name the workers' libvips: the state folder's cache or a worker process
        // says its version while the jobs start, so that this one never maps libvips for it.
        // Without workers, this process's libvips renders, and is asked.
        let environment = ProcessInfo.processInfo.environment
        let libvips =
            choice.workers > 0
            ? LibvipsVersion(
                stateFolder: farm.stateFolder(configuration), worker: Installation.workerExecutable(environment: environment),
                environment: environment)
            : nil
        // Its worker, if it has not answered by the end, ends with the run (killed if a signal
        // stopped it): the last thing done, after the farm's shutdown.
        defer { libvips?.end(stopped: stop.signalNumber != nil) }
        let started = choice.startFarm(
            farm, configuration: configuration, printer: printer, interrupts: interrupts, libvips: libvips)
        // The workers start with the first job that has work, and stop at the end, however it ends.
        defer { started.shutdown() }
        let series = JobSeries(farm: started) { index, plan in
            FarmJob(
                plan: plan, registry: registry, force: options.force, retryFailed: options.retryFailed,
                prune: options.prune, forcePrune: options.forcePrune, verify: options.verify, lock: locks[index],
                shard: sharding.shard)
        }
        // Watching, each job planned again over the files as they are now, by loadJobs's loader;
        // a plan refused now (two inputs that would write one output, say) is said, and not run.
        do throws(FolderWatcher.Failure) {
            try series.run(plans, watch: options.watch ? JobWatch(stop: stop, warn: printer.warn) : nil) { plan in
                let replanned = loader.replan(plan, tileOverride: options.tile)
                if case .failure(let diagnostics) = replanned { printDiagnostics(diagnostics) }
                return try? replanned.get()
            }
        } catch {
            printer.fail("\(error)")
            throw ExitCode(ExitStatus.someFailed)
        }
        var failed = series.failures
        if let report = options.report {
            do {
                try RunReport.write(series.reports, to: report)
            } catch {
                printError("\(report): cannot write the report: \(error.localizedDescription)")
                failed += 1
            }
        }
        // A watch ends with a signal: the way to stop it, not a failure.
        if let signal = stop.signalNumber, !options.watch { throw ExitCode(128 + signal) }
        if options.watch { return }
        if failed > 0 { throw ExitCode(ExitStatus.someFailed) }
    }
}
