import Foundation

/// How the HTTP side of `blurfarm serve` runs (docs/serve.md).
public struct ServerSettings: Sendable {
    /// The address and port to listen on (port 0: any free port).
    public var host: String
    public var port: Int
    /// The bearer token every API request must carry; nil on a loopback address without
    /// `--token-file`.
    public var token: String?
    /// The folder of the web page's files (`index.html`, `app.js`, `style.css`).
    public var webFolder: String?
    /// The largest request body accepted, in bytes.
    public var maxBody: Int
    /// How long running tiles may finish after SIGTERM or SIGINT.
    public var grace: Duration
    /// The `host[:port]` names the server is also reached by (a reverse proxy's public name,
    /// from `--public-url`): accepted as the Host and in the Origin of a page.
    public var publicHosts: [String]
    /// How often an event stream with nothing to say sends a keep-alive comment.
    public var keepAlive: Duration
    /// How long a keep-alive connection may stay idle between requests (and any connection
    /// silent) before it is closed.
    public var idleTimeout: Duration
    /// How long a request's head may take to arrive whole, from its first byte (the first
    /// request's: from the connection's start): `--head-timeout`.
    public var headTimeout: Duration
    /// How long a request may take to arrive whole once its head has (its body).
    public var requestTimeout: Duration
    /// The most connections at once (nil: ``ConnectionLimits/defaultTotal(descriptors:)`` of the
    /// descriptors the process may open), and from one remote address (``ConnectionLimits``).
    public var maxConnections: Int?
    public var maxConnectionsPerAddress: Int

    /// Settings.
    public init(
        host: String = "127.0.0.1", port: Int = 8765, token: String? = nil, webFolder: String? = nil,
        maxBody: Int = 1 << 20, grace: Duration = .seconds(30), publicHosts: [String] = [],
        keepAlive: Duration = .seconds(15), idleTimeout: Duration = .seconds(30), headTimeout: Duration = .seconds(10),
        requestTimeout: Duration = .seconds(60), maxConnections: Int? = nil, maxConnectionsPerAddress: Int = 128
    ) {
        self.host = host
        self.port = port
        self.token = token
        self.webFolder = webFolder
        self.maxBody = maxBody
        self.grace = grace
        self.publicHosts = publicHosts.map { $0.lowercased() }
        self.keepAlive = keepAlive
        self.idleTimeout = idleTimeout
        self.headTimeout = headTimeout
        self.requestTimeout = requestTimeout
        self.maxConnections = maxConnections
        self.maxConnectionsPerAddress = maxConnectionsPerAddress
    }

    /// Whether `host` is a loopback address (where the token may be left out): `localhost`,
    /// `::1` or an IPv4 address in 127.0.0.0/8 written as one (not a name that starts with
    /// `127.`, which may resolve anywhere).
    public static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" || host == "::1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127"
            && parts.allSatisfy { !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isASCII) && UInt8($0) != nil }
    }

    /// Whether the server listens on every address (`0.0.0.0`, `::`) with a token (`serve`
    /// requires one there, docs/serve.md): it cannot know every name it is reached by, and a
    /// page elsewhere pointing a name at it has no token. Without a token, false: the names
    /// of ``host`` alone are taken.
    public var listensEverywhere: Bool { (host == "0.0.0.0" || host == "::") && token != nil }
}

/// A bearer token compared in constant time (as long as the lengths match).
enum TokenCheck {
    /// Whether `given` is `token`, looking at every byte.
    static func matches(_ given: Substring, _ token: String) -> Bool {
        let a = Array(given.utf8), b = Array(token.utf8)
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for index in 0..<b.count { difference |= b[index] ^ (index < a.count ? a[index] : 0) }
        return difference == 0
    }
}
