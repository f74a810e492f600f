import BlurfarmSystem
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization
import UnixSignals

/// `blurfarm serve` as services: the HTTP server and the farm, run together until SIGTERM or
/// SIGINT. On the signal the farm stops first (new requests that would change it are answered
/// 503, the event streams end, running tiles get `grace` to finish, then the workers stop),
/// then the HTTP server.
public enum FarmServer {
    /// Starts `service` (unfinished jobs of an earlier run are queued again) and serves it as
    /// `settings` say until one of `signals` (or until the task is cancelled); `onListening`
    /// gets the port once the server listens.
    public static func run(
        service: FarmService, jobFarm: any JobFarm, settings: ServerSettings, logger: Logger,
        signals: [UnixSignal] = [.sigterm, .sigint], onListening: @escaping @Sendable (Int) -> Void
    ) async throws {
        try await service.start()
        let box = PortBox(settings.port)
        // Connections never take the descriptors the farm needs (workers, images, the queue):
        // by default half of what is left of the limit `serve` raised, never more than that.
        let most = ConnectionLimits.defaultTotal(descriptors: Syscalls.descriptorLimit(raise: false))
        let limits = ConnectionLimits(
            total: min(settings.maxConnections ?? most, most), perAddress: settings.maxConnectionsPerAddress)
        let (headTimeout, requestTimeout) = (settings.headTimeout, settings.requestTimeout)
        let router = Routes.router(service: service, settings: settings, connections: limits, port: { box.value })
        let app = Application(
            router: router,
            server: .http1(configuration: .init(
                additionalChannelHandlers: [
                    ConnectionGuard(limits: limits, headTimeout: headTimeout, requestTimeout: requestTimeout)
                ],
                idleTimeout: TimeAmount(settings.idleTimeout))),
            configuration: .init(address: .hostname(settings.host, port: settings.port), serverName: nil),
            onServerRunning: { channel in
                let bound = channel.localAddress?.port ?? settings.port
                box.set(bound)
                onListening(bound)
            },
            logger: logger)
        let farm = FarmLifecycle(service: service, jobFarm: jobFarm, grace: settings.grace, logger: logger)
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: app), .init(service: farm)], gracefulShutdownSignals: signals,
                logger: logger))
        try await group.run()
    }
}

extension FarmServer {
    /// Raises the soft limit of open descriptors of this process (the server's, not a
    /// library's decision) to its hard limit; returns the limit now in force, nil when unlimited.
    @discardableResult
    public static func raiseDescriptorLimit() -> Int? { Syscalls.descriptorLimit(raise: true) }
}

/// The port the server listens on, once known.
private final class PortBox: Sendable {
    private let port: Atomic<Int>
    init(_ port: Int) { self.port = Atomic(port) }
    var value: Int { port.load(ordering: .relaxed) }
    func set(_ value: Int) { port.store(value, ordering: .relaxed) }
}

/// The farm as a service: waits for the graceful shutdown, then stops the service and the
/// farm.
struct FarmLifecycle: Service {
    let service: FarmService
    let jobFarm: any JobFarm
    let grace: Duration
    let logger: Logger

    func run() async throws {
        try? await gracefulShutdown()
        logger.info("stopping: running tiles have \(grace) to finish")
        await service.beginStopping()
        await jobFarm.shutdown(grace: grace)
        await service.stop()
        logger.info("stopped")
    }
}
