import ArgumentParser
import BlurfarmCoordinator
import BlurfarmEngine
import BlurfarmManifest
import Foundation

/// What renders the tiles of `run` and `apply`: a pool of worker processes, or threads of this
/// process. `--workers N`, else the configuration's `workers`, else one per core; `--threads`
/// alone (or `--workers 0`) asks for the in-process engine.
struct Engine {
    /// Worker processes (0: in process).
    let workers: Int
    /// Threads rendering tiles in process (the workers when there are workers).
    let threads: Int
    /// The pool, when there are workers; shut it down when done.
    let pool: WorkerPool?
    let rendering: any ImageRendering

    /// Starts the workers, if any, able to load plugins from `pluginFolders`.
    ///
    /// - Parameter plugins: the plugin filters the work uses: they run in worker processes
    ///   only (a plugin that crashes kills a worker, not the command).
    /// - Throws: ``ExitCode`` (after saying why on stderr): 2 when plugins are to run in
    ///   process (`--workers 0`, `--threads`), 1 when the workers cannot start.
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
        guard self.workers > 0 else {
            pool = nil
            rendering = InProcessRendering(executor: ThreadedTileExecutor(threads: self.threads))
            return
        }
        // Capped at a million seconds so that the nanoseconds fit an Int64.
        func duration(_ seconds: Double) -> Duration { .nanoseconds(Int64(min(seconds, 1e6) * 1e9)) }
        do throws(RenderFailure) {
            let started = try WorkerPool(
                executable: "/proc/self/exe", workers: self.workers, retries: configuration.retries,
                heartbeatTimeout: duration(configuration.heartbeatTimeout),
                taskTimeout: duration(configuration.taskTimeout ?? 1e6), pluginFolders: pluginFolders)
            pool = started
            rendering = started
        } catch {
            printError("\(error)")
            throw ExitCode(ExitStatus.someFailed)
        }
    }
}
