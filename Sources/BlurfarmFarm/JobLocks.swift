import BlurfarmCoordinator
import BlurfarmState

/// The locks of `run`'s jobs, taken before anything runs.
public enum JobLocks {
    /// Why the locks could not all be taken.
    public enum Failure: Error, CustomStringConvertible {
        /// Another run holds one (`wait` was false): ``JobProblem/locked(job:holder:lock:)``.
        case busy(JobProblem)
        /// A lock cannot be taken (its folder cannot be made, say).
        case cannotLock(StateError)

        /// Whether another run holds a lock (`run` exits 3).
        public var isBusy: Bool { if case .busy = self { true } else { false } }

        public var description: String {
            switch self {
            case .busy(let problem): problem.description
            case .cannotLock(let error): "\(error)"
            }
        }
    }

    /// Takes every job's lock (or, with `shard`, every job's shard's), in path order (so that `--wait` runs cannot deadlock), and
    /// returns them by job (jobs of the same manifest share one). The jobs are known by their
    /// names and manifests' paths, so that `run` takes their locks before it plans them, and
    /// finds another run's before it walks the inputs.
    ///
    /// - Throws: ``Failure/busy(_:)`` when another run holds one and `wait` is false;
    ///   ``Failure/cannotLock(_:)`` when a lock cannot be taken.
    public static func acquire(
        _ jobs: [(name: String, manifestPath: String)], state: String, shard: JobShard? = nil, wait: Bool
    ) throws(Failure) -> [JobLock] {
        let folders = jobs.map { JobStateFolder(state: state, jobName: $0.name, manifestPath: $0.manifestPath) }
        var taken: [String: JobLock] = [:]
        for (folder, job) in zip(folders, jobs).sorted(by: { $0.0.lockPath(shard: shard) < $1.0.lockPath(shard: shard) })
        where taken[folder.lockPath(shard: shard)] == nil {
            let outcome: JobLock.Outcome
            do throws(StateError) {
                outcome = try JobLock.acquire(folder.lockPath(shard: shard), wait: wait)
            } catch {
                throw .cannotLock(error)
            }
            switch outcome {
            case .acquired(let lock): taken[folder.lockPath(shard: shard)] = lock
            case .busy(let holder):
                throw .busy(JobProblem.locked(job: job.name, holder: holder, lock: folder.lockPath(shard: shard)))
            }
        }
        return folders.map { taken[$0.lockPath(shard: shard)]! }
    }
}
