/// The worker pool's tunables, each with its reason, as RenderSchedule is the render's: how
/// often a worker that cannot start is tried, how many workers a machine's cores and limits
/// leave room for (`WorkerPool.capacity(cores:)`), and the defaults of the configuration's
/// pool settings (`FarmConfiguration`: `whole-image-pixels`, `heartbeat-timeout`, `retries`).
/// Here, beside RenderSchedule, so that the configuration (BlurfarmManifest) and the pool
/// read one value.
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
    /// Descriptors kept for the rest of a run (standard streams, lock, records, the report's
    /// outputs, the wake pipe, inputs being decoded, shared segments, libvips): a run uses
    /// about 15 at rest.
    public static let descriptorsKept = 25
    /// Processes (threads count) each worker may take (a worker runs 3 or 4 threads).
    public static let tasksPerWorker = 4
    /// Processes kept for the coordinator's own threads (about 20 with two images streaming:
    /// the image threads, the pool's, and for each streamed image its decoder, its saver and
    /// libvips's threads behind the saver).
    public static let tasksKept = 24

    /// The largest image a worker makes whole (decoded, filtered and encoded there): 16
    /// megapixels, a decode (premultiplied `Float32`) and outputs that fit a worker's share of
    /// memory, and well under a second of one core, so that the tail of a batch stays short
    /// (docs/configuration.md).
    public static let wholeImagePixels = 1 << 24
    /// Seconds of silence before a worker counts as hung: ten, twenty heartbeats' worth (a
    /// working worker beats every half second, `Worker.heartbeatInterval`).
    public static let heartbeatTimeout = 10.0
    /// Retries of a tile (or a whole image) on another worker before it counts as failed:
    /// three, enough for a worker killed or hung now and then, few enough that an input that
    /// kills every worker fails soon.
    public static let retries = 3
}
