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
    /// The router of the server for `service`: the guard, the probes, and one controller per
    /// resource (as Hummingbird's examples): ``JobsController``, ``EventsController``,
    /// ``WorkersController`` under `/api/v1`, and ``PageController`` (the status page).
    public static func router(
        service: FarmService, settings: ServerSettings, connections: ConnectionLimits, port: @escaping @Sendable () -> Int
    ) -> Router<BasicRequestContext> {
        // HEAD answers as GET without the body (GuardMiddleware allows it on every GET path):
        // a monitor's HEAD /healthz sees 200.
        let router = Router(options: .autoGenerateHeadEndpoints)
        router.add(middleware: GuardMiddleware(settings: settings, port: port))
        router.get("/healthz") { _, _ in Self.json(["status": "ok"]) }
        router.get("/metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: await Metrics.text(service, connections: connections))))
        }
        router.addRoutes(JobsController(service: service, settings: settings).endpoints, atPath: "/api/v1/jobs")
        router.addRoutes(EventsController(service: service, settings: settings).endpoints, atPath: "/api/v1/events")
        router.addRoutes(WorkersController(service: service).endpoints, atPath: "/api/v1/workers")
        router.addRoutes(PageController(service: service, settings: settings).endpoints)
        return router
    }

    // MARK: Bodies and answers

    static func jobID(_ context: BasicRequestContext) throws -> Int64 {
        guard let id = context.parameters.get("id", as: Int64.self), id > 0 else {
            throw HTTPError(.notFound, message: "a job id is a positive number")
        }
        return id
    }

    /// The request's JSON body as `T` (at most `settings.maxBody` bytes).
    static func body<T: Decodable>(_ type: T.Type, request: inout Request, settings: ServerSettings)
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
        // A key given twice (the decoder keeps the first, most clients' readers the last), or
        // text other readers refuse, as a region file is refused.
        if let problem = StrictJSON.problem(in: Array(buffer.readableBytesView)) {
            throw HTTPError(.badRequest, message: "the body is not the JSON expected: \(problem.path): \(problem.message)")
        }
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            throw HTTPError(.badRequest, message: "the body is not the JSON expected: \(Self.reason(error))")
        }
    }

    /// Where and why a body did not decode, in words (not Swift's description of the error).
    static func reason(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "it cannot be read" }
        let (keys, message): ([any CodingKey], String) =
            switch error {
            case .keyNotFound(let key, let context): (context.codingPath + [key], "is missing")
            case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
                (context.codingPath, context.debugDescription)
            @unknown default: ([], "it cannot be read")
            }
        return "\(JSONPath.of(keys)): \(message)"
    }

    /// `body`'s value as JSON with `status`, or its error as the error's status.
    static func answer<T: Encodable & Sendable>(
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
