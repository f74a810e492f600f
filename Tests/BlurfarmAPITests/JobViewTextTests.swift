import BlurfarmAPI
import BlurfarmClient
import Foundation
import Testing

/// A job as `blurfarm jobs`, `job` and `submit --wait` print it (BlurfarmClient's `JobView+Text`).
@Suite struct JobViewTextTests {
    static func view(state: JobState, written: Int, failed: Int, name: String = "web\nphotos") -> JobView {
        JobView(QueueJob(
            id: 42, name: name, manifest: "/srv/web.job", source: .path, manifestText: "", priority: 7, state: state,
            inFarm: false, retryFailed: false, submittedAt: Date(), startedAt: nil, finishedAt: nil, outputsTotal: 10,
            outputsUpToDate: 2, outputsWritten: written, outputsFailed: failed, outputsCancelled: 0, tilesDone: 0,
            tilesTotal: 0, pixelsWritten: 0, error: nil, refusal: nil))
    }

    @Test func theLineIsIdStatePriorityOutputsAndTheNameEscaped() {
        #expect(Self.view(state: .active, written: 3, failed: 0).line == "   42  active       7  5/10           web\\nphotos")
        #expect(Self.view(state: .failed, written: 3, failed: 1).line == "   42  failed       7  6/10 (1 failed) web\\nphotos")
    }

    @Test func theSummaryCountsWrittenUpToDateAndFailed() {
        #expect(Self.view(state: .completed, written: 8, failed: 0, name: "web").summary
            == "web: completed: 8 written, 2 up to date, 0 failed")
    }

    @Test func onlyAFailedOutputHasAFailureLine() {
        func output(_ state: JobOutputState) -> QueueOutput {
            QueueOutput(
                jobId: 42, output: "out/a.jpg", state: state, tilesDone: 0, tiles: 0, pixels: 0, seconds: nil, retries: 0,
                checksum: nil, errorKind: "decode", error: "corrupt", startedAt: nil, finishedAt: nil)
        }
        #expect(output(.failed).failureLine == "  failed  out/a.jpg: corrupt")
        #expect(output(.written).failureLine == nil)
    }
}

/// How a finished job ended (``JobView/Ending``) and the client its settings name.
@Suite struct JobEndingAndClientSettingsTests {
    @Test func aRefusalOutranksFailedOutputs() {
        #expect(JobViewTextTests.view(state: .completed, written: 1, failed: 0).ending == .completed)
        #expect(JobViewTextTests.view(state: .failed, written: 1, failed: 1).ending == .failed)
        #expect([JobView.Ending.failed, .invalid, .locked].max() == .invalid)
        #expect(JobView.Ending.locked > .failed)
    }

    @Test func theServerIsTheOptionThenTheEnvironmentThenTheConfiguration() throws {
        let environment = ["BLURFARM_SERVER": "http://env:1"]
        #expect(try FarmClient(server: nil, tokenFile: nil, environment: environment, configuredServer: "http://c:2", configuredTokenFile: nil).base.absoluteString == "http://env:1")
        #expect(try FarmClient(server: nil, tokenFile: nil, environment: [:], configuredServer: "http://c:2", configuredTokenFile: nil).base.absoluteString == "http://c:2")
        #expect(try FarmClient(server: nil, tokenFile: nil, environment: ["BLURFARM_SERVER": ""], configuredServer: nil, configuredTokenFile: nil).base.absoluteString == FarmClient.defaultServer)
        #expect(throws: FarmClient.SettingsError.self) {
            try FarmClient(server: "ftp://x", tokenFile: nil, environment: [:], configuredServer: nil, configuredTokenFile: nil)
        }
        #expect(throws: FarmClient.SettingsError.self) {
            try FarmClient(server: nil, tokenFile: "/nonexistent/token", environment: [:], configuredServer: nil, configuredTokenFile: nil)
        }
    }
}
