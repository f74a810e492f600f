/// The worker pool's tunables, each with its reason, as RenderSchedule is the render's: how
/// often a worker that cannot start is tried, and how many workers a machine's cores and
/// limits leave room for (``WorkerPool/capacity(cores:)``).
public enum PoolSchedule {
    /// How many times a worker that cannot be started at all (`pipe` or `posix_spawn` fails:
    /// no descriptors, no processes, no memory) is tried, waiting 0.1 s after the first
    /// failure and twice as long after each next: about 3 s in all.
    public static let startAttempts = 6

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
}
