/// One client's event stream (`GET /api/v1/events`, docs/api.md): the event log after the
/// client's last id, then every change as it happens, with a keep-alive comment every
/// `keepAlive` so that a proxy does not close a stream with nothing to say.
///
/// It is opened when the request is taken, before its body is sent: the log's last id is read
/// first, then the stream subscribes, and whatever the log gained in between is sent from the
/// log before the live events (each event once, by id). No change falls between the two.
struct EventStream: Sendable {
    private let store: QueueStore
    /// The last event of the log the client has: it gets those after it.
    private let start: Int64
    private let live: AsyncStream<Message>
    /// Events of the log read at a time for a client catching up: what a client that does not
    /// read holds in the server's memory while its writes wait (the log keeps 10,000).
    static let replayPage = 100

    private enum Message: Sendable {
        case event(StreamEvent)
        case keepAlive
    }

    /// The stream of `service` for a client that saw the log up to event `after` (nil: one
    /// that wants the changes from now on). An `after` past the log's end (a client of a
    /// database since replaced) starts at the end: no live event is taken for one it has.
    init(service: FarmService, after: Int64?, keepAlive: Duration) {
        store = service.store
        let end = (try? service.store.lastEventID()) ?? 0
        start = min(after ?? end, end)
        let events = service.hub.subscribe()
        let (live, continuation) = AsyncStream.makeStream(
            of: Message.self, bufferingPolicy: .bufferingNewest(service.hub.buffer))
        let forward = Task {
            for await event in events { continuation.yield(.event(event)) }
            continuation.finish()
        }
        let ticks = Task {
            while (try? await Task.sleep(for: keepAlive)) != nil { continuation.yield(.keepAlive) }
        }
        continuation.onTermination = { _ in
            forward.cancel()
            ticks.cancel()
        }
        self.live = live
    }

    /// Sends the stream as text/event-stream through `write` until the service stops (or
    /// `write` throws: the client left).
    func send(_ write: (String) async throws -> Void) async throws {
        var last = start
        var replay = (try? store.events(after: last, limit: Self.replayPage)) ?? []
        while !replay.isEmpty {
            for event in replay {
                try await write(StreamEvent(id: event.id, kind: event.kind, data: event.data).wireText)
                last = event.id ?? last
            }
            replay = (try? store.events(after: last, limit: Self.replayPage)) ?? []
        }
        try await write(": connected\n\n")
        for await message in live {
            switch message {
            case .event(let event):
                if let id = event.id, id <= last { continue }
                try await write(event.wireText)
            case .keepAlive:
                try await write(": keep-alive\n\n")
            }
        }
    }
}
