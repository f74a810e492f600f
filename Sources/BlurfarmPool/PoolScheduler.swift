import BlurfarmCore
import BlurfarmEngine
import BlurfarmWire

/// The worker pool's decisions, apart from its processes, pipes and clocks
/// (docs/pool.md, "The worker pool"): a value that takes what happened (a worker said
/// `hello`, a result arrived, a worker fell silent, a job was cancelled) and answers what to do
/// (send this tile to that worker, kill that one, finish that image). ``WorkerPool`` is the
/// thin shell around it that does the I/O; the tests drive it directly, with no process.
///
/// **Workers.** Each worker is in one state: ``WorkerState/starting(since:)`` until its
/// `hello` and `ready`, ``WorkerState/idle``, ``WorkerState/busy(task:since:)`` from a task
/// until the `ready` that follows its reply, ``WorkerState/stopping`` once it is to be killed,
/// until the shell reports it gone (``Event/workerExited(_:_:)``). A busy worker is sent its
/// next task before that `ready` (``Settings/tasksHeld``): it waits in the worker
/// (``Worker/waiting``) and runs from the `ready`, so that the worker never waits for the
/// pool's answer. A worker that is silent longer than the heartbeat timeout while it has a
/// task (or before its `hello`), or runs one task longer than the task timeout, is killed; its
/// running task goes back to the front of its image's queue with the next attempt number, its
/// waiting tasks with theirs (they never ran), and a replacement is started.
///
/// **Images.** Tiles go out by their image's ``ImageOrder``: the job's priority (higher
/// first), then the job's arrival, then the image's. A tile fails its image when its attempt
/// `retries + 1` fails too; a filter's `failure` reply fails it at once. An image that fails
/// or whose job is cancelled leaves the queue at once, its tasks in flight are sent `cancel`
/// (the workers go on), and it finishes when the last of them is answered: until then a worker
/// may still write into its pixels.
///
/// **Starting.** A worker that cannot be spawned is tried again after 0.1 s, then twice as
/// long each time, ``Settings/startAttempts`` times. Workers that keep dying before their
/// `hello` (more than three times the pool's size in a row) break the pool at start-up; later
/// they start an outage: images fail while no worker is alive, and the workers are started
/// again after a backoff (1 s, doubling up to 30 s) until one says `hello`.
public struct PoolScheduler: Sendable {
    public typealias Instant = ContinuousClock.Instant
    /// A worker, as numbered by the pool (its `--worker-id`).
    public typealias WorkerID = UInt32
    /// A task sent to a worker.
    public typealias TaskID = UInt64
    /// An image handed to the pool.
    public typealias ImageID = UInt64

    /// The pool's rules.
    public struct Settings: Sendable {
        /// Workers to keep running.
        public var workers: Int
        /// Failed attempts retried per tile before its image fails.
        public var retries: Int
        /// How long a worker with a task (or not yet greeted) may stay silent.
        public var heartbeatTimeout: Duration
        /// How long one task may run.
        public var taskTimeout: TaskTimeout
        /// Tries to spawn a worker before giving up (``WorkerPool/startAttempts``).
        public var startAttempts: Int
        /// Tasks a worker holds at once: 1, up to the protocol's most (`WireProtocol.tasksHeld`:
        /// one running, one waiting for its `ready`).
        public var tasksHeld: Int

        public init(
            workers: Int, retries: Int = 3, heartbeatTimeout: Duration = .seconds(10),
            taskTimeout: TaskTimeout = .adaptive, startAttempts: Int = PoolSchedule.startAttempts, tasksHeld: Int = WireProtocol.tasksHeld
        ) {
            precondition(workers >= 1, "a pool has at least one worker")
            precondition(retries >= 0, "retries cannot be negative")
            precondition((1...WireProtocol.tasksHeld).contains(tasksHeld), "a worker holds one task or two")
            self.tasksHeld = tasksHeld
            self.workers = workers
            self.retries = retries
            self.heartbeatTimeout = heartbeatTimeout
            self.taskTimeout = taskTimeout
            self.startAttempts = startAttempts
        }
    }

