import ArgumentParser
import BlurfarmAPI
import BlurfarmClient
import BlurfarmCore
import BlurfarmSystem
import Foundation
import Synchronization

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

/// Runs `operation` on a task and waits for it: the client commands are synchronous, as the
/// root command is, and the client is async. A failure runs `beforeFailing`, then is said
/// (``CommandFailure``) and thrown as its exit status.
func blocking<Value: Sendable>(
    _ operation: @escaping @Sendable () async throws -> Value, beforeFailing: () -> Void = {}
) throws -> Value {
    let result = Mutex<Result<Value, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        do {
            let value = try await operation()
            result.withLock { $0 = .success(value) }
        } catch {
            result.withLock { $0 = .failure(error) }
        }
        done.signal()
    }
    done.wait()
    do {
        return try result.withLock { $0! }.get()
    } catch {
        beforeFailing()
        throw error
    }
}

extension FarmClient {
    /// Waits until job `id` is finished (``waitUntilFinished(_:every:progress:)``), drawing the
    /// progress line on a terminal; the job.
    func waitDrawingProgress(_ id: Int64) throws -> JobView {
        let line = ProgressLine.isTerminal ? ProgressLine(job: "job \(id)", outputsTotal: 0, inputsTotal: 0) : nil
        let view = try blocking(
            {
                try await waitUntilFinished(id) { view in
                    line?.show(
                        job: view.job.name, outputs: view.progress.outputsDone, of: view.progress.outputsTotal,
                        tiles: view.progress.tilesDone, megapixelsPerSecond: view.progress.megapixelsPerSecond ?? 0,
                        secondsLeft: view.progress.etaSeconds ?? 0, failed: view.job.outputsFailed)
                }
            }, beforeFailing: { line?.clear() })
        line?.clear()
        return view
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

    /// One line for the job: id, state, priority, outputs done of all, name.
    var line: String {
        func padded(_ text: String, _ width: Int, left: Bool = false) -> String {
            let fill = String(repeating: " ", count: max(0, width - text.count))
            return left ? fill + text : text + fill
        }
        let failed = job.outputsFailed
        let counts = "\(progress.outputsDone)/\(progress.outputsTotal)" + (failed > 0 ? " (\(failed) failed)" : "")
        return padded("\(job.id ?? 0)", 5, left: true) + "  " + padded(job.state.rawValue, 10) + " "
            + padded("\(job.priority)", 3, left: true) + "  " + padded(counts, 14) + " " + ShownName.of(job.name)
    }
}
