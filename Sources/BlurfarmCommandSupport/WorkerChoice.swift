import BlurfarmFarm
import BlurfarmCoordinator
import BlurfarmCore
import BlurfarmEngine
import BlurfarmPool
import Foundation

/// What renders the tiles of `run` and `apply`: a pool of worker processes, or threads of this
/// process. The workers asked for (`--workers N`), else the configuration's `workers`, else one
/// per core; threads asked for (`--threads`) or no workers asked for and one image of built-in
/// filters (`apply IN OUT`) chooses the in-process engine: starting a pool and sending the
/// pixels through shared memory costs more than it saves on one image (docs/performance-history.md).
/// Choosing checks the options and starts nothing; ``launch(_:)`` starts the workers, when
/// there is work for them.
public struct WorkerChoice: Sendable {
    /// Worker processes (0: in process).
    public let workers: Int
    /// Threads rendering tiles in process (the workers when there are workers).
    public let threads: Int
    /// Why fewer workers than asked for run (the machine's capacity), to say as a warning.
    public let capped: String?

    /// What is wrong with the engine options `run` and `apply` share, or nil: a `--tile` side
    /// outside 0 ... ``RenderSchedule/largestTileSize``, `--threads` below 1, `--workers` below
    /// 0, or `--threads` with worker processes.
    public static func problem(tile: Int?, threads: Int?, workers: Int?) -> String? {
        if let tile, !(0...RenderSchedule.largestTileSize).contains(tile) {
            return "--tile must be 0 (one tile) or a number of pixels up to \(RenderSchedule.largestTileSize)"
        }
        if let threads, threads < 1 { return "--threads must be at least 1" }
        if let workers, workers < 0 { return "--workers must be 0 (in process) or more" }
        if let workers, workers > 0, threads != nil {
            return "--threads is for the in-process engine (--workers 0), not for worker processes"
        }
        return nil
    }

    /// Why an engine cannot be chosen or started.
    public enum Failure: Error, Sendable, CustomStringConvertible {
        /// Plugin filters (named) asked to run in process: they run in worker processes only.
        case pluginsNeedWorkers([String])
        /// No worker at all may run here (why).
        case noWorkers(String)
        /// The pool could not be made, or its workers could not start.
        case pool(RenderFailure)

        public var description: String {
            switch self {
            case .pluginsNeedWorkers(let names):
                "plugin filters (\(names.joined(separator: ", "))) run in worker processes only: drop --workers 0 and --threads"
            case .noWorkers(let reason): "cannot run worker processes: \(reason); --workers 0 renders in this process"
            case .pool(let failure): "\(failure)"
            }
        }

        /// Whether the options asked contradict each other (plugins asked to run in process),
        /// rather than the machine refusing.
        public var isContradiction: Bool { if case .pluginsNeedWorkers = self { true } else { false } }
    }

    /// The engine `workers` and `threads` (the options, nil when not given) ask for.
    ///
    /// - Parameter plugins: the plugin filters the work uses: their `run` is called in worker
    ///   processes only (a plugin that crashes there kills a worker, not the command).
    /// More workers than the machine allows (``WorkerPool/capacity(cores:)``: 4 per core, and
    /// what `ulimit -n` and `ulimit -u` leave room for) are capped (``capped`` says why).
    public init(
        workers: Int?, threads: Int?, configuredWorkers: Int?, plugins: [String], oneImage: Bool = false
    ) throws(Failure) {
        if !plugins.isEmpty, workers == 0 || threads != nil { throw .pluginsNeedWorkers(plugins) }
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let inProcess = threads != nil || (oneImage && plugins.isEmpty)
        let asked = workers ?? (inProcess ? 0 : configuredWorkers ?? cores)
        let capacity = WorkerPool.capacity(cores: cores)
        if asked > capacity.workers {
            guard capacity.workers > 0 else { throw .noWorkers(capacity.reason) }
            let source = workers != nil ? "--workers" : configuredWorkers != nil ? "the configuration's workers" : "one per core"
            capped = "\(asked) workers (\(source)) capped at \(capacity.workers): \(capacity.reason)"
            self.workers = capacity.workers
        } else {
            capped = nil
            self.workers = asked
        }
        self.threads = self.workers == 0 ? threads ?? cores : self.workers
    }

    /// What renders, in words: "2 workers", "2 threads".
    public var words: String { workers > 0 ? counted(workers, "worker") : counted(threads, "thread") }

    /// The rendering of one image (`apply`): a pool of workers starting (``Launched``), or the
    /// in-process engine. The workers start while the caller opens the image and decodes its
    /// first rows; ``Launched/started()`` waits for them before the first tile.
    public func launch(_ settings: FarmSettings) throws(Failure) -> Launched {
        guard workers > 0 else { return inProcess() }
        do throws(RenderFailure) {
            let pool = try WorkerPool(launching: settings.poolSettings)
            return Launched(choice: self, pool: pool, rendering: pool)
        } catch {
            throw .pool(error)
        }
    }

    /// This choice's threads rendering in this process, whatever its workers.
    public func inProcess() -> Launched {
        Launched(choice: self, pool: nil, rendering: InProcessRendering(executor: ThreadedTileExecutor(threads: threads)))
    }

    /// An engine launched for one image: what it renders with, and its pool, starting.
    public struct Launched: Sendable {
        /// The choice launched.
        public let choice: WorkerChoice
        /// The workers (nil: in process). Shut down when done.
        let pool: WorkerPool?
        /// Renders once ``started()`` returned; its ``ImageRendering/allocator`` is there at once.
        public let rendering: any ImageRendering

        /// The rendering, once every worker has started (at once in process).
        public func started() throws(Failure) -> any ImageRendering {
            do throws(RenderFailure) {
                try pool?.waitUntilStarted()
                return rendering
            } catch {
                throw .pool(error)
            }
        }

        /// Starts stopping the workers, if any, when no tile is left: they exit while the
        /// output's last rows are encoded.
        public func finishing() { pool?.beginShutdown() }

        /// Stops the workers, if any, and waits for them.
        public func shutdown() { pool?.shutdown() }
    }
}
