/// What a worker process is doing, as the API and the metrics name it.
public enum WorkerState: String, Sendable, Codable, CaseIterable {
    /// Started, not yet greeted.
    case starting
    case idle
    /// Running a task (a tile, or a whole image).
    case busy
    /// Being stopped or replaced.
    case stopping
}

/// One worker process of the pool, as the API shows it.
public struct WorkerInfo: Sendable, Codable, Equatable {
    /// Its slot in the pool (a replacement keeps the slot) and its process id.
    public var slot: UInt32
    public var pid: Int32
    public var state: WorkerState
    /// The tile it renders when busy: `WxH+X+Y` in the output.
    public var tile: String?
    /// Tiles it rendered, and how many workers of its slot were lost and replaced.
    public var tilesDone: Int
    public var restarts: Int

    /// A worker.
    public init(slot: UInt32, pid: Int32, state: WorkerState, tile: String?, tilesDone: Int, restarts: Int) {
        self.slot = slot
        self.pid = pid
        self.state = state
        self.tile = tile
        self.tilesDone = tilesDone
        self.restarts = restarts
    }
}
