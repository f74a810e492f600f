import Synchronization

/// One message of the event stream: `event: kind`, `data: json`, and the log's id for the
/// changes that are kept (a state, an output); live progress has none.
public struct StreamEvent: Sendable, Equatable {
    /// The event log's id, nil for progress that is not kept.
    public var id: Int64?
    public var kind: Kind
    /// The JSON.
    public var data: String

    /// What an event is about: its `event:` name on the stream and its `kind` in the log.
    public enum Kind: String, Sendable, Codable {
        /// A job's state or counts changed.
        case job
        /// An output started or finished.
        case output
        /// Tiles rendered (live only, never in the log).
        case progress
        /// The worker processes changed.
        case workers
    }

    /// The text of the event on the wire (text/event-stream).
    public var wireText: String {
        (id.map { "id: \($0)\n" } ?? "") + "event: \(kind.rawValue)\ndata: \(data)\n\n"
    }
}

/// Sends every change to every subscriber of the event stream. A subscriber that does not
/// keep up loses the oldest of its events past `buffer` (it can read them again from the log
/// by its last id).
public final class EventHub: Sendable {
    private let subscribers = Mutex<[Int: AsyncStream<StreamEvent>.Continuation]>([:])
    private let nextID = Atomic<Int>(0)
    /// Events kept for each subscriber that does not keep up.
    public let buffer: Int

    /// A hub keeping up to `buffer` events for each slow subscriber.
    public init(buffer: Int = 1024) { self.buffer = buffer }

    /// Every event from now on, until the stream is dropped.
    public func subscribe() -> AsyncStream<StreamEvent> {
        let id = nextID.add(1, ordering: .relaxed).newValue
        let (stream, continuation) = AsyncStream.makeStream(
            of: StreamEvent.self, bufferingPolicy: .bufferingNewest(buffer))
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.removeValue(forKey: id) }
        }
        subscribers.withLock { $0[id] = continuation }
        return stream
    }

    /// Sends `event` to every subscriber.
    public func publish(_ event: StreamEvent) {
        for continuation in subscribers.withLock({ Array($0.values) }) { continuation.yield(event) }
    }

    /// Ends every subscriber's stream (the server stops).
    public func finish() {
        for continuation in subscribers.withLock({ Array($0.values) }) { continuation.finish() }
    }

    /// How many subscribers there are.
    public var count: Int { subscribers.withLock { $0.count } }
}
