import BlurfarmCore
import BlurfarmSystem
import Foundation
import HTTPTypes
import Hummingbird

/// The server's rules for every request (docs/serve.md, "Security"): the Host must name the
/// server (no DNS rebinding); with a token, every API and metrics request carries it
/// (`Authorization: Bearer`, compared in constant time): 401 without it, 403 with another;
/// a state-changing request needs a JSON body and, from a browser, a same-origin page
/// (`Origin`, `Sec-Fetch-Site`). No CORS headers are ever sent. Errors are answered as JSON.
struct GuardMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext

    let settings: ServerSettings
    /// The port the server listens on (known once it runs: port 0 picks one).
    let port: @Sendable () -> Int

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        if let refusal = refusal(of: request) { return refusal }
        do {
            return try await next(request, context)
        } catch let error as HTTPError {
            return Routes.problem(error.status, error.body ?? error.status.reasonPhrase)
        }
    }

    /// The answer refusing `request`, or nil when it may go on.
    ///
    /// Every path needs the token but the few public ones, compared as sent, byte for byte
    /// (``publicPaths``): `//api/v1/jobs`, `/metrics/`, `/./healthz` or `/API/v1/jobs` is not
    /// public, so it is refused without the token whatever the router would make of it. With
    /// the token, a path that is not exactly one of the API's (``methods(of:)``: no empty, `.`,
    /// `..` or percent-encoded segment, no trailing slash) is answered 404 before the router sees
    /// it, so no two spellings ever reach one operation.
    func refusal(of request: Request) -> Response? {
        let port = port()
        guard let authority = request.head.authority?.lowercased(), settings.listensEverywhere || allowedHosts(port: port).contains(authority)
        else {
            return Routes.problem(.misdirectedRequest, "the Host header does not name this server")
        }
        let path = request.uri.path
        if let token = settings.token, !Self.publicPaths.contains(path) {
            // The scheme's name is case-insensitive (RFC 9110 11.1); credentials that are not a
            // bearer token are none (401), a bearer token not this server's is refused (403).
            let prefix = "bearer "
            guard let header = request.headers[.authorization], header.lowercased().hasPrefix(prefix),
                header.count > prefix.count
            else {
                var answer = Routes.problem(.unauthorized, "this server needs a token: Authorization: Bearer <token>")
                answer.headers[.wwwAuthenticate] = "Bearer"
                return answer
            }
            guard TokenCheck.matches(header.dropFirst(prefix.count), token) else {
                return Routes.problem(.forbidden, "the token is not this server's")
            }
        }
        guard let allowed = Self.methods(of: path) else {
            return Routes.problem(.notFound, "no operation at \(ShownName.of(path)) (docs/api.md)")
        }
        if !allowed.contains(request.method) {
            var answer = Routes.problem(.methodNotAllowed, "\(request.method) is not an operation of \(path)")
            answer.headers[.allow] = allowed.map(\.rawValue).joined(separator: ", ")
            return answer
        }
        if request.method != .get && request.method != .head {
            if let site = request.headers[HTTPField.Name("Sec-Fetch-Site")!], site != "same-origin", site != "none" {
                return Routes.problem(.forbidden, "a request from another site cannot change the farm")
            }
            // The page's origin: a name of this server, or (listening everywhere) the Host asked.
            let origins = settings.listensEverywhere ? [authority] : allowedHosts(port: port)
            if let origin = request.headers[.origin],
                !origins.contains(where: { origin.lowercased() == "http://\($0)" || origin.lowercased() == "https://\($0)" })
            {
                return Routes.problem(.forbidden, "a request from another origin cannot change the farm")
            }
            let type = request.headers[.contentType]?.lowercased() ?? ""
            guard type.hasPrefix("application/json") else {
                return Routes.problem(.unsupportedMediaType, "the body must be JSON (Content-Type: application/json)")
            }
        }
        return nil
    }

    /// The paths answered without the token, exactly as sent: the health check and the status
    /// page's files (the page itself asks for the token before it calls the API).
    static let publicPaths: Set<String> = ["/healthz", "/", "/app.js", "/style.css"]

    /// The methods the operations at `path` take (docs/openapi.yaml); nil for a path that is
    /// none of them, or not in its one canonical spelling (404).
    static func methods(of path: String) -> [HTTPRequest.Method]? {
        if path == "/" { return [.get, .head] }
        guard path.hasPrefix("/") else { return nil }
        let parts = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let read: [HTTPRequest.Method] = [.get, .head]
        let isID = { (part: String) in !part.isEmpty && part.utf8.count <= 18 && part.utf8.allSatisfy { (48...57).contains($0) } }
        switch parts.count {
        case 1: return ["healthz", "metrics", "app.js", "style.css"].contains(parts[0]) ? read : nil
        case 3 where parts[0] == "api" && parts[1] == "v1":
            if parts[2] == "jobs" { return read + [.post] }
            return ["workers", "thumbnail", "events"].contains(parts[2]) ? read : nil
        case 4 where parts[0] == "api" && parts[1] == "v1" && parts[2] == "jobs" && isID(parts[3]): return read
        case 5 where parts[0] == "api" && parts[1] == "v1" && parts[2] == "jobs" && isID(parts[3]):
            if parts[4] == "outputs" { return read }
            return ["cancel", "pause", "resume", "retry", "priority"].contains(parts[4]) ? [.post] : nil
        default: return nil
        }
    }

    /// The Host headers that name this server: its address and port, the loopback names
    /// when it listens on a loopback address, and its public names (`--public-url`, also with
    /// the port of http or https written out). Listening everywhere, every Host is taken
    /// (``ServerSettings/listensEverywhere``: the token is required there).
    func allowedHosts(port: Int) -> Set<String> {
        var hosts: Set<String> = [settings.host.contains(":") ? "[\(settings.host)]:\(port)" : "\(settings.host):\(port)"]
        if ServerSettings.isLoopback(settings.host) {
            hosts.formUnion(["localhost:\(port)", "127.0.0.1:\(port)", "[::1]:\(port)"])
        }
        for name in settings.publicHosts {
            hosts.insert(name)
            if !name.contains(":") || name.hasSuffix("]") { hosts.formUnion(["\(name):80", "\(name):443"]) }
        }
        return hosts
    }
}
