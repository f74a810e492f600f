/// Which queued jobs go to the farm next, pure: strict priority (higher first), then
/// submission order (lower id first).
///
/// The farm itself orders the tiles of the jobs it has by priority, so the scheduler keeps it
/// fed with a few jobs (`depth`) and hands it at once any queued job of a higher priority than
/// all the farm has: a high-priority job submitted behind others overtakes them. A job paused
/// in the farm starts nothing, so it does not count against the depth; a job whose manifest
/// the farm has (the same job, submitted twice) waits for it: both would take one lock.
public struct Scheduler: Sendable {
    /// A job as the scheduler sees it.
    public struct Entry: Sendable, Equatable {
        /// The job's id: its place in submission order.
        public var id: Int64
        /// 0–100, higher first.
        public var priority: Int
        /// Its state machine.
        public var machine: JobMachine
        /// What one run of it locks (its name and manifest): two jobs of one key never run at once.
        public var key: String

        /// A job `id` with `priority`, `machine` and the `key` of its lock (empty: its own).
        public init(id: Int64, priority: Int, machine: JobMachine, key: String = "") {
            self.id = id
            self.priority = priority
            self.machine = machine
            self.key = key.isEmpty ? "#\(id)" : key
        }
    }

    /// How many jobs the farm is given ahead (the next one's outputs start as soon as a worker
    /// is free).
    public var depth: Int

    /// A scheduler keeping `depth` jobs in the farm.
    public init(depth: Int = 2) {
        self.depth = max(1, depth)
    }

    /// The ids of the queued jobs to dispatch now, in order.
    public func toDispatch(_ jobs: [Entry]) -> [Int64] {
        let inFarm = jobs.filter(\.machine.inFarm)
        let running = inFarm.filter { $0.machine.state != .paused }
        var count = running.count
        var highest = running.map(\.priority).max()
        var locked = Set(inFarm.map(\.key))
        var chosen: [Int64] = []
        for job in Self.inOrder(jobs.filter { $0.machine.state == .queued }) where !locked.contains(job.key) {
            if count < depth || highest.map({ job.priority > $0 }) ?? true {
                chosen.append(job.id)
                locked.insert(job.key)
                count += 1
                highest = max(highest ?? job.priority, job.priority)
            } else {
                break
            }
        }
        return chosen
    }

    /// `jobs` in queue order: priority, higher first, then id.
    public static func inOrder(_ jobs: [Entry]) -> [Entry] {
        jobs.sorted { ($0.priority, -$0.id) > ($1.priority, -$1.id) }
    }
}
