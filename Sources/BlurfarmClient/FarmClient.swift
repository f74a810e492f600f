import AsyncHTTPClient
import BlurfarmAPI
import BlurfarmSystem
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// A client of the farm service's API (docs/api.md): each operation one request, its answer
/// decoded into the API's types (``BlurfarmAPI``), every failure a ``ClientError``. Requests
/// go through one process-wide AsyncHTTPClient (``http``), so a command opens one connection
/// for its requests and one for the event stream.
public struct FarmClient: Sendable {
    /// The service, e.g. `http://127.0.0.1:8765`.
    public let base: URL
    /// Its token (`Authorization: Bearer`), when it has one.
    public let token: String?

    /// How long one request may take until its answer's head arrives, before the server counts
    /// as unreachable (the body then comes within ``http``'s read timeout of each part).
    public static let requestTimeout: TimeAmount = .seconds(30)
    /// The largest answer read (a queue's whole job list is far below it).
    static let largestAnswer = 64 << 20

    /// The process's HTTP client: keep-alive connections on NIO's shared event loops, never shut
    /// down (it lives as long as the process, as `HTTPClient.shared` does). A connection the
    /// server refuses fails the request at once (not retried until the deadline: no server is
    /// listening, and a command says so); 60 s without a byte, the event stream's keep-alive
    /// comes every 15, is a server gone. A redirect is an answer, not followed: the token goes
    /// only to the server named. No proxy: `http_proxy` and its kin are not read (the service
    /// is on loopback or behind a reverse proxy the client reaches directly).
    static let http: HTTPClient = {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow, timeout: .init(connect: .seconds(10), read: .seconds(60)))
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()
    /// How often ``waitUntilFinished(_:every:progress:)`` asks again while the server does not answer.
    public static let pollInterval: Duration = .milliseconds(250)

    public init(base: URL, token: String?) {
        self.base = base
        self.token = token
    }

    /// `POST /api/v1/jobs`: submits a job; the job as queued.
    public func submit(_ request: SubmitRequest) async throws(ClientError) -> JobView {
        try await call(.POST, "api/v1/jobs", body: request)
    }

    /// `GET /api/v1/jobs`: every job, in queue order.
    public func jobs() async throws(ClientError) -> [JobView] {
        try await (call(.GET, "api/v1/jobs") as JobList).jobs
    }

    /// `GET /api/v1/jobs/{id}`.
    public func job(_ id: Int64) async throws(ClientError) -> JobView {
        try await call(.GET, "api/v1/jobs/\(id)")
    }

    /// `GET /api/v1/jobs/{id}/outputs`: the outputs started since the job was last handed to the
    /// farm, by path, those in `states` only when given: every page, `pageSize` outputs each (the
    /// server's default when nil), each asked after the last path of the one before.
    public func outputs(of id: Int64, states: [JobOutputState]? = nil, pageSize: Int? = nil) async throws(ClientError) -> [QueueOutput] {
        var outputs: [QueueOutput] = []
        var after: String?
        repeat {
            var query: [(String, String)] = []
            if let states { query.append(("state", states.map(\.rawValue).joined(separator: ","))) }
            if let pageSize { query.append(("limit", "\(pageSize)")) }
            if let after { query.append(("after", after)) }
            let page: OutputList = try await call(.GET, "api/v1/jobs/\(id)/outputs", query: query)
            outputs += page.outputs
            // A page that does not go on from the one before would be asked for again forever.
            if let next = page.next, next == after || page.outputs.isEmpty {
                throw .unexpectedAnswer(status: 200, reason: "the outputs' page after '\(ShownName.of(next))' does not go on")
            }
            after = page.next
        } while after != nil
        return outputs
    }

    /// A request that steers a job (`POST /api/v1/jobs/{id}/<verb>`, body `{}`).
    public enum Steering: String, Sendable {
        case cancel, pause, resume, retry
    }

    /// Steers job `id`; the job in its new state.
    public func steer(_ id: Int64, _ request: Steering) async throws(ClientError) -> JobView {
        try await call(.POST, "api/v1/jobs/\(id)/\(request.rawValue)", body: [String: String]())
    }

    /// `POST /api/v1/jobs/{id}/priority`; the job.
    public func setPriority(_ priority: Int, of id: Int64) async throws(ClientError) -> JobView {
        try await call(.POST, "api/v1/jobs/\(id)/priority", body: PriorityChange(priority: priority))
    }

    /// `GET /api/v1/workers`.
    public func workers() async throws(ClientError) -> [WorkerInfo] {
        try await (call(.GET, "api/v1/workers") as WorkerList).workers
    }

