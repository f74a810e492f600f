import BlurfarmServer
import BlurfarmTestSupport
import Foundation
import Logging
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A real server (HTTP on an ephemeral loopback port) over a fixture's service.
struct RunningServer {
    let fixture: ServerFixture
    let port: Int
    let task: Task<Void, any Error>
    let token: String?

    var base: String { "http://127.0.0.1:\(port)" }

    /// Starts the server of `fixture` (with `token` when given, keep-alive comments on the
    /// event stream every `keepAlive`, its other settings as `adjust` makes them) and waits
    /// until it listens.
    static func start(
        _ fixture: ServerFixture, token: String? = nil, webFolder: String? = nil, publicHosts: [String] = [],
        keepAlive: Duration = .seconds(15), adjust: (inout ServerSettings) -> Void = { _ in }
    ) async throws
        -> RunningServer
    {
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        var settings = ServerSettings(
            host: "127.0.0.1", port: 0, token: token, webFolder: webFolder, maxBody: 64 * 1024, publicHosts: publicHosts,
            keepAlive: keepAlive)
        adjust(&settings)
        let task = Task {
            try await FarmServer.run(
                service: fixture.service, jobFarm: fixture.jobFarm, settings: settings, logger: logger, signals: []
            ) { port in continuation.yield(port) }
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw CancellationError() }
        return RunningServer(fixture: fixture, port: port, task: task, token: token)
    }

    /// Stops the server and removes the fixture's files.
    func stop() async {
        task.cancel()
        _ = await task.result
        fixture.remove()
    }

    /// An answer: status, headers, body.
    struct Answer {
        let status: Int
        let headers: [String: String]
        let body: Data

        var text: String { String(decoding: body, as: UTF8.self) }
        var object: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
    }

    /// `method path` with a JSON `body` (for POST, `{}` when nil), the server's token unless
    /// `token` says otherwise, and `headers`.
    func call(
        _ method: String, _ path: String, json body: Any? = nil, token: String?? = nil, headers: [String: String] = [:]
    ) async throws -> Answer {
        var request = URLRequest(url: URL(string: base + path)!)
        request.httpMethod = method
        if method == "POST" {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try JSONSerialization.data(withJSONObject: body ?? [String: Any]())
        }
        if let token = token ?? self.token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as! HTTPURLResponse
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            fields[String(describing: name).lowercased()] = String(describing: value)
        }
        return Answer(status: http.statusCode, headers: fields, body: data)
    }

    /// Runs curl with `arguments` (for what URLSession will not send: another Host header); its
    /// standard output.
    static func curl(_ arguments: [String]) async throws -> String {
        try await CurlOutput(arguments).end()
    }
}

/// What a curl prints, read as it arrives: an event stream, read for as long as the test wants
/// (it waits for what it expects, not for a time: the whole suite on 2 cores may take seconds
/// to answer), or an answer read to its end. curl is started and read on a thread of its own,
/// never one of the tasks' (the server answers on those), and a stream is ended by SIGKILL:
/// curl inherits that thread's signal mask, in which SIGTERM may be blocked (seen: a curl that
/// outlived its SIGTERM).
final class CurlOutput: Sendable {
    private let received = Mutex(Data())
    private let pid = Atomic<Int32>(0)
    private let ended = DispatchSemaphore(value: 0)

    /// Starts `curl -s arguments` (with `-N` for a stream).
    convenience init(_ arguments: [String]) async throws {
        try await self.init(command: ["curl", "-s"] + arguments)
    }

    /// Starts `command` (a program on the PATH and its arguments), its output read the same way.
    init(command: [String]) async throws {
        try await withCheckedThrowingContinuation { (started: CheckedContinuation<Void, any Error>) in
            Thread.detachNewThread { [self] in
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
                process.arguments = command
                let out = Pipe()
                process.standardOutput = out
                do {
                    try process.run()
                } catch {
                    started.resume(throwing: error)
                    return
                }
                pid.store(process.processIdentifier, ordering: .sequentiallyConsistent)
                started.resume()
                while case let chunk = out.fileHandleForReading.availableData, !chunk.isEmpty {
                    received.withLock { $0.append(chunk) }
                }
                ended.signal()
            }
        }
    }

    /// What arrived so far (decoded whole: a character may straddle two reads).
    var text: String { String(decoding: received.withLock { $0 }, as: UTF8.self) }

    /// Waits until what arrived satisfies `condition` (`eventually`); what arrived.
    @discardableResult
    func wait(sourceLocation: SourceLocation = #_sourceLocation, until condition: (String) -> Bool) async throws -> String {
        try await eventually("the stream's text; it has \(text)", sourceLocation: sourceLocation) { () async in condition(text) }
        return text
    }

    /// Ends the stream (the client leaves); all that arrived.
    func close() async -> String {
        kill(pid.load(ordering: .sequentiallyConsistent), SIGKILL)
        return await end()
    }

    /// Waits until curl's output ends (curl exits); all that arrived.
    func end() async -> String {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { [ended] in
                ended.wait()
                continuation.resume()
            }
        }
        return text
    }
}
