import BlurfarmServer
import BlurfarmTestSupport
import Foundation
import Testing

/// The token against every spelling of a path a client, a proxy or an attacker may send
/// (curl `--path-as-is`, so nothing is normalised before the server sees it): only the exact
/// public paths answer without it, and no other spelling of an operation ever reaches it.
@Suite(.timeLimit(.minutes(2)), .tags(.process)) struct PathSpellingTests {
    /// The API's operations, spelled canonically.
    static let operations: [(method: String, path: String)] = [
        ("GET", "/api/v1/jobs"), ("POST", "/api/v1/jobs"), ("GET", "/api/v1/jobs/1"), ("GET", "/api/v1/jobs/1/outputs"),
        ("POST", "/api/v1/jobs/1/cancel"), ("POST", "/api/v1/jobs/1/pause"), ("POST", "/api/v1/jobs/1/priority"),
        ("GET", "/api/v1/workers"), ("GET", "/api/v1/events"), ("GET", "/api/v1/thumbnail"), ("GET", "/metrics"),
    ]

    /// Every way of spelling `path` otherwise: doubled, dotted, encoded, trailing, cased.
    static func spellings(of path: String) -> [String] {
        let segments = path.dropFirst().split(separator: "/").map(String.init)
        var spellings = ["/" + path, path + "/", path + "//", path + "/.", "/." + path, path.uppercased(), "/%2e" + path]
        for cut in 1..<max(2, segments.count) where cut < segments.count {
            let head = "/" + segments[..<cut].joined(separator: "/"), tail = segments[cut...].joined(separator: "/")
            spellings += [
                head + "//" + tail, head + "/./" + tail, head + "/%2f" + tail, head + "%2F" + tail,
                head + "/x/../" + tail, head + "/" + tail.replacingOccurrences(of: "o", with: "%6f"),
            ]
        }
        return spellings.filter { $0 != path }
    }

    /// The status of each `method url` as curl sends it, untouched, with `headers`.
    static func statuses(_ method: String, _ urls: [String], headers: [String]) async throws -> [String] {
        var arguments = ["--path-as-is", "--max-time", "30", "-X", method, "-w", "%{http_code}\\n"] + headers
        if method == "POST" { arguments += ["-H", "Content-Type: application/json", "-d", "{}"] }
        for url in urls { arguments += ["-o", "/dev/null", url] }
        return try await RunningServer.curl(arguments).split(separator: "\n").map(String.init)
    }

    @Test func everyOtherSpellingOfAnOperationIs401WithoutTheToken() async throws {
        let server = try await RunningServer.start(try ServerFixture(), token: "s3cret")
        var refused: [String] = []
        for (method, path) in Self.operations {
            let spellings = Self.spellings(of: path)
            let statuses = try await Self.statuses(method, spellings.map { server.base + $0 }, headers: [])
            #expect(statuses.count == spellings.count)
            for (spelling, status) in zip(spellings, statuses) where status != "401" {
                refused.append("\(method) \(spelling): \(status)")
            }
        }
        let health = try await Self.statuses("GET", [server.base + "/healthz"], headers: [])
        await server.stop()
        #expect(refused.isEmpty, "answered without the token: \(refused)")
        #expect(health == ["200"])
        #expect(server.fixture.jobFarm.submitted.isEmpty)
    }

    @Test func withTheTokenOnlyTheCanonicalSpellingReachesAnOperation() async throws {
        let server = try await RunningServer.start(try ServerFixture(), token: "s3cret")
        let bearer = ["-H", "Authorization: Bearer s3cret"]
        var reached: [String] = []
        for (method, path) in Self.operations {
            let spellings = Self.spellings(of: path)
            let statuses = try await Self.statuses(method, spellings.map { server.base + $0 }, headers: bearer)
            #expect(statuses.count == spellings.count)
            for (spelling, status) in zip(spellings, statuses) where status != "404" {
                reached.append("\(method) \(spelling): \(status)")
            }
        }
        let canonical = try await Self.statuses("GET", [server.base + "/api/v1/jobs", server.base + "/metrics"], headers: bearer)
        await server.stop()
        #expect(reached.isEmpty, "not answered 404: \(reached)")
        #expect(canonical == ["200", "200"])
        #expect(server.fixture.jobFarm.submitted.isEmpty)
    }
}
