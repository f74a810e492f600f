/// Why nothing of a failed job could run, when a program may act on it (the client commands
/// exit as `run` would: 3 and 2).
public enum JobRefusal: String, Sendable, Codable, CaseIterable {
    /// Another process (a cron `blurfarm run`, say) holds the job's lock.
    case locked
    /// Its manifest no longer checks when its turn came.
    case invalid
}

/// A job's state (docs/api.md).
public enum JobState: String, Sendable, Codable, CaseIterable {
    /// Waiting for its turn; not yet handed to the farm.
    case queued
    /// Handed to the farm: its outputs are being rendered.
    case active
    /// No new output of it starts; outputs already rendering finish.
    case paused
    /// Cancelled while in the farm: waiting for the farm to drop its tiles.
    case cancelling
    /// Cancelled: no output of it is rendered any more (outputs written before stay).
    case cancelled
    /// Every output is written or was up to date.
    case completed
    /// Finished, and some outputs failed (the others were written).
    case failed

    /// Whether the job will not change any more unless retried.
    public var isFinished: Bool { self == .cancelled || self == .completed || self == .failed }
}
