import BlurfarmAPI
import BlurfarmSystem
import Hummingbird

/// `/api/v1/jobs`: submitting, listing, showing and steering jobs (docs/api.md).
struct JobsController {
    let service: FarmService
    let settings: ServerSettings

    var endpoints: RouteCollection<BasicRequestContext> {
        let routes = RouteCollection(context: BasicRequestContext.self)
        routes.post(use: submit)
        routes.get(use: list)
        routes.get(":id", use: show)
        routes.get(":id/outputs", use: outputs)
        for (verb, event) in [
            ("cancel", JobEvent.cancelRequested), ("pause", .pauseRequested), ("resume", .resumeRequested),
            ("retry", .retryRequested),
        ] {
            routes.post(RouterPath(":id/\(verb)")) { request, context in try await steer(event, request, context) }
        }
        routes.post(":id/priority", use: priority)
        return routes
    }

    @Sendable func submit(_ request: Request, context: BasicRequestContext) async throws -> Response {
        var request = request
        let submit = try await Routes.body(SubmitRequest.self, request: &request, settings: settings)
        return try await Routes.answer(status: .created) { () throws(ServiceError) in
            JobView(try await service.submit(submit))
        }
    }

    @Sendable func list(_ request: Request, context: BasicRequestContext) async throws -> Response {
        let query = request.uri.queryParameters
        var states: [JobState]?
        if let text = query.get("state") {
            var parsed: [JobState] = []
            for word in text.split(separator: ",", omittingEmptySubsequences: false) {
                guard let state = JobState(rawValue: String(word)) else {
                    return Routes.problem(.badRequest, "unknown state '\(ShownName.of(String(word)))'")
                }
                parsed.append(state)
            }
            states = parsed
        }
        var limit: Int?
        if let text = query.get("limit") {
            guard let number = Int(text), (1...1_000_000).contains(number) else {
                return Routes.problem(.badRequest, "limit must be a number from 1 to 1000000")
            }
            limit = number
        }
        return try await Routes.answer { () throws(ServiceError) in
            // Without their manifests' text (up to 1 MiB each): the job's own answer has it.
            JobList(jobs: try await service.jobs(states: states, limit: limit).map { JobView($0, withManifest: false) })
        }
    }

    @Sendable func show(_ request: Request, context: BasicRequestContext) async throws -> Response {
        let id = try Routes.jobID(context)
        return try await Routes.answer { () throws(ServiceError) in JobView(try await service.job(id)) }
    }

    @Sendable func outputs(_ request: Request, context: BasicRequestContext) async throws -> Response {
        let id = try Routes.jobID(context)
        return try await Routes.answer { () throws(ServiceError) in
            OutputList(outputs: try await service.outputs(of: id))
        }
    }

    /// Cancel, pause, resume or retry: the request `event` of the job's state machine.
    func steer(_ event: JobEvent, _ request: Request, _ context: BasicRequestContext) async throws -> Response {
        var request = request
        let id = try Routes.jobID(context)
        _ = try await Routes.body(Empty.self, request: &request, settings: settings)
        return try await Routes.answer { () throws(ServiceError) in
            JobView(try await service.request(event, job: id))
        }
    }

    @Sendable func priority(_ request: Request, context: BasicRequestContext) async throws -> Response {
        var request = request
        let id = try Routes.jobID(context)
        let change = try await Routes.body(PriorityChange.self, request: &request, settings: settings)
        return try await Routes.answer { () throws(ServiceError) in
            JobView(try await service.setPriority(change.priority, job: id))
        }
    }
}

/// The body of the steering requests: `{}`.
struct Empty: Decodable, Sendable {}
