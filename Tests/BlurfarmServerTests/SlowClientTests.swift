import BlurfarmServer
import BlurfarmTestSupport
import Foundation
import Testing

/// One client holding many connections with half-sent requests, or sending a body a byte at a
/// time, against a real server: it gets at most its share of connections, each closed after
/// the timeouts, and everyone else is answered meanwhile. The client is a real process
/// (Python's sockets) on another loopback address (127.0.0.2), as another host would be.
@Suite(.timeLimit(.minutes(2)), .tags(.process)) struct SlowClientTests {
    /// Opens `count` connections from 127.0.0.2 to `port`, each sending an unfinished head
    /// (and the first `trickle` a whole head and a body a byte every 0.2 s), prints `open`,
    /// then waits (up to 60 s) for the server to close each and prints how many it closed:
    /// `closed N of M`.
    static let client = """
        import socket, sys, time
        port, count, trickle = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
        socks = []
        for i in range(count):
            s = socket.socket(); s.bind(("127.0.0.2", 0)); s.connect(("127.0.0.1", port))
            try:
                if i < trickle:
                    s.sendall(b"POST /api/v1/jobs HTTP/1.1\\r\\nHost: 127.0.0.1:%d\\r\\nContent-Type: application/json\\r\\nContent-Length: 1000\\r\\n\\r\\n" % port)
                else:
                    s.sendall(b"GET /healthz HTTP/1.1\\r\\nHost: 127.0.0.1:%d\\r\\nX-Slow: " % port)
            except OSError:
                pass  # refused as accepted: counted as closed below
            s.setblocking(False); socks.append(s)
        def closed(s):
            try:
                return s.recv(4096) == b""
            except BlockingIOError:
                return False
            except OSError:
                return True
        print("open", flush=True)
        done, deadline = set(), time.time() + 60
        while len(done) < count and time.time() < deadline:
            for i, s in enumerate(socks):
                if i in done: continue
                if closed(s): done.add(i)
                elif i < trickle:
                    try: s.send(b" ")
                    except OSError: done.add(i)
            time.sleep(0.2)
        print("closed %d of %d" % (len(done), count), flush=True)
        """

    /// The value of `metric` in the server's `/metrics`.
    static func metric(_ name: String, of server: RunningServer) async throws -> Int? {
        let text = try await server.call("GET", "/metrics").text
        return text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Int($0.split(separator: " ")[1]) }
    }

    /// Waits until `metric` of `server` is at least `value` (`eventually`, within a minute);
    /// its value.
    static func wait(
        for metric: String, toReach value: Int, of server: RunningServer, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Int? {
        var current: Int?
        try await eventually("\(metric) to reach \(value); it is \(String(describing: current))", timeout: .seconds(60),
            interval: .milliseconds(20), sourceLocation: sourceLocation)
        {
            current = try await Self.metric(metric, of: server)
            return current ?? 0 >= value
        }
        return current
    }

    /// One address holding 60 half-sent requests gets 20 connections (its share here): the
    /// other 40 are closed as they are accepted, and everyone else is answered meanwhile. The
    /// timeouts are long, so that none of the 20 is closed for its time and the count is exact.
    @Test func oneAddressGetsItsShareOfConnectionsAndOthersAreAnswered() async throws {
        let server = try await RunningServer.start(try ServerFixture()) { settings in
            settings.maxConnectionsPerAddress = 20
            settings.idleTimeout = .seconds(600)
            settings.headTimeout = .seconds(600)
            settings.requestTimeout = .seconds(600)
        }
        let client = try await CurlOutput(command: ["python3", "-c", Self.client, "\(server.port)", "60", "3"])
        try await client.wait { $0.contains("open\n") || $0.contains("closed") }
        let refused = try await Self.wait(for: "blurfarm_connections_refused_total", toReach: 40, of: server)
        let open = try await Self.metric("blurfarm_connections", of: server)
        let health = try await server.call("GET", "/healthz")
        let jobs = try await server.call("GET", "/api/v1/jobs")
        _ = await client.close()
        await server.stop()
        #expect(refused == 40)
        #expect((20...23).contains(open ?? 0), "connections open: \(String(describing: open))")
        #expect(health.status == 200)
        #expect(jobs.status == 200)
    }

    /// Half-sent heads and bodies sent a byte at a time are closed when their time is up (2 s
    /// here: the head's, the body's), while everyone else is answered.
    @Test func halfSentHeadsAndTrickledBodiesAreClosedWhenTheirTimeIsUp() async throws {
        let server = try await RunningServer.start(try ServerFixture()) { settings in
            settings.idleTimeout = .seconds(2)
            settings.headTimeout = .seconds(2)
            settings.requestTimeout = .seconds(2)
        }
        let client = try await CurlOutput(command: ["python3", "-c", Self.client, "\(server.port)", "8", "3"])
        try await client.wait { $0.contains("open\n") || $0.contains("closed") }
        let health = try await server.call("GET", "/healthz")
        let report = await client.end()
        await server.stop()
        #expect(health.status == 200)
        #expect(report.contains("closed 8 of 8"), "\(report)")
    }

    /// Connections from `addresses` loopback addresses (127.0.0.2 on), `each` from every one,
    /// each sending half a request's head and then one more header line every `interval`
    /// seconds, so that it is never idle; prints `open` once all are made, then keeps them
    /// going (for 120 s at most) until it is killed.
    static let trickler = """
        import socket, sys, time
        port, addresses, each, interval = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
        socks = []
        for a in range(addresses):
            for i in range(each):
                s = socket.socket(); s.bind(("127.0.0.%d" % (2 + a), 0))
                try:
                    s.connect(("127.0.0.1", port))
                    s.sendall(b"GET /healthz HTTP/1.1\\r\\nHost: 127.0.0.1:%d\\r\\n" % port)
                    socks.append(s)
                except OSError:
                    s.close()
        print("open", flush=True)
        end = time.time() + 120
        while socks and time.time() < end:
            time.sleep(interval)
            for s in list(socks):
                try: s.sendall(b"X-Slow: 1\\r\\n")
                except OSError: socks.remove(s)
        """

    /// A head sent one header line at a time, steadily enough never to be idle, is closed when
    /// the head's time is up (2 s here), though the idle timeout is ten minutes: the whole head
    /// has a deadline (`--head-timeout`), as Go's `ReadHeaderTimeout` and nginx's
    /// `client_header_timeout`.
    @Test func aHeadTrickledInLineByLineIsClosedAtTheHeadsDeadline() async throws {
        let server = try await RunningServer.start(try ServerFixture()) { settings in
            settings.idleTimeout = .seconds(600)
            settings.requestTimeout = .seconds(600)
            settings.headTimeout = .seconds(2)
        }
        let client = try await CurlOutput(command: ["python3", "-c", Self.trickler, "\(server.port)", "1", "4", "0.2"])
        try await client.wait { $0.contains("open\n") }
        try await eventually("the four trickled heads closed", timeout: .seconds(60), interval: .milliseconds(50)) {
            (try await Self.metric("blurfarm_connections", of: server) ?? 0) <= 1
        }
        _ = await client.close()
        let health = try await server.call("GET", "/healthz")
        await server.stop()
        #expect(health.status == 200)
    }

    /// Slow clients on nine addresses, each within its share, together holding every place
    /// (12 × 9 = 108 connections for 100 places), their heads never finished and never idle,
    /// with deadlines far away: a client on a tenth address (curl from 127.0.0.11) and the
    /// test's own are still answered, each taking the place of the connection that has waited
    /// longest for its head.
    @Test func slowClientsOnManyAddressesGiveWayToANewcomer() async throws {
        let server = try await RunningServer.start(try ServerFixture()) { settings in
            settings.idleTimeout = .seconds(600)
            settings.requestTimeout = .seconds(600)
            settings.headTimeout = .seconds(600)
            settings.maxConnections = 100
            settings.maxConnectionsPerAddress = 12
        }
        let client = try await CurlOutput(command: ["python3", "-c", Self.trickler, "\(server.port)", "9", "12", "1"])
        try await client.wait { $0.contains("open\n") }
        // Every place is taken by the slow clients (the eight over the total gave way to later ones).
        _ = try await Self.wait(for: "blurfarm_connections_closed_for_room_total", toReach: 8, of: server)
        let newcomer = try await CurlOutput([
            "--interface", "127.0.0.11", "-o", "/dev/null", "-w", "%{http_code}\n", "--max-time", "30", server.base + "/healthz",
        ])
        try await newcomer.wait { $0.contains("\n") }
        let answered = await newcomer.close()
        let jobs = try await server.call("GET", "/api/v1/jobs")
        let open = try await Self.metric("blurfarm_connections", of: server)
        _ = await client.close()
        await server.stop()
        #expect(answered.contains("200"), "curl from 127.0.0.11: \(answered)")
        #expect(jobs.status == 200)
        #expect((open ?? 0) <= 100, "connections open: \(String(describing: open))")
    }
}
