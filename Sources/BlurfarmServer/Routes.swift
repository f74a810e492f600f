import BlurfarmSystem
import BlurfarmAPI
import BlurfarmCore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The HTTP API under `/api/v1`, `/metrics`, `/healthz` and the web page (docs/api.md,
/// docs/openapi.yaml).
public enum Routes {
    /// The router of the server for `service`.
    public static func router(
        service: FarmService, settings: ServerSettings, connections: ConnectionLimits, port: @escaping @Sendable () -> Int
    ) -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: GuardMiddleware(settings: settings, port: port))
        router.get("/healthz") { _, _ in Self.json(["status": "ok"]) }
        router.get("/metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: await Metrics.text(service, connections: connections))))
        }
        let api = router.group("api/v1")
        api.post("jobs") { request, context in
            var request = request
            let submit = try await body(SubmitRequest.self, request: &request, settings: settings)
            return try await answer(status: .created) { () throws(ServiceError) in
                JobView(try await service.submit(submit))
            }
        }
        api.get("jobs") { request, _ in
            let query = request.uri.queryParameters
            var states: [JobState]?
            if let text = query.get("state") {
                var parsed: [JobState] = []
                for word in text.split(separator: ",", omittingEmptySubsequences: false) {
                    guard let state = JobState(rawValue: String(word)) else {
                        return problem(.badRequest, "unknown state '\(ShownName.of(String(word)))'")
                    }
                    parsed.append(state)
                }
                states = parsed
            }
            var limit: Int?
            if let text = query.get("limit") {
                guard let number = Int(text), (1...1_000_000).contains(number) else {
                    return problem(.badRequest, "limit must be a number from 1 to 1000000")
                }
                limit = number
            }
            return try await answer { () throws(ServiceError) in
                JobList(jobs: try await service.jobs(states: states, limit: limit).map { JobView($0) })
            }
        }
        api.get("jobs/:id") { _, context in
            let id = try jobID(context)
            return try await answer { () throws(ServiceError) in JobView(try await service.job(id)) }
        }
        api.get("jobs/:id/outputs") { _, context in
            let id = try jobID(context)
            return try await answer { () throws(ServiceError) in
                OutputList(outputs: try await service.outputs(of: id))
            }
        }
        for (verb, event) in [
            ("cancel", JobEvent.cancelRequested), ("pause", .pauseRequested), ("resume", .resumeRequested),
            ("retry", .retryRequested),
        ] {
            api.post("jobs/:id/\(verb)") { request, context in
                var request = request
                let id = try jobID(context)
                _ = try await body(Empty.self, request: &request, settings: settings)
                return try await answer { () throws(ServiceError) in
                    JobView(try await service.request(event, job: id))
                }
            }
        }
        api.post("jobs/:id/priority") { request, context in
            var request = request
            let id = try jobID(context)
            let change = try await body(PriorityChange.self, request: &request, settings: settings)
            return try await answer { () throws(ServiceError) in
                JobView(try await service.setPriority(change.priority, job: id))
            }
        }
        api.get("workers") { _, _ in json(WorkerList(workers: service.workers())) }
        api.get("events") { request, _ in
            var after: Int64?
            for (name, text) in [
                ("Last-Event-ID", request.headers[HTTPField.Name("Last-Event-ID")!]),
                ("after", request.uri.queryParameters.get("after")),
            ] {
                guard let text else { continue }
                guard let number = Int64(text), number >= 0 else {
                    return problem(.badRequest, "\(name) must be an event id, a whole number 0 or more")
                }
                after = after ?? number
            }
            return events(service, after: after, keepAlive: settings.keepAlive)
        }
        let thumbnails = ThumbnailCache()
        api.get("thumbnail") { _, _ in
            guard let output = await service.lastWritten else { return problem(.notFound, "no output written yet") }
            // Read beneath the roots as the file is now: an output replaced by a link out of
            // them is not shown.
            let file: Int32
            do throws(RootedFileError) {
                file = try service.roots.openFile(output)
            } catch {
                return problem(.notFound, "the last output cannot be shown: \(error)")
            }
            defer { Syscalls.close(file) }
            guard let data = thumbnails.jpeg(of: output, reading: "/proc/self/fd/\(file)") else {
                return problem(.notFound, "the last output cannot be read as an image")
            }
            return Response(
                status: .ok, headers: [.contentType: "image/jpeg", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(bytes: data)))
        }
        if let folder = settings.webFolder {
            for (path, file, type) in [
                ("/", "index.html", "text/html; charset=utf-8"), ("/app.js", "app.js", "text/javascript; charset=utf-8"),
                ("/style.css", "style.css", "text/css; charset=utf-8"),
            ] {
                router.get(RouterPath(path)) { _, _ in
                    guard let data = FileManager.default.contents(atPath: folder + "/" + file) else {
                        return problem(.notFound, "the web page's file '\(file)' is missing from \(folder)")
                    }
                    return Response(
                        status: .ok, headers: [.contentType: type, .cacheControl: "no-cache"],
                        body: .init(byteBuffer: ByteBuffer(bytes: data)))
                }
            }
        }
        return router
    }

    /// The event stream (``EventStream``), opened as the request is taken.
    static func events(_ service: FarmService, after: Int64?, keepAlive: Duration) -> Response {
        let stream = EventStream(service: service, after: after, keepAlive: keepAlive)
        let body = ResponseBody { writer in
            try await stream.send { try await writer.write(ByteBuffer(string: $0)) }
            try await writer.finish(nil)
        }
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-store", HTTPField.Name("X-Accel-Buffering")!: "no"],
            body: body)
    }

    // MARK: Bodies and answers

    private static func jobID(_ context: BasicRequestContext) throws -> Int64 {
        guard let id = context.parameters.get("id", as: Int64.self), id > 0 else {
            throw HTTPError(.notFound, message: "a job id is a positive number")
        }
        return id
    }

    /// The request's JSON body as `T` (at most `settings.maxBody` bytes).
    private static func body<T: Decodable>(_ type: T.Type, request: inout Request, settings: ServerSettings)
        async throws -> T
    {
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: settings.maxBody)
        } catch {
            throw HTTPError(.contentTooLarge, message: "the request body is over \(settings.maxBody) bytes")
        }
        let data = Data(buffer.readableBytesView)
        guard (try? JSONSerialization.jsonObject(with: data)) is [String: Any] else {
            throw HTTPError(.badRequest, message: "the body must be a JSON object")
        }
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            throw HTTPError(.badRequest, message: "the body is not the JSON expected: \(error)")
        }
    }

    /// `body`'s value as JSON with `status`, or its error as the error's status.
    private static func answer<T: Encodable & Sendable>(
        status: HTTPResponse.Status = .ok, _ body: () async throws(ServiceError) -> T
    ) async throws -> Response {
        do {
            return json(try await body(), status: status)
        } catch {
            switch error {
            case .notFound: return problem(.notFound, error.description)
            case .refused: return problem(.conflict, error.description)
            case .invalidManifest(let diagnostics):
                return json(
                    Problem(
                        error: "the manifest is invalid",
                        diagnostics: DiagnosticPrinter.render(diagnostics, program: "blurfarm")),
                    status: .unprocessableContent)
            case .outsideRoots: return problem(.forbidden, error.description)
            case .badRequest: return problem(.badRequest, error.description)
            case .store: return problem(.internalServerError, error.description)
            case .stopping: return problem(.serviceUnavailable, error.description)
            }
        }
    }

    /// `value` as JSON.
    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: FarmService.json(value))))
    }

    /// An error answer: `{"error": message}`.
    static func problem(_ status: HTTPResponse.Status, _ message: String) -> Response {
        json(Problem(error: message, diagnostics: nil), status: status)
    }
}

/// The body of the steering requests: `{}`.
struct Empty: Decodable, Sendable {}