    /// Waits until job `id` is finished, through restarts of the server, and returns it (as
    /// the event that finished it tells it: ``JobView/withManifest`` false; ``job(_:)`` has the
    /// manifest's text). It follows the service's event stream, so the end is seen as soon as the server says it;
    /// while the server does not answer (or the stream ends: it stopped), it is asked again
    /// every `interval`. `progress` sees the job at each answer and each change.
    ///
    /// - Throws: ``ClientError/refused(status:message:)`` when the server answers an error (no such job).
    public func waitUntilFinished(
        _ id: Int64, every interval: Duration = pollInterval, progress: (JobView) -> Void = { _ in }
    ) async throws(ClientError) -> JobView {
        while true {
            do {
                if let view = try await followEvents(until: id, progress: progress) { return view }
            } catch {
                switch error {
                case .unreachable, .unexpectedAnswer: break  // a restart: ask again
                // A proxy in front of the restarting service (nginx: 502, 503, 504): ask again.
                case .refused(let status, _) where (502...504).contains(status): break
                case .refused, .invalidManifest: throw error
                }
            }
            try? await Task.sleep(for: interval)
        }
    }

    // MARK: Transport

    /// `method path` with `body` as JSON; the answer decoded as `Answer` when it is 2xx.
    private func call<Answer: Decodable>(
        _ method: HTTPMethod, _ path: String, query: [(String, String)] = [], body: (any Encodable)? = nil
    ) async throws(ClientError) -> Answer {
        let (status, data) = try await send(method, path, query: query, body: body.flatMap { try? APIJSON.encoder().encode($0) })
        guard (200..<300).contains(status) else {
            let problem = try? APIJSON.decoder().decode(Problem.self, from: data)
            if let diagnostics = problem?.diagnostics { throw .invalidManifest(diagnostics: diagnostics) }
            throw .refused(status: status, message: problem?.error ?? "HTTP \(status)")
        }
        do {
            return try APIJSON.decoder().decode(Answer.self, from: data)
        } catch {
            throw .unexpectedAnswer(status: status, reason: "\(error)")
        }
    }

    /// A request for `path` below ``base`` with `query` (each value percent-encoded whole: a
    /// path's `&`, `=`, `+` and `%` are its own), with the token.
    func request(_ method: HTTPMethod, _ path: String, query: [(String, String)] = []) -> HTTPClientRequest {
        let text = query.map { "\($0)=\($1.addingPercentEncoding(withAllowedCharacters: Self.unreserved) ?? $1)" }.joined(separator: "&")
        var request = HTTPClientRequest(url: base.appendingPathComponent(path).absoluteString + (text.isEmpty ? "" : "?" + text))
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        return request
    }

    /// Why a request got no answer, in words: a connection's failure as the C library says its
    /// errno ("Connection refused"), whether to an address or to a name's addresses; a timeout
    /// or a closed connection said so; anything else (a name not found) in the client's words.
    static func reason(_ error: any Error) -> String {
        if let failure = error as? IOError { return SystemCallError(call: "connect", errno: failure.errnoCode).reason }
        if let failure = error as? NIOConnectionError, let first = failure.connectionErrors.first {
            return reason(first.error)
        }
        switch error as? HTTPClientError {
        case .connectTimeout?: return "no connection within 10 s"
        case .readTimeout?: return "no answer within 60 s"
        case .deadlineExceeded?: return "no answer within \(Self.requestTimeout.nanoseconds / 1_000_000_000) s"
        case .remoteConnectionClosed?: return "the server closed the connection"
        default: return "\(error)"
        }
    }

    /// The characters a query's value keeps as they are (RFC 3986's unreserved).
    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// One request; the status and body of the answer.
    private func send(_ method: HTTPMethod, _ path: String, query: [(String, String)] = [], body: Data?) async throws(ClientError) -> (Int, Data) {
        var request = request(method, path, query: query)
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let response: HTTPClientResponse
        do {
            response = try await Self.http.execute(request, timeout: Self.requestTimeout)
        } catch {
            throw .unreachable(server: base, reason: Self.reason(error))
        }
        do {
            let answer = try await response.body.collect(upTo: Self.largestAnswer)
            return (Int(response.status.code), Data(answer.readableBytesView))
        } catch is NIOTooManyBytesError {
            // Reached, and answering: not "cannot reach" (a whole 300,000-output list was so).
            throw .unexpectedAnswer(status: Int(response.status.code), reason: "it is larger than \(Self.largestAnswer >> 20) MB, the most a client reads")
        } catch {
            throw .unreachable(server: base, reason: Self.reason(error))
        }
    }
}
