import ArgumentParser
import BlurfarmCoordinator
import BlurfarmEngine
import BlurfarmManifest
import Foundation
import Synchronization

/// What renders the tiles of `run` and `apply`: a pool of worker processes, or threads of this
/// process. `--workers N`, else the configuration's `workers`, else one per core; `--threads`
/// alone (or `--workers 0`) asks for the in-process engine. Choosing checks the options and
/// starts nothing; ``start()`` starts the workers, when there is work for them.
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
    /// - Throws: ``ExitCode`` 2 (after saying why on stderr) when plugins are to run in process
    ///   (`--workers 0`, `--threads`).
    init(
        workers: Int?, threads: Int?, configuration: FarmConfiguration, pluginFolders: [String],
        plugins: [String]
    ) throws {
        if !plugins.isEmpty, workers == 0 || threads != nil {
            printError(
                "plugin filters (\(plugins.joined(separator: ", "))) run in worker processes only: "
                    + "drop --workers 0 and --threads")
            throw ExitCode(ExitStatus.invalid)
        }
        let cores = ProcessInfo.processInfo.activeProcessorCount
        self.workers = workers ?? (threads != nil ? 0 : configuration.workers ?? cores)
        self.threads = self.workers == 0 ? threads ?? cores : self.workers
        self.configuration = configuration
        self.pluginFolders = pluginFolders
    }

    /// The rendering: the started pool of workers, or the in-process engine (then `pool` is
    /// nil). Shut the pool down when done.
    ///
    /// - Throws: ``ExitCode`` 1 (after saying why on stderr) when the workers cannot start.
    func start() throws -> (pool: WorkerPool?, rendering: any ImageRendering) {
        guard workers > 0 else { return (nil, InProcessRendering(executor: ThreadedTileExecutor(threads: threads))) }
        // Capped at a million seconds so that the nanoseconds fit an Int64.
        func duration(_ seconds: Double) -> Duration { .nanoseconds(Int64(min(seconds, 1e6) * 1e9)) }
        do throws(RenderFailure) {
            let pool = try WorkerPool(
                executable: "/proc/self/exe", workers: workers, retries: configuration.retries,
                heartbeatTimeout: duration(configuration.heartbeatTimeout),
                taskTimeout: configuration.taskTimeout.map { .fixed(duration($0)) } ?? .adaptive,
                pluginFolders: pluginFolders)
            return (pool, pool)
        } catch {
            printError("\(error)")
            throw ExitCode(ExitStatus.someFailed)
        }
    }
}

/// The worker pool of a run once it is started, for the interrupt handler, which may run on
/// another thread at any time.
final class StartedPool: Sendable {
    private let pool = Mutex<WorkerPool?>(nil)

    func set(_ started: WorkerPool?) { pool.withLock { $0 = started } }

    /// Stops the workers, if they were started (idempotent).
    func shutdown() { pool.withLock { $0 }?.shutdown() }
}