    /// What a worker is doing.
    public enum WorkerState: Sendable, Equatable {
        /// Spawned at `since`, not yet `hello` and `ready`.
        case starting(since: Instant)
        /// Waiting for a task.
        case idle
        /// Running `task` since `since` (when it was sent, or the `ready` after the task
        /// before); busy until the `ready` after its reply.
        case busy(task: TaskID, since: Instant)
        /// To be killed; gone once the shell reports ``Event/workerExited(_:_:)``.
        case stopping
    }

    /// Where an image's tiles stand in the queue: smaller goes first.
    public struct ImageOrder: Sendable, Comparable {
        /// The job's priority: higher goes first.
        public var priority: Int
        /// The job's arrival number.
        public var job: UInt64
        /// The image's arrival number.
        public var image: ImageID

        public init(priority: Int, job: UInt64, image: ImageID) {
            self.priority = priority
            self.job = job
            self.image = image
        }

        public static func < (a: Self, b: Self) -> Bool {
            (-a.priority, a.job, a.image) < (-b.priority, b.job, b.image)
        }
    }

    /// An image to render: its tiles, each with the pixels its filters read (what the adaptive
    /// task timeout allows for).
    public struct Image: Sendable {
        public var tiles: [Rect]
        public var pixelsRead: [Int]
        public var order: ImageOrder
        /// The chain's plugins, named when a tile fails too often (they most likely killed it).
        public var plugins: [String]

        public init(tiles: [Rect], pixelsRead: [Int], order: ImageOrder, plugins: [String] = []) {
            precondition(tiles.count == pixelsRead.count, "one pixel count per tile")
            self.tiles = tiles
            self.pixelsRead = pixelsRead
            self.order = order
            self.plugins = plugins
        }
    }

    /// A tile sent to a worker.
    public struct TileTask: Sendable, Equatable {
        public let task: TaskID
        public let image: ImageID
        public let tile: Rect
        public let attempt: UInt32
    }

    /// Why a worker could not be spawned.
    public enum SpawnFailure: Sendable, Equatable {
        /// The machine is short of what a spawn needs (descriptors, processes, memory): the
        /// reason. It may pass, so the spawn is tried again with backoff.
        case shortOf(String)
        /// The worker executable cannot be run (missing, not executable, not a program): the
        /// reason, naming it. Trying again would not help.
        case executable(String)
    }

    /// What happened.
    public enum Event: Sendable {
        /// The shell spawned worker `id` as process `pid`.
        case workerSpawned(WorkerID, pid: Int32)
        /// The shell could not spawn worker `id`.
        case workerSpawnFailed(WorkerID, SpawnFailure)
        case hello(WorkerID)
        case ready(WorkerID)
        case heartbeat(WorkerID)
        /// A task's result: the worker is done with it (it goes on at its `ready`), its
        /// checksum not yet checked against the output.
        case result(WorkerID, TaskID)
        /// The result's checksum checked: nil when it matches the output, else what differs.
        /// The shell checks after it has sent the workers their next tasks.
        case verified(TaskID, checksumMismatch: String?)
        /// A task's `failure` reply: a filter's error.
        case failure(WorkerID, TaskID, message: String)
        /// The worker broke the conversation (closed its output, sent what does not decode or
        /// what only a coordinator sends, could not be written to): it is killed.
        case workerFailed(WorkerID, reason: String)
        /// The worker is gone (killed and waited for): `exit` says how it ended.
        case workerExited(WorkerID, exit: String)
        case imageQueued(ImageID, Image)
        /// Every image of the job leaves the queue and finishes as cancelled.
        case jobCancelled(job: UInt64)
        /// The job's images take `priority`.
        case jobReprioritised(job: UInt64, priority: Int)
        /// Time passed: timeouts and start retries are checked.
        case tick
        /// Every image fails, every worker stops (one not yet greeted is killed at once).
        case shutdown
    }

    /// What to do.
    public enum Action: Sendable, Equatable {
        /// Spawn worker `id` and report it (``Event/workerSpawned(_:pid:)`` or
        /// ``Event/workerSpawnFailed(_:)``).
        case startWorker(WorkerID)
        case send(TileTask, to: WorkerID)
        /// Tell the worker to drop the task's reply.
        case cancel(TaskID, on: WorkerID)
        /// Kill the worker, wait for it, and report ``Event/workerExited(_:exit:)``.
        case kill(WorkerID, reason: String)
        /// Tiles of the image done so far.
        case progress(ImageID, done: Int, total: Int)
        /// The image is done: rendered (with its retried tiles) or failed.
        case finish(ImageID, Result<Int, RenderFailure>)
        /// Every worker was greeted: the pool has started.
        case started
        /// The pool could not start: stop the workers; the reason.
        case startFailed(String)
        /// Shut every worker down and wait for them.
        case stopWorkers
        /// Something worth a log line.
        case notice(PoolNotice)
    }

