import BlurfarmCommandSupport
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

    /// The client these options name
    /// (``FarmClient/init(server:tokenFile:environment:configuredServer:configuredTokenFile:)``).
    func client() throws -> FarmClient {
        let configuration = try farm.loadOrExit()
        do throws(FarmClient.SettingsError) {
            return try FarmClient(
                server: server, tokenFile: tokenFile, environment: ProcessInfo.processInfo.environment,
                configuredServer: configuration.server, configuredTokenFile: configuration.tokenFile)
        } catch {
            if case .notAURL = error { throw ValidationError(error.description) }
            throw CommandError(error.description, exitCode: ExitStatus.invalid)
        }
    }
}

extension FarmClient {
    /// Waits until job `id` is finished (``waitUntilFinished(_:every:progress:)``), drawing the
    /// progress line on a terminal, cleared however it ends; the job.
    func waitDrawingProgress(_ id: Int64) async throws -> JobView {
        let drawing = RunPrinter.isTerminal
        defer { if drawing { RunPrinter.clearProgress() } }
        return try await waitUntilFinished(id) { view in
            guard drawing else { return }
            RunPrinter.drawProgress(JobProgress.line(
                job: view.job.name, images: nil, outputs: view.progress.outputsDone, of: view.progress.outputsTotal,
                tiles: view.progress.tilesDone, megapixelsPerSecond: view.progress.megapixelsPerSecond ?? 0,
                secondsLeft: view.progress.etaSeconds ?? 0, failed: view.job.outputsFailed))
        }
    }
}

extension JobView.Ending {
    /// The exit status `run` has for a job that ended so (docs/commands.md).
    var exitStatus: Int32 {
        switch self {
        case .completed: ExitStatus.success
        case .failed: ExitStatus.someFailed
        case .locked: ExitStatus.locked
        case .invalid: ExitStatus.invalid
        }
    }
}
