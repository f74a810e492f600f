import BlurfarmSystem
import Glibc

extension WorkerPool {
    /// The most workers this machine allows, and the rule that sets it.
    public struct Capacity: Sendable, Equatable {
        /// The number of workers (0: none can run).
        public let workers: Int
        /// Why, e.g. "at most 4 per core, 2 cores".
        public let reason: String
    }

    /// Workers per core at most: a worker renders on one core, and more than a few per core
    /// only adds processes, memory and descriptors.
    public static let workersPerCore = 4
    /// Descriptors each worker holds in the coordinator (its two pipe ends).
    public static let descriptorsPerWorker = 2
    /// Descriptors kept for the rest of a run (standard streams, lock, records, the wake pipe,
    /// inputs being decoded, shared segments, libvips): a run uses about 14 at rest.
    public static let descriptorsKept = 24
    /// Processes (threads count) each worker may take (a worker runs 3 or 4 threads).
    public static let tasksPerWorker = 4
    /// Processes kept for the coordinator's own threads (about 20 with two images streaming:
    /// the image threads, the pool's, and for each streamed image its decoder, its saver and
    /// libvips's threads behind the saver).
    public static let tasksKept = 24

    /// The most workers that may run here, by the least of: ``workersPerCore`` × `cores`; what
    /// `RLIMIT_NOFILE` leaves after ``descriptorsKept``, at ``descriptorsPerWorker`` each; and,
    /// when it applies (not to root), what `RLIMIT_NPROC` leaves after ``tasksKept``, at
    /// ``tasksPerWorker`` each.
    public static func capacity(cores: Int) -> Capacity {
        var candidates = [Capacity(workers: workersPerCore * max(cores, 1), reason: "at most \(workersPerCore) per core, \(cores) cores")]
        if let files = Syscalls.softLimit(RLIMIT_NOFILE) {
            candidates.append(Capacity(
                workers: max(0, (files - descriptorsKept) / descriptorsPerWorker),
                reason: "ulimit -n \(files) leaves room for that many (\(descriptorsPerWorker) descriptors each, \(descriptorsKept) kept)"))
        }
        if Syscalls.processLimitApplies, let tasks = Syscalls.softLimit(__RLIMIT_NPROC) {
            candidates.append(Capacity(
                workers: max(0, (tasks - tasksKept) / tasksPerWorker),
                reason: "ulimit -u \(tasks) leaves room for that many (\(tasksPerWorker) threads each, \(tasksKept) kept)"))
        }
        return candidates.min { $0.workers < $1.workers }!
    }
}