    public let settings: Settings
    /// The workers, by id.
    public internal(set) var workers: [WorkerID: Worker] = [:]
    /// The images being rendered, by id.
    var images: [ImageID: ImageState] = [:]
    /// Tasks sent and not yet answered.
    var tasks: [TaskID: Sent] = [:]
    /// Tasks whose result came and whose checksum is not checked yet (still in flight for
    /// their image: its pixels are needed to check them).
    var unverified: [TaskID: Sent] = [:]
    /// Workers to keep: fewer than asked once workers could not be spawned while some ran.
    public internal(set) var workerTarget: Int
    /// Whether every worker has been greeted once (``Action/started``).
    public internal(set) var hasStarted = false
    var isShuttingDown = false
    var nextWorkerID: WorkerID = 1
    var nextTaskID: TaskID = 1
    /// The longest task answered so far: the adaptive task timeout grows with it.
    public internal(set) var slowestTask = Duration.zero
    /// Workers that died before their `hello` since the last `hello`.
    var startFailures = 0
    /// A worker that could not be spawned: tries so far, when the next may be made, why.
    var spawnRetry: (attempts: Int, next: Instant, problem: String)?
    /// Set while workers keep failing to start after start-up: why, when to try again, and
    /// the wait after that.
    public internal(set) var outage: (problem: String, retryAt: Instant, backoff: Duration)?

    /// A pool to keep `settings.workers` workers; call ``start(at:)`` first.
    public init(settings: Settings) {
        self.settings = settings
        workerTarget = settings.workers
    }

    /// A worker's state and what the checks need of it.
    public struct Worker: Sendable {
        public let id: WorkerID
        public var pid: Int32 = 0
        public var state: WorkerState
        var greeted = false
        var lastHeard: Instant
        /// Tasks sent while it was busy, in order: each runs from the `ready` before it.
        public internal(set) var waiting: [TaskID] = []
        /// Tasks it holds, running or waiting; nil when it takes none (starting, stopping).
        var held: Int? {
            switch state {
            case .idle: 0
            case .busy: 1 + waiting.count
            case .starting, .stopping: nil
            }
        }
        /// Tasks this worker answered.
        public var tilesDone = 0
        /// Why it is being killed.
        var stopReason: String?
    }

    /// A task in flight.
    struct Sent: Sendable {
        let image: ImageID
        let pending: Pending
        let worker: WorkerID
        /// Cancelled: its reply is dropped.
        var cancelled = false
    }

    /// A tile waiting for a worker.
    struct Pending: Sendable {
        let tile: Rect
        let attempt: UInt32
        let pixelsRead: Int
        /// The worker whose result failed the last attempt (a bad checksum), while it lives:
        /// another worker takes the retry when there is one.
        var avoid: WorkerID?
    }

    /// An image in the pool.
    struct ImageState: Sendable {
        var order: ImageOrder
        let plugins: [String]
        let total: Int
        var queue: [Pending]
        var done = 0
        var retries = 0
        var inFlight = 0
        /// Set once it failed or was cancelled: it finishes with this once nothing is in flight.
        var ending: RenderFailure?
    }

    /// Something the pool did that an operator may want in a log.
    public enum PoolNotice: Sendable, Equatable {
        case workerStarted(WorkerID, pid: Int32)
        case workerLost(WorkerID, pid: Int32, reason: String, exit: String)
        case tileRetried(ImageID, tile: Rect, attempt: UInt32, reason: String)
        case workersCannotStart(String)
        /// Worker `worker` of the `workers` wanted could not be spawned for want of something
        /// (`problem`): tried again after `backoff`, this was try `attempt` of `attempts`.
        case workerStartRetried(worker: Int, workers: Int, attempt: Int, attempts: Int, backoff: Duration, problem: String)
        case workerTargetLowered(to: Int, reason: String)
    }
}
