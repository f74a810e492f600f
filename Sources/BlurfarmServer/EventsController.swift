import HTTPTypes
import Hummingbird
import NIOCore

/// `/api/v1/events`: the event stream (``EventStream``), from the start or after an event id.
struct EventsController {
    let service: FarmService
    let settings: ServerSettings

    var endpoints: RouteCollection<BasicRequestContext> {
        let routes = RouteCollection(context: BasicRequestContext.self)
        routes.get(use: stream)
        return routes
    }

    @Sendable func stream(_ request: Request, context: BasicRequestContext) async throws -> Response {
        var after: Int64?
        for (name, text) in [
            ("Last-Event-ID", request.headers[HTTPField.Name("Last-Event-ID")!]),
            ("after", request.uri.queryParameters.get("after")),
        ] {
            guard let text else { continue }
            guard let number = Int64(text), number >= 0 else {
                return Routes.problem(.badRequest, "\(name) must be an event id, a whole number 0 or more")
            }
            after = after ?? number
        }
        // Opened as the request is taken.
        let stream = EventStream(service: service, after: after, keepAlive: settings.keepAlive)
        let body = ResponseBody { writer in
            try await stream.send { try await writer.write(ByteBuffer(string: $0)) }
            try await writer.finish(nil)
        }
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-store", HTTPField.Name("X-Accel-Buffering")!: "no"],
            body: body)
    }
}
