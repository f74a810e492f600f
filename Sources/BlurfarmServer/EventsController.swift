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
            guard let number = Self.eventID(text) else {
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

    /// The event id `text` names: any whole number 0 or more, in decimal digits (docs/openapi.yaml
    /// sets no maximum); one past the largest id a log can hold is taken as that largest, which is
    /// past the log's end, where the stream starts. Nil for anything else (a sign, a space, no digit).
    static func eventID(_ text: String) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return Int64(text) ?? .max
    }
}
