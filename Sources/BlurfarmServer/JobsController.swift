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
        let (states, limit): ([JobState]?, Int?)
        do throws(BadQuery) {
            states = try Self.list(query.get("state"), of: "state", JobState.init(rawValue:))
            limit = try Self.limit(query.get("limit"), most: 1_000_000)
        } catch {
            return Routes.problem(.badRequest, error.message)
        }
        return try await Routes.answer { () throws(ServiceError) in
            // Without their manifests' text (up to 1 MiB each): the job's own answer has it.
            JobList(jobs: try await service.jobs(states: states, limit: limit).map { JobView($0, withManifest: false) })
        }
    }

    /// A query's parameter that does not read: answered 400 with `message`.
    struct BadQuery: Error {
        let message: String
    }

    /// The values of a comma-separated list `text` (a query's parameter), each made by `make`;
    /// nil without one.
    /// - Throws: ``BadQuery`` naming the first that `make` does not take as an unknown `what`.
    static func list<Value>(_ text: String?, of what: String, _ make: (String) -> Value?) throws(BadQuery) -> [Value]? {
        guard let text else { return nil }
        var values: [Value] = []
        for word in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard let value = make(String(word)) else { throw BadQuery(message: "unknown \(what) '\(ShownName.of(String(word)))'") }
            values.append(value)
        }
        return values
    }

    /// The `limit` parameter's number `text`, from 1 to `most`; nil without one.
    /// - Throws: ``BadQuery`` when it is not such a number.
    static func limit(_ text: String?, most: Int) throws(BadQuery) -> Int? {
        guard let text else { return nil }
        guard let number = Int(text), (1...most).contains(number) else { throw BadQuery(message: "limit must be a number from 1 to \(most)") }
        return number
    }

    @Sendable func show(_ request: Request, context: BasicRequestContext) async throws -> Response {
        let id = try Routes.jobID(context)
        return try await Routes.answer { () throws(ServiceError) in JobView(try await service.job(id)) }
    }

    /// The outputs a page gives unless `limit` says otherwise, and the most it may say: a
    /// million-output job's list is 250 MB of JSON, and a page of the default about 2.5 MB.
    static let (outputsPage, mostOutputsPage) = (10_000, 100_000)

    @Sendable func outputs(_ request: Request, context: BasicRequestContext) async throws -> Response {
        let id = try Routes.jobID(context)
        let query = request.uri.queryParameters
        let (states, limit): ([JobOutputState]?, Int?)
        do throws(BadQuery) {
            states = try Self.list(query.get("state"), of: "output state", JobOutputState.init(rawValue:))
            limit = try Self.limit(query.get("limit"), most: Self.mostOutputsPage)
        } catch {
            return Routes.problem(.badRequest, error.message)
        }
        let after = query.get("after")
        return try await Routes.answer { () throws(ServiceError) in
            try await service.outputs(of: id, states: states, after: after, limit: limit ?? Self.outputsPage)
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
