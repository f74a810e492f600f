import NIOCore
import NIOHTTPTypes
import Synchronization

/// How many connections the server holds at once, in all and from one address, and which one
/// gives way when they are all taken (docs/security.md, "The service"). Past an address's share
/// a new connection from it is closed as it is accepted. Past the total, the connection that
/// has been waiting longest for a request's head (one sending a head slowly, or idle between
/// requests) is closed to make room, and only when none is waiting is the newcomer refused: a
/// crowd of slow clients on many addresses can hold places only until newcomers arrive, never
/// lock everyone out (nginx frees idle keep-alive connections the same way when short of them).
public final class ConnectionLimits: Sendable {
    /// The most connections in all, and from one remote address.
    public let total: Int
    public let perAddress: Int

    /// One connection admitted: its address, its channel (to close it when it gives way) and,
    /// while it has no request in hand, since when it has been waiting for one's head.
    struct Entry {
        let address: String
        let channel: any Channel
        var waitingSince: NIODeadline?
    }

    private struct State {
        var entries: [Int: Entry] = [:]
        var byAddress: [String: Int] = [:]
        var nextID = 0
        var refused = 0
        var closedForRoom = 0
    }

    private let state = Mutex(State())

    /// Limits of `total` connections in all and `perAddress` from one address.
    public init(total: Int, perAddress: Int) {
        self.total = max(1, total)
        self.perAddress = max(1, min(perAddress, total))
    }

    /// The default of `--max-connections` for a process that may open `descriptors` files
    /// (nil: unlimited): half of what is left once 256 are kept for the farm (workers, images,
    /// the queue), at least 16, at most 1,048,576.
    public static func defaultTotal(descriptors: Int?) -> Int {
        guard let descriptors else { return 1 << 20 }
        return min(1 << 20, max(16, (descriptors - 256) / 2))
    }

    /// Counts a connection from `address` on `channel`, waiting for its first head since
    /// `now`; its id, or nil (not counted) when its address is over its share, or every place
    /// is taken by a connection with a request in hand. When every place is taken and some
    /// connection is waiting for a head, the one waiting longest is forgotten and closed.
    func admit(_ address: String, channel: any Channel, now: NIODeadline) -> Int? {
        let (id, closing) = state.withLock { state -> (Int?, (any Channel)?) in
            guard state.byAddress[address, default: 0] < perAddress else {
                state.refused += 1
                return (nil, nil)
            }
            var closing: (any Channel)?
            if state.entries.count >= total {
                let waiting = state.entries.filter { $0.value.waitingSince != nil }
                guard let oldest = waiting.min(by: { $0.value.waitingSince! < $1.value.waitingSince! }) else {
                    state.refused += 1
                    return (nil, nil)
                }
                closing = oldest.value.channel
                Self.remove(oldest.key, from: &state)
                state.closedForRoom += 1
            }
            let id = state.nextID
            state.nextID += 1
            state.entries[id] = Entry(address: address, channel: channel, waitingSince: now)
            state.byAddress[address, default: 0] += 1
            return (id, closing)
        }
        closing?.close(promise: nil)
        return id
    }

    /// Connection `id` is waiting for a request's head since `since`, or (nil) has one in hand.
    func waiting(_ id: Int, since: NIODeadline?) {
        state.withLock { state in state.entries[id]?.waitingSince = since }
    }

    /// Forgets connection `id` (closed); nothing when it was forgotten already (it gave way).
    func release(_ id: Int) {
        state.withLock { state in Self.remove(id, from: &state) }
    }

    private static func remove(_ id: Int, from state: inout State) {
        guard let entry = state.entries.removeValue(forKey: id) else { return }
        let left = state.byAddress[entry.address, default: 1] - 1
        state.byAddress[entry.address] = left > 0 ? left : nil
    }

    /// Connections open now.
    public var count: Int { state.withLock { $0.entries.count } }
    /// Connections closed as they were accepted, over a limit, since the server started.
    public var refused: Int { state.withLock { $0.refused } }
    /// Connections closed to make room for a newcomer, every place being taken, since the
    /// server started: each the one that had waited longest for a request's head.
    public var closedForRoom: Int { state.withLock { $0.closedForRoom } }
}

