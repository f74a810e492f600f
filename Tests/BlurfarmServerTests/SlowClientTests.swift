import BlurfarmServer
import Foundation
import Testing

/// One client holding many connections with half-sent requests, or sending a body a byte at a
/// time, against a real server: it gets at most its share of connections, each closed after
/// the timeouts, and everyone else is answered meanwhile. The client is a real process
/// (Python's sockets) on another loopback address (127.0.0.2), as another host would be.
@Suite(.timeLimit(.minutes(2))) struct SlowClientTests {
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
            if i < trickle:
                s.sendall(b"POST /api/v1/jobs HTTP/1.1\\r\\nHost: 127.0.0.1:%d\\r\\nContent-Type: application/json\\r\\nContent-Length: 1000\\r\\n\\r\\n" % port)
            else:
                s.sendall(b"GET /healthz HTTP/1.1\\r\\nHost: 127.0.0.1:%d\\r\\nX-Slow: " % port)
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

    @Test func aClientHoldingHalfSentRequestsGetsItsShareAndIsClosedWhileOthersAreAnswered() async throws {
        let server = try await RunningServer.start(try ServerFixture()) { settings in
            settings.maxConnectionsPerAddress = 20
            settings.idleTimeout = .seconds(2)
            settings.requestTimeout = .seconds(2)
        }
        let client = try await CurlOutput(command: ["python3", "-c", Self.client, "\(server.port)", "60", "3"])
        try await client.wait { $0.contains("open\n") || $0.contains("closed") }
        // 40 of the 60 are over one address's share: closed as they are accepted.
        let deadline = ContinuousClock.now + .seconds(60)
        var refused = try await Self.metric("blurfarm_connections_refused_total", of: server)
        while refused ?? 0 < 40, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            refused = try await Self.metric("blurfarm_connections_refused_total", of: server)
        }
        let health = try await server.call("GET", "/healthz")
        let jobs = try await server.call("GET", "/api/v1/jobs")
        // The other 20 (the three trickling bodies among them) are closed when their time is up.
        let report = await client.end()
        let open = try await Self.metric("blurfarm_connections", of: server)
        await server.stop()
        #expect(refused == 40)
        #expect(health.status == 200)
        #expect(jobs.status == 200)
        #expect(report.contains("closed 60 of 60"), "\(report)")
        #expect(open ?? 99 <= 3, "connections still open: \(String(describing: open))")
    }
}
