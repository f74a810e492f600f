import ArgumentParser
import BlurfarmAPI
import BlurfarmClient
import BlurfarmFarm
import Foundation

/// The options of the client commands (`submit`, `jobs`, `job`, `cancel`, `retry`): which
/// farm service, and its token.
struct ServerOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "The farm service (default: $BLURFARM_SERVER, else the configuration's server, else http://127.0.0.1:8765).",
        valueName: "url"))
    var server: String?

    @Option(help: ArgumentHelp(
        "A file holding the service's token (default: $BLURFARM_TOKEN_FILE, else the configuration's token-file).",
        valueName: "file"))
    var tokenFile: String?

    @OptionGroup var farm: FarmOptions

    /// The client these options name.
    func client() throws -> FarmClient {
        let environment = ProcessInfo.processInfo.environment
        let configuration = try farm.loadOrExit()
        let server = self.server ?? environment["BLURFARM_SERVER"].flatMap { $0.isEmpty ? nil : $0 }
            ?? configuration.server ?? "http://127.0.0.1:8765"
        guard let base = URL(string: server), base.scheme == "http" || base.scheme == "https", base.host != nil else {
            throw ValidationError("the server must be a URL such as http://127.0.0.1:8765, not '\(server)'")
        }
        var token: String?
        if let file = tokenFile ?? environment["BLURFARM_TOKEN_FILE"].flatMap({ $0.isEmpty ? nil : $0 })
            ?? configuration.tokenFile
        {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw CommandError("token file '\(file)': cannot be read", exitCode: ExitStatus.invalid)
            }
            token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        return FarmClient(base: base, token: token)
    }
}

extension FarmClient {
    /// Waits until job `id` is finished (``waitUntilFinished(_:every:progress:)``), drawing the
    /// progress line on a terminal, cleared however it ends; the job.
    func waitDrawingProgress(_ id: Int64) async throws -> JobView {
        let drawing = ProgressLine.isTerminal
        defer { if drawing { ProgressLine.clear() } }
        return try await waitUntilFinished(id) { view in
            guard drawing else { return }
            ProgressLine.draw(JobProgress.line(
                job: view.job.name, images: nil, outputs: view.progress.outputsDone, of: view.progress.outputsTotal,
                tiles: view.progress.tilesDone, megapixelsPerSecond: view.progress.megapixelsPerSecond ?? 0,
                secondsLeft: view.progress.etaSeconds ?? 0, failed: view.job.outputsFailed))
        }
    }
}

extension JobView {
    /// The exit status `run` would have for a job that ended as this one: 0 completed; 3
    /// another process (a cron `run`) held its lock, 2 its manifest no longer checked (nothing
    /// of it ran); else 1 (some outputs failed, or it was cancelled).
    var exitStatus: Int32 {
        if job.state == .completed { return ExitStatus.success }
        switch job.refusal {
        case .locked: return ExitStatus.locked
        case .invalid: return ExitStatus.invalid
        case nil: return ExitStatus.someFailed
        }
    }

    /// The exit status of `run` for jobs ending with `statuses`: an invalid manifest (2) before
    /// a lock held (3) before failed outputs (1), as `run` checks every manifest, then takes
    /// every lock, then renders.
    static func combined(_ statuses: [Int32]) -> Int32 {
        [ExitStatus.invalid, ExitStatus.locked, ExitStatus.someFailed].first(where: statuses.contains)
            ?? ExitStatus.success
    }
}