/// The deadlines of one connection's requests, and its place under the ``ConnectionLimits``.
/// Added after the HTTP decoding; it puts a ``FirstByte`` watcher at the front of the pipeline,
/// before the decoder, which hands nothing on before a whole head.
///
/// - A request's head must arrive whole within `headTimeout` of its first byte, and the first
///   request's head within `headTimeout` of the connection's start (Go's `ReadHeaderTimeout`,
///   nginx's `client_header_timeout`): a head sent a line at a time, however steadily, is
///   closed in its time.
/// - Its body must arrive whole within `requestTimeout` of its head (a body sent a byte at a
///   time).
/// - Between requests a keep-alive connection may stay idle for Hummingbird's idle timeout
///   (``ServerSettings/idleTimeout``), which also bounds any silence.
///
/// A connection with no request in hand (its responses all sent) is waiting for a head, and
/// may be closed to make room for a newcomer (``ConnectionLimits/admit(_:channel:now:)``).
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let limits: ConnectionLimits
    private let headTimeout: TimeAmount
    private let requestTimeout: TimeAmount
    /// The id counted, once admitted.
    private var admitted: Int?
    private var deadline: Scheduled<Void>?
    /// Requests whose head has arrived and whose response is not sent whole yet.
    private var inHand = 0
    /// The watcher before the decoder, armed while the connection waits for a request's first byte.
    private var firstByte: FirstByte?

    init(limits: ConnectionLimits, headTimeout: Duration, requestTimeout: Duration) {
        self.limits = limits
        self.headTimeout = TimeAmount(headTimeout)
        self.requestTimeout = TimeAmount(requestTimeout)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let address = context.channel.remoteAddress?.ipAddress ?? "unknown"
        guard let id = limits.admit(address, channel: context.channel, now: .now()) else {
            context.close(promise: nil)
            return
        }
        admitted = id
        let watcher = FirstByte()
        firstByte = watcher
        try? context.channel.pipeline.syncOperations.addHandler(watcher, position: .first)
        // The first request's head is due from the connection's start.
        closeUnless(within: headTimeout, context: context)
    }

    func handlerRemoved(context: ChannelHandlerContext) { forget() }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            inHand += 1
            firstByte?.armed = nil
            if let admitted { limits.waiting(admitted, since: nil) }
            closeUnless(within: requestTimeout, context: context)
        case .body:
            break
        case .end:
            deadline?.cancel()
            deadline = nil
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            inHand = max(0, inHand - 1)
            if inHand == 0 { waitForNextRequest(context: context) }
        }
        context.write(data, promise: promise)
    }

    func channelInactive(context: ChannelHandlerContext) {
        forget()
        context.fireChannelInactive()
    }

    /// Every response sent: the connection waits for another request, idle until its first
    /// byte (Hummingbird's idle timeout), then with `headTimeout` for its head.
    private func waitForNextRequest(context: ChannelHandlerContext) {
        if let admitted { limits.waiting(admitted, since: .now()) }
        // Both handlers are on the connection's event loop: the call comes on it.
        firstByte?.armed = { [weak self] in
            guard let self, self.inHand == 0 else { return }
            self.closeUnless(within: self.headTimeout, context: context)
        }
    }

    /// Closes the connection unless the deadline is moved or cancelled within `time`.
    private func closeUnless(within time: TimeAmount, context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = context.eventLoop.assumeIsolated().scheduleTask(in: time) { context.close(promise: nil) }
    }

    /// The connection is gone (or its handler removed): its deadline cancelled, its place
    /// under the limits given back, once.
    private func forget() {
        deadline?.cancel()
        deadline = nil
        firstByte?.armed = nil
        if let admitted { limits.release(admitted) }
        admitted = nil
    }
}

/// Sees a connection's bytes before the HTTP decoder does, and tells ``ConnectionGuard`` once
/// when the first byte of a request waited for arrives (the start of its head's deadline).
final class FirstByte: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// Called at the next byte, once; nil when no request is waited for.
    var armed: (() -> Void)?

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if let armed {
            self.armed = nil
            armed()
        }
        context.fireChannelRead(data)
    }
}
