import BlurfarmCoordinator
import BlurfarmState
import BlurfarmImageIO
import BlurfarmKernels
import BlurfarmManifest

/// One job for a ``Farm``: a planned manifest, its filters, and how to run it.
public struct FarmJob: Sendable {
    /// The plan (``JobPlanner``): inputs, outputs, tile size.
    public var plan: JobPlan
    /// The filters the variants name (built-in and the plugins the configuration loads).
    public var registry: FilterRegistry
    /// Higher runs first; then arrival.
    public var priority: Int
    /// Run every output, up to date or not (`run --force`).
    public var force: Bool
    /// Try again the inputs remembered as failed (`--retry-failed`).
    public var retryFailed: Bool
    /// Remove recorded outputs whose input is gone (`--prune`); ``forcePrune`` even when that
    /// looks like a mistake.
    public var prune: Bool
    public var forcePrune: Bool
    /// Overrides the manifest's `verify:`.
    public var verify: VerifyMode?
    /// Wait for another run of the job instead of failing (`--wait`).
    public var waitForLock: Bool
    /// The job's lock, when the caller took it already (the CLI takes every job's first).
    public var lock: JobLock?
    /// The shard `plan` is (`run --shard`: ``JobPlan/shard(_:pixels:)``), or nil for the whole
    /// job: a shard takes its own lock and records (``ShardRecords``).
    public var shard: JobShard?
    /// The folders its files must stay below when they are opened (the service's roots), or
    /// nil for none: each input and each output's folder is opened beneath one, never through a
    /// link that leaves them (``RootConfinement``), and so is every folder made for an output.
    public var confinement: RootConfinement?
    /// The output map's path, relative to the working directory: the job's `map:` (the
    /// manifest's, in its folder, or `run --map`'s, absolute) ; nil for none. A shard writes
    /// none: its records are part of the job's (the next whole run writes the map).
    public var mapPath: String? {
        if shard != nil { return nil }
        return plan.job.map.map { JobPlanner.join(plan.folder, $0) }
    }

    /// Whether the job has a state folder (lock, records, report): `run`'s and the service's
    /// jobs. Without (`apply`), every output is written, nothing is recorded, nothing pruned.
    public var keepsRecords: Bool
    /// How long a temporary file that a writer now gone left beside the outputs must have been
    /// untouched before the run removes it (``JobRunner/removeAbandonedFiles(of:minimumAge:)``):
    /// 10 minutes, as a folder may be shared with another host, whose processes are not seen
    /// here; the service's jobs, below its own roots, 0.
    public var abandonedAge: Double

    public init(
        plan: JobPlan, registry: FilterRegistry, priority: Int = 0, force: Bool = false, retryFailed: Bool = false,
        prune: Bool = false, forcePrune: Bool = false, verify: VerifyMode? = nil, waitForLock: Bool = false,
        lock: JobLock? = nil, shard: JobShard? = nil, confinement: RootConfinement? = nil, keepsRecords: Bool = true,
        abandonedAge: Double = 600
    ) {
        self.plan = plan
        self.registry = registry
        self.priority = priority
        self.force = force
        self.retryFailed = retryFailed
        self.prune = prune || forcePrune
        self.forcePrune = forcePrune
        self.verify = verify
        self.waitForLock = waitForLock
        self.lock = lock
        self.shard = shard
        self.confinement = confinement
        self.keepsRecords = keepsRecords
        self.abandonedAge = abandonedAge
    }
}

/// A job's number in a farm, given when it is submitted.
public struct FarmJobID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let rawValue: UInt64

    public init(_ rawValue: UInt64) { self.rawValue = rawValue }

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }

    public var description: String { "\(rawValue)" }
}
