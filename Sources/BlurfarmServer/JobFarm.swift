import BlurfarmState
import BlurfarmAPI
import BlurfarmImageIO
import BlurfarmCoordinator
import BlurfarmKernels

/// What the service gives the farm: one job of the queue, planned.
public struct ServedJob: Sendable {
    /// The queue's id of the job.
    public var id: Int64
    /// Its plan (inputs and outputs over the file system as it is now).
    public var plan: JobPlan
    /// The filters its manifest was checked against (built-ins and plugins).
    public var registry: FilterRegistry
    /// 0–100, higher first.
    public var priority: Int
    /// Render again the outputs that failed before (a retry) instead of leaving them failed.
    public var retryFailed: Bool
    /// The folders its outputs must stay below when they are written (the server's roots).
    public var confinement: RootConfinement?

    /// The job `id` planned as `plan`.
    public init(
        id: Int64, plan: JobPlan, registry: FilterRegistry, priority: Int, retryFailed: Bool,
        confinement: RootConfinement? = nil
    ) {
        self.id = id
        self.plan = plan
        self.registry = registry
        self.priority = priority
        self.retryFailed = retryFailed
        self.confinement = confinement
    }
}

/// How one output ended, as the farm reports it.
public struct OutputOutcome: Sendable, Equatable {
    /// `written`, `failed`, `cancelled` or `stopped`.
    public var status: JobOutputState
    /// The output file's path.
    public var output: String
    /// Its pixels, tiles, seconds and tile retries.
    public var pixels: Int
    public var tiles: Int
    public var seconds: Double
    public var retries: Int
    /// Its checksum when written.
    public var checksum: String?
    /// Why it failed.
    public var errorKind: String?
    public var error: String?

    /// An outcome.
    public init(
        status: JobOutputState, output: String, pixels: Int, tiles: Int, seconds: Double, retries: Int, checksum: String?,
        errorKind: String?, error: String?
    ) {
        self.status = status
        self.output = output
        self.pixels = pixels
        self.tiles = tiles
        self.seconds = seconds
        self.retries = retries
        self.checksum = checksum
        self.errorKind = errorKind
        self.error = error
    }
}

/// What the farm tells the service, by the queue's job ids.
public enum JobFarmEvent: Sendable, Equatable {
    /// The job's outputs are planned: `outputs` in all, `upToDate` of them already.
    case accepted(job: Int64, outputs: Int, upToDate: Int)
    /// An output started, in `tiles` tiles.
    case outputStarted(job: Int64, output: String, tiles: Int)
    /// `done` of the output's `total` tiles are rendered.
    case tilesDone(job: Int64, output: String, done: Int, total: Int)
    /// An output ended.
    case outputFinished(job: Int64, OutputOutcome)
    /// `count` outputs were cancelled before they started: counted, each without a row of
    /// its own (a million-output job cancelled early stored a row for each, 17 s).
    case outputsCancelled(job: Int64, count: Int)
    /// Something went wrong in the job beside its outputs (another run holds its lock, its
    /// state folder failed, an input was refused): one line, and the refusal it is when it
    /// kept the whole job from running.
    case problem(job: Int64, String, refusal: JobRefusal?)
    /// A worker started, was lost or was replaced.
    case workersChanged
    /// The job is finished: `failed` outputs failed; `cancelled` when it stopped on a cancel.
    case finished(job: Int64, failed: Int, cancelled: Bool)
}

/// Why the farm refused a job (another run holds its lock, its state folder cannot be read).
public struct JobFarmRefusal: Error, Sendable, CustomStringConvertible {
    /// The farm's message, naming the file.
    public var description: String

    /// A refusal saying `description`.
    public init(_ description: String) { self.description = description }
}

/// The farm as the service uses it: one worker pool for every job. ``FarmBridge``
/// is the farm of `blurfarm serve` (the coordinator's `Farm`); the service's tests drive
/// the service through a scripted one.
public protocol JobFarm: Sendable {
    /// Queues the job's outputs (those not up to date); the farm reports on it by its id.
    func submit(_ job: ServedJob) throws(JobFarmRefusal)
    /// Drops the job's tiles; it finishes as cancelled.
    func cancel(_ id: Int64)
    /// Starts no new output of the job.
    func pause(_ id: Int64)
    /// Starts its outputs again.
    func resume(_ id: Int64)
    /// Changes the job's priority for the tiles not yet sent.
    func setPriority(_ id: Int64, _ priority: Int)
    /// Every event from now on.
    func events() -> AsyncStream<JobFarmEvent>
    /// The worker processes.
    func workers() -> [WorkerInfo]
    /// Stops taking jobs, lets running tiles finish for up to `grace`, then stops the workers.
    func shutdown(grace: Duration) async
}
