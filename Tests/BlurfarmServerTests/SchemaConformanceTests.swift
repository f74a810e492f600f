import BlurfarmTestSupport
import Foundation
import Testing

/// docs/openapi.yaml against the running server, checked by schemathesis (PyPI; installed by
/// scripts/setup.sh): every operation but the endless event stream, positive and negative
/// requests, every check, and stateful sequences along the document's `links` (a job
/// submitted or read, then steered by its id). No 5xx, no answer outside the schema.
@Suite(.tags(.process)) struct SchemaConformanceTests {
    static let schema = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/openapi.yaml").path

    @Test func schemathesisFindsNoServerErrorAndNoAnswerOutsideTheSchema() async throws {
        let fixture = try ServerFixture()
        let server = try await RunningServer.start(fixture)
        // A job in each of a few states, for the operations on one job to find.
        for _ in 0..<3 {
            _ = try await server.call("POST", "/api/v1/jobs", json: ["manifest": ServerFixture.manifest, "folder": fixture.root])
        }
        _ = try await server.call("POST", "/api/v1/jobs/3/pause")
        // Every check; the response time's limit (10 s with `--checks all`) is the request
        // timeout's, 60 s, which only a hang reaches: on a loaded machine an answer of
        // milliseconds once took 12 s, and a test asserts no timing.
        let (status, output) = try await Self.schemathesis(in: fixture.folder, [
            "run", Self.schema, "--url", server.base, "--checks", "all", "--max-response-time", "60",
            "--exclude-path", "/api/v1/events",
            "--max-examples", "25", "--seed", "1", "--generation-database", "none", "--workers", "1", "--no-color",
            "--request-timeout", "60", "--phases", "examples,coverage,fuzzing,stateful",
        ])
        await server.stop()
        #expect(status == 0, "\(output)")
    }

    /// Runs schemathesis with `arguments` in `folder` (where it leaves its files) on a thread
    /// of its own; its status and output.
    static func schemathesis(in folder: URL, _ arguments: [String]) async throws -> (Int32, String) {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
                process.arguments = ["python3", "-m", "schemathesis.cli"] + arguments
                process.currentDirectoryURL = folder
                let out = Pipe()
                process.standardOutput = out
                process.standardError = out
                do {
                    try process.run()
                } catch {
                    continuation.resume(throwing: error)
                    return
                }
                let data = out.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                continuation.resume(returning: (process.terminationStatus, String(decoding: data, as: UTF8.self)))
            }
        }
    }
}
