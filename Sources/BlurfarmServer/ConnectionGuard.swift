import NIOCore
import NIOHTTPTypes
import Synchronization

/// How many connections the server holds at once, in all and from one address: past either
/// count a new connection is closed as it is accepted, so that one client holding connections
/// open (half-sent requests, idle keep-alives) cannot take every descriptor of the process
/// and starve everyone else (docs/security.md, "The service").
public final class ConnectionLimits: Sendable {
    /// The most connections in all, and from one remote address.
    public let total: Int
    public let perAddress: Int
    private let open = Mutex<(total: Int, byAddress: [String: Int], refused: Int)>((0, [:], 0))

    /// Limits of `total` connections in all and `perAddress` from one address.
    public init(total: Int, perAddress: Int) {
        self.total = max(1, total)
        self.perAddress = max(1, min(perAddress, total))
    }

    /// Counts a connection from `address`; false (and not counted) when over a limit.
    func admit(_ address: String) -> Bool {
        open.withLock { open in
            guard open.total < total, open.byAddress[address, default: 0] < perAddress else {
                open.refused += 1
                return false
            }
            open.total += 1
            open.byAddress[address, default: 0] += 1
            return true
        }
    }

    /// Forgets a connection from `address` admitted before.
    func release(_ address: String) {
        open.withLock { open in
            open.total -= 1
            let left = open.byAddress[address, default: 1] - 1
            open.byAddress[address] = left > 0 ? left : nil
        }
    }

    /// Connections open now.
    public var count: Int { open.withLock { $0.total } }
    /// Connections closed as they were accepted, over a limit, since the server started.
    public var refused: Int { open.withLock { $0.refused } }
}

/// The first handler after a connection's HTTP decoding: admits the connection under its
/// ``ConnectionLimits`` (or closes it at once), and closes a connection whose request, once
/// its head has arrived, is not whole within `requestTimeout` (a body sent a byte at a time).
/// The time a head may take to arrive, and a keep-alive connection may stay idle, is
/// Hummingbird's idle timeout (``ServerSettings/idleTimeout``): the decoder hands nothing on
/// before a whole head, so a head sent slowly is idleness too.
final class ConnectionGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    private let limits: ConnectionLimits
    private let requestTimeout: TimeAmount
    /// The address counted, once admitted.
    private var admitted: String?
    private var deadline: Scheduled<Void>?

    init(limits: ConnectionLimits, requestTimeout: Duration) {
        self.limits = limits
        self.requestTimeout = TimeAmount(requestTimeout)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let address = context.channel.remoteAddress?.ipAddress ?? "unknown"
        if limits.admit(address) {
            admitted = address
        } else {
            context.close(promise: nil)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) { forget() }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            deadline?.cancel()
            deadline = context.eventLoop.assumeIsolated().scheduleTask(in: requestTimeout) {
                context.close(promise: nil)
            }
        case .body:
            break
        case .end:
            deadline?.cancel()
            deadline = nil
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        forget()
        context.fireChannelInactive()
    }

    /// The connection is gone (or its handler removed): its deadline cancelled, its place
    /// under the limits given back, once.
    private func forget() {
        deadline?.cancel()
        deadline = nil
        if let admitted { limits.release(admitted) }
        admitted = nil
    }
}
