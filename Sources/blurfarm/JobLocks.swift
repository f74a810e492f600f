import BlurfarmFarm
import BlurfarmState
import ArgumentParser
import BlurfarmCoordinator

/// The locks of `run`'s jobs, taken before anything runs.
enum JobLocks {
    /// Takes every job's lock (or, with `shard`, every job's shard's), in path order (so that `--wait` runs cannot deadlock), and
    /// returns them by job (jobs of the same manifest share one).
    ///
    /// - Throws: ``ExitCode`` 3 (after saying so) when another run holds one and `wait` is
    ///   false; 1 when a lock cannot be taken.
    static func acquire(
        _ plans: [JobPlan], state: String, shard: JobShard? = nil, wait: Bool, printer: RunPrinter
    ) throws -> [JobLock] {
        let folders = plans.map { JobStateFolder(state: state, jobName: $0.job.name, manifestPath: $0.manifestPath) }
        var taken: [String: JobLock] = [:]
        for (folder, plan) in zip(folders, plans).sorted(by: { $0.0.lockPath(shard: shard) < $1.0.lockPath(shard: shard) })
        where taken[folder.lockPath(shard: shard)] == nil {
            let outcome: JobLock.Outcome
            do throws(StateError) {
                outcome = try JobLock.acquire(folder.lockPath(shard: shard), wait: wait)
            } catch {
                printer.fail("\(error)")
                throw ExitCode(ExitStatus.someFailed)
            }
            switch outcome {
            case .acquired(let lock): taken[folder.lockPath(shard: shard)] = lock
            case .busy(let holder):
                printer.fail(JobProblem.locked(job: plan.job.name, holder: holder, lock: folder.lockPath(shard: shard)).description)
                throw ExitCode(ExitStatus.locked)
            }
        }
        return folders.map { taken[$0.lockPath(shard: shard)]! }
    }
}
