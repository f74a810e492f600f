import BlurfarmCore
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


    /// The most workers that may run here, by the least of: ``PoolSchedule/workersPerCore`` × `cores`; what
    /// `RLIMIT_NOFILE` leaves after ``PoolSchedule/descriptorsKept``, at ``PoolSchedule/descriptorsPerWorker`` each; and,
    /// when it applies (not to root), what `RLIMIT_NPROC` leaves after ``PoolSchedule/tasksKept``, at
    /// ``PoolSchedule/tasksPerWorker`` each.
    public static func capacity(cores: Int) -> Capacity {
        var candidates = [Capacity(workers: PoolSchedule.workersPerCore * max(cores, 1), reason: "at most \(PoolSchedule.workersPerCore) per core, \(cores) cores")]
        if let files = Syscalls.softLimit(RLIMIT_NOFILE) {
            candidates.append(Capacity(
                workers: max(0, (files - PoolSchedule.descriptorsKept) / PoolSchedule.descriptorsPerWorker),
                reason: "ulimit -n \(files) leaves room for that many (\(PoolSchedule.descriptorsPerWorker) descriptors each, \(PoolSchedule.descriptorsKept) kept)"))
        }
        if Syscalls.processLimitApplies, let tasks = Syscalls.softLimit(__RLIMIT_NPROC) {
            candidates.append(Capacity(
                workers: max(0, (tasks - PoolSchedule.tasksKept) / PoolSchedule.tasksPerWorker),
                reason: "ulimit -u \(tasks) leaves room for that many (\(PoolSchedule.tasksPerWorker) threads each, \(PoolSchedule.tasksKept) kept)"))
        }
        return candidates.min { $0.workers < $1.workers }!
    }
}
