import BlurfarmCore

/// How long a worker may work on one task (heartbeats or not) before it is killed and replaced
/// and the task retried (docs/configuration.md, `task-timeout`). The heartbeat comes from
/// another thread of the worker, so it proves the worker alive, not the task moving: a filter
/// (a plugin) stuck in its pixel loop is caught by this limit alone.
public enum TaskTimeout: Sendable, Hashable {
    /// The same limit for every task: the configuration's `task-timeout`.
    case fixed(Duration)
    /// The default, for a configuration without `task-timeout`: a limit per task that no
    /// healthy task comes near, yet short enough that a hang on small images is caught within
    /// seconds, ``limit(pixelsRead:slowestSoFar:)``.
    case adaptive

    /// The adaptive limit's floor: 2 s for any task. A 512 × 512 tile of the built-in
    /// filters at their most expensive takes well under a second; a hang on a small image is
    /// caught after about this long per attempt.
    public static let floor = Duration.seconds(2)
    /// The adaptive limit's allowance per pixel the tile's filters read (each filter's region
    /// of interest, ``FilterChain/pixelsRead(for:image:)``), on top of ``floor``: 20 µs.
    /// Measured in a debug build, a 512 × 512 tile of `gaussian sigma=100` (reading 1112 ×
    /// 1112 pixels) takes 0.3 s against an allowance of 27 s; the widest blurs read their whole
    /// reach around the tile, so their allowance grows with it. Room, too, for a plugin that
    /// is slow per pixel.
    public static let allowancePerPixel = Duration.microseconds(20)
    /// The adaptive limit is at least this many times the slowest task finished so far by
    /// the pool: a chain that turns out slow raises the limit of the tasks after it.
    public static let slowestMultiple = 20

    /// The limit for a task whose filters read `pixelsRead` pixels, when the slowest task
    /// finished so far took `slowestSoFar` (zero when none has finished).
    public func limit(pixelsRead: Int, slowestSoFar: Duration) -> Duration {
        switch self {
        case .fixed(let limit): return limit
        case .adaptive:
            // Capped so that no tile's allowance can overflow a Duration.
            let pixels = min(max(0, pixelsRead), 1 << 40)
            return max(Self.floor + Self.allowancePerPixel * pixels, slowestSoFar * Self.slowestMultiple)
        }
    }

    /// How the limit reads in a message: `600 seconds`, or `2.3 seconds (adaptive)`.
    func describe(_ limit: Duration) -> String {
        switch self {
        case .fixed: "\(limit)"
        case .adaptive: "\(limit) (the adaptive default)"
        }
    }
}
