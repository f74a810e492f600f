import Synchronization

/// A request to stop a run early (SIGINT, SIGTERM): the runner starts no new output once it is
/// set, finishes (verifies and writes, or abandons) the one in hand, and reports the rest as
/// not done. Thread-safe; one per run, made by whoever drives the runner.
public final class StopRequest: Sendable {
    private let signal = Atomic<Int32>(0)

    public init() {}

    /// Asks the run to stop because of `signalNumber` (the first request wins).
    public func request(_ signalNumber: Int32) {
        _ = signal.compareExchange(expected: 0, desired: signalNumber, ordering: .relaxed)
    }

    /// The signal that asked the run to stop, or nil when none did.
    public var signalNumber: Int32? {
        let value = signal.load(ordering: .relaxed)
        return value == 0 ? nil : value
    }
}
