import ArgumentParser
import BlurfarmCore
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

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
    func client() throws -> ServerClient {
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
                printError("token file '\(file)': cannot be read")
                throw ExitCode(ExitStatus.invalid)
            }
            token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        return ServerClient(base: base, token: token)
    }
}

/// A blocking client of the farm service's API (docs/api.md).
struct ServerClient {
    let base: URL
    let token: String?

    /// What the server answered.
    struct Answer {
        let status: Int
        let body: Data

        var object: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
        /// The server's error message.
        var error: String { object["error"] as? String ?? "HTTP \(status)" }
    }

    /// The server cannot be reached.
    struct Unreachable: Error, CustomStringConvertible {
        let server: URL
        let reason: String
        var description: String { "cannot reach the farm service at \(server.absoluteString): \(reason)" }
    }

    /// `method path` with `body` as JSON (POST: `{}` when nil).
    func call(_ method: String, _ path: String, json body: [String: Any]? = nil) throws(Unreachable) -> Answer {
        var request = URLRequest(url: base.appendingPathComponent(path))
        request.httpMethod = method
        request.timeoutInterval = 30
        if method == "POST" {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try? JSONSerialization.data(withJSONObject: body ?? [:])
        }
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var answer: Answer?
        nonisolated(unsafe) var failure: String?
        URLSession.shared.dataTask(with: request) { data, response, error in
            if let response = response as? HTTPURLResponse {
                answer = Answer(status: response.statusCode, body: data ?? Data())
            } else {
                failure = error?.localizedDescription ?? "no answer"
            }
            done.signal()
        }.resume()
        done.wait()
        guard let answer else { throw Unreachable(server: base, reason: failure ?? "no answer") }
        return answer
    }

    /// `method path`, whose answer must be 2xx; else the server's error is printed and the
    /// exit status thrown (2 with the diagnostics of an invalid manifest, else 1).
    func expect(_ method: String, _ path: String, json body: [String: Any]? = nil) throws -> [String: Any] {
        let answer: Answer
        do {
            answer = try call(method, path, json: body)
        } catch {
            printError(error.description)
            throw ExitCode(ExitStatus.someFailed)
        }
        guard (200..<300).contains(answer.status) else {
            if let diagnostics = answer.object["diagnostics"] as? String {
                FileHandle.standardError.write(Data(diagnostics.utf8))
                throw ExitCode(ExitStatus.invalid)
            }
            printError(answer.error)
            throw ExitCode(ExitStatus.someFailed)
        }
        return answer.object
    }

    /// Waits until job `id` is finished, through restarts of the server (it is asked again
    /// until it answers); the job. Draws the progress line on a terminal.
    func wait(for id: Int) throws -> [String: Any] {
        let line = ProgressLine.isTerminal ? ProgressLine(job: "job \(id)", outputsTotal: 0, inputsTotal: 0) : nil
        while true {
            if let answer = try? call("GET", "api/v1/jobs/\(id)") {
                guard answer.status == 200 else {
                    line?.clear()
                    printError(answer.error)
                    throw ExitCode(ExitStatus.someFailed)
                }
                let job = answer.object
                let state = job["state"] as? String ?? ""
                if ["completed", "failed", "cancelled"].contains(state) {
                    line?.clear()
                    return job
                }
                if let progress = job["progress"] as? [String: Any] {
                    line?.show(
                        job: job["name"] as? String ?? "job \(id)", outputs: progress["outputsDone"] as? Int ?? 0,
                        of: progress["outputsTotal"] as? Int ?? 0, tiles: progress["tilesDone"] as? Int ?? 0,
                        megapixelsPerSecond: progress["megapixelsPerSecond"] as? Double ?? 0,
                        secondsLeft: progress["etaSeconds"] as? Double ?? 0, failed: job["outputsFailed"] as? Int ?? 0)
                }
            }
            Thread.sleep(forTimeInterval: 0.25)
        }
    }

    /// The exit status `run` would have for a job that ended as `job`: 0 completed; 3 another
    /// process (a cron `run`) held its lock, 2 its manifest no longer checked (nothing of it
    /// ran); else 1 (some outputs failed, or it was cancelled).
    static func status(of job: [String: Any]) -> Int32 {
        if job["state"] as? String == "completed" { return ExitStatus.success }
        switch job["refusal"] as? String {
        case "locked": return ExitStatus.locked
        case "invalid": return ExitStatus.invalid
        default: return ExitStatus.someFailed
        }
    }

    /// The exit status of `run` for jobs ending with `statuses`: an invalid manifest (2) before
    /// a lock held (3) before failed outputs (1), as `run` checks every manifest, then takes
    /// every lock, then renders.
    static func combined(_ statuses: [Int32]) -> Int32 {
        [ExitStatus.invalid, ExitStatus.locked, ExitStatus.someFailed].first(where: statuses.contains)
            ?? ExitStatus.success
    }

    /// One line for a job: id, state, priority, outputs done of all, name.
    static func line(_ job: [String: Any]) -> String {
        func padded(_ text: String, _ width: Int, left: Bool = false) -> String {
            let fill = String(repeating: " ", count: max(0, width - text.count))
            return left ? fill + text : text + fill
        }
        let progress = job["progress"] as? [String: Any] ?? [:]
        let failed = job["outputsFailed"] as? Int ?? 0
        let counts = "\(progress["outputsDone"] as? Int ?? 0)/\(progress["outputsTotal"] as? Int ?? 0)"
            + (failed > 0 ? " (\(failed) failed)" : "")
        return padded("\(job["id"] as? Int ?? 0)", 5, left: true) + "  " + padded(job["state"] as? String ?? "", 10) + " "
            + padded("\(job["priority"] as? Int ?? 0)", 3, left: true) + "  " + padded(counts, 14) + " "
            + ShownName.of(job["name"] as? String ?? "")
    }
}
