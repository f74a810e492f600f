import BlurfarmFarm
import BlurfarmSystem
import BlurfarmPool
import ArgumentParser
import BlurfarmCoordinator
import BlurfarmCore
import BlurfarmEngine
import BlurfarmManifest
import Foundation
import Logging

/// What renders the tiles of `run` and `apply`: a pool of worker processes, or threads of this
/// process. `--workers N`, else the configuration's `workers`, else one per core; `--threads`
/// alone (or `--workers 0`) asks for the in-process engine, and so does one image of built-in
/// filters (`apply IN OUT`) unless `--workers` says otherwise: starting a pool and sending the
/// pixels through shared memory costs more than it saves on one image (docs/performance.md). Choosing checks the options and
/// starts nothing; ``launch(_:)`` starts the workers, when there is work for them.
struct Engine {
    /// Worker processes (0: in process).
    let workers: Int
    /// Threads rendering tiles in process (the workers when there are workers).
    let threads: Int
    let configuration: FarmConfiguration
    let pluginFolders: [String]

    /// The engine the options ask for, able to load plugins from `pluginFolders`.
    ///
    /// - Parameter plugins: the plugin filters the work uses: their `run` is called in worker
    ///   processes only (a plugin that crashes there kills a worker, not the command).
    /// More workers than the machine allows (``WorkerPool/capacity(cores:)``: 4 per core, and
    /// what `ulimit -n` and `ulimit -u` leave room for) are capped, with one warning line.
    ///
    /// - Throws: ``ExitCode`` 2 (after saying why on stderr) when plugins are to run in process
    ///   (`--workers 0`, `--threads`); ``ExitCode`` 1 when no worker at all may run.
    init(
        workers: Int?, threads: Int?, configuration: FarmConfiguration, pluginFolders: [String],
        plugins: [String], oneImage: Bool = false
    ) throws {
        if !plugins.isEmpty, workers == 0 || threads != nil {
            throw CommandError(
                "plugin filters (\(plugins.joined(separator: ", "))) run in worker processes only: "
                    + "drop --workers 0 and --threads", exitCode: ExitStatus.invalid)
        }
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let inProcess = threads != nil || (oneImage && plugins.isEmpty)
        let asked = workers ?? (inProcess ? 0 : configuration.workers ?? cores)
        self.workers = try Self.capped(
            asked, by: WorkerPool.capacity(cores: cores),
            source: workers != nil ? "--workers" : configuration.workers != nil ? "the configuration's workers" : "one per core")
        self.threads = self.workers == 0 ? threads ?? cores : self.workers
        self.configuration = configuration
        self.pluginFolders = pluginFolders
    }

    /// `asked` workers (from `source`), or the capacity's when that is fewer (one warning
    /// line); none asked stays none.
    private static func capped(_ asked: Int, by capacity: WorkerPool.Capacity, source: String) throws -> Int {
        guard asked > capacity.workers else { return asked }
        guard capacity.workers > 0 else {
            throw CommandError("cannot run worker processes: \(capacity.reason); --workers 0 renders in this process")
        }
        printWarning("\(asked) workers (\(source)) capped at \(capacity.workers): \(capacity.reason)")
        return capacity.workers
    }

    /// The worker executable: the one `$BLURFARM_WORKER` names, else `blurfarm-worker` beside
    /// this executable (where `swift build` puts it), else in `../libexec/blurfarm/` from this
    /// executable's folder (where scripts/install.sh puts it); the first of the two when
    /// neither is there, which the pool then names in its error, with these places.
    static var workerExecutable: String {
        if let named = ProcessInfo.processInfo.environment["BLURFARM_WORKER"], !named.isEmpty { return named }
        let folder = FarmOptions.executableFolder
        let places = [folder + "/blurfarm-worker", folder + "/../libexec/blurfarm/blurfarm-worker"]
        return places.first { FileManager.default.isExecutableFile(atPath: $0) } ?? places[0]
    }

    /// The farm's settings for this engine: the workers run ``workerExecutable`` with this
    /// process's environment, log through `logger`, and stop with `stop`.
    func farmSettings(farm: FarmOptions, stop: StopRequest, logger: Logger) -> FarmSettings {
        FarmSettings(
            workers: workers, threads: threads, workerExecutable: Self.workerExecutable,
            workerEnvironment: ProcessInfo.processInfo.environment.map { "\($0.key)=\($0.value)" },
            pluginFolders: pluginFolders, configuration: configuration, configurationPath: farm.absoluteConfigurationPath,
            stateFolder: farm.stateFolder(configuration), recipeVersions: Blurfarm.recipeVersions, stop: stop,
            logger: logger)
    }

    /// The farm of a command that runs jobs (`run`, `apply -o`) on this engine: its events told
    /// to `printer`, SIGINT and SIGTERM answered (``Interrupts``: the first stops it, a second
    /// exits at once). The caller shuts the farm down when done, however it ends.
    func startFarm(_ farm: FarmOptions, printer: RunPrinter) -> (farm: Farm, stop: StopRequest, interrupts: Interrupts) {
        let stop = StopRequest()
        let engineFarm = Farm(farmSettings(farm: farm, stop: stop, logger: farm.logger()))
        engineFarm.onEvent(printer.handle)
        let interrupts = Interrupts(stop: stop, onStop: engineFarm.shutdown) { engineFarm.removeTemporaryFiles() }
        return (engineFarm, stop, interrupts)
    }

    /// What renders, in words: "2 workers", "2 threads".
    var words: String { workers > 0 ? counted(workers, "worker") : counted(threads, "thread") }

    /// The rendering of one image (`apply`): a pool of workers starting (``Launched``), or the
    /// in-process engine. The workers start while the caller opens the image and decodes its
    /// first rows; ``Launched/started()`` waits for them before the first tile.
    ///
    /// - Throws: ``ExitCode`` 1 (after saying why on stderr) when the pool cannot be made.
    func launch(_ settings: FarmSettings) throws -> Launched {
        guard workers > 0 else {
            return Launched(engine: self, pool: nil, rendering: InProcessRendering(executor: ThreadedTileExecutor(threads: threads)))
        }
        do throws(RenderFailure) {
            let pool = try WorkerPool(launching: settings.poolSettings)
            return Launched(engine: self, pool: pool, rendering: pool)
        } catch {
            throw CommandError("\(error)")
        }
    }

    /// An engine launched for one image: what it renders with, and its pool, starting.
    struct Launched {
        /// The engine launched.
        let engine: Engine
        /// The workers (nil: in process). Shut down when done.
        let pool: WorkerPool?
        /// Renders once ``started()`` returned; its ``ImageRendering/allocator`` is there at once.
        let rendering: any ImageRendering

        /// The rendering, once every worker has started (at once in process).
        ///
        /// - Throws: ``ExitCode`` 1 (after saying why on stderr) when the workers cannot start.
        func started() throws -> any ImageRendering {
            do throws(RenderFailure) {
                try pool?.waitUntilStarted()
                return rendering
            } catch {
                throw CommandError("\(error)")
            }
        }

        /// Starts stopping the workers, if any, when no tile is left: they exit while the
        /// output's last rows are encoded.
        func finishing() { pool?.beginShutdown() }

        /// Stops the workers, if any, and waits for them.
        func shutdown() { pool?.shutdown() }
    }
}
