import BlurfarmTestSupport
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `blurfarm serve` process on an ephemeral loopback port, over a folder that holds its
/// configuration (`state: state`), its queue and the jobs' files (its root).
final class ServedFarm {
    let folder: URL
    let process = Process()
    let port: Int
    private let errors = Pipe()

    var base: String { "http://127.0.0.1:\(port)" }
    func path(_ relative: String) -> String { folder.appendingPathComponent(relative).path }

    /// Starts the server (workers and more `arguments`) and waits until it listens.
    init(folder: URL, workers: Int = 2, port: Int = 0, arguments: [String] = []) throws {
        self.folder = folder
        let config = folder.appendingPathComponent("farm.conf").path
        if !FileManager.default.fileExists(atPath: config) {
            try "state: state\n".write(toFile: config, atomically: true, encoding: .utf8)
        }
        process.executableURL = Blurfarm.executable
        process.arguments = [
            "serve", "--listen", "127.0.0.1:\(port)", "--workers", "\(workers)", "--root", folder.path, "--config", config,
            "--grace", "5",
        ] + arguments
        process.environment = Blurfarm.environment
        let out = Pipe()
        process.standardOutput = out
        process.standardError = errors
        try process.run()
        // "blurfarm serve: listening on http://127.0.0.1:PORT"
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard let port = text.split(separator: ":").last.flatMap({ Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) })
        else {
            process.waitUntilExit()
            throw ServeFailure(message: "the server did not start: \(text) \(String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))")
        }
        self.port = port
    }

    /// Sends `signal` and waits for the exit (killing it with SIGKILL after `within` seconds: a
    /// cap on a failure's wait, its status then says SIGKILL); the status and standard error.
    @discardableResult
    func stop(signal: Int32 = SIGTERM, within: TimeInterval = 300) -> (status: Int32, stderr: String) {
        kill(process.processIdentifier, signal)
        let deadline = Date().addingTimeInterval(within)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, stderr)
    }

    /// `method path` with the JSON `body` (POST: `{}` when nil); the status and the JSON object.
    func call(_ method: String, _ path: String, json body: [String: Any]? = nil) throws -> (Int, [String: Any]) {
        let (status, data) = try raw(method, path, json: body)
        return (status, (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:])
    }

    /// `method path` with the JSON `body` (POST: `{}` when nil); the status and the body as sent.
    func raw(_ method: String, _ path: String, json body: [String: Any]? = nil) throws -> (Int, Data) {
        var request = URLRequest(url: URL(string: base + path)!)
        request.httpMethod = method
        request.timeoutInterval = 30
        if method == "POST" {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try JSONSerialization.data(withJSONObject: body ?? [:])
        }
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var answer: (Int, Data)?
        nonisolated(unsafe) var failure: (any Error)?
        URLSession.shared.dataTask(with: request) { data, response, error in
            if let response = response as? HTTPURLResponse { answer = (response.statusCode, data ?? Data()) }
            failure = error
            done.signal()
        }.resume()
        done.wait()
        if let failure { throw failure }
        guard let answer else { throw ServeFailure(message: "no answer to \(method) \(path)") }
        return answer
    }

    /// The server's metrics without labels, by name (`/metrics`).
    func metrics() throws -> [String: Int] {
        var values: [String: Int] = [:]
        for line in String(decoding: try raw("GET", "/metrics").1, as: UTF8.self).split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let value = Int(parts[1]) { values[String(parts[0])] = value }
        }
        return values
    }

    /// Submits the manifest at `manifest` with `priority`; the job's id.
    func submit(_ manifest: String, priority: Int = 50) throws -> Int {
        let (status, job) = try call("POST", "/api/v1/jobs", json: ["path": manifest, "priority": priority])
        guard status == 201, let id = job["id"] as? Int else {
            throw ServeFailure(message: "submit answered \(status): \(job)")
        }
        return id
    }

    /// What `read` gives once `condition` holds of it (or after two minutes: a cap on a
    /// failure's wait; the caller's expectations then fail on what it read last).
    func poll<T>(_ read: () throws -> T, until condition: (T) -> Bool) throws -> T {
        let deadline = Date().addingTimeInterval(120)
        while true {
            let value = try read()
            if condition(value) || Date() > deadline { return value }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// Job `id` once `condition` holds (or after two minutes).
    @discardableResult
    func wait(for id: Int, until condition: ([String: Any]) -> Bool) throws -> [String: Any] {
        try poll({ try call("GET", "/api/v1/jobs/\(id)").1 }, until: condition)
    }

    /// The outputs of job `id` started so far, by path: their state and tiles done.
    func outputs(of id: Int) throws -> [String: (state: String, tilesDone: Int)] {
        let list = try call("GET", "/api/v1/jobs/\(id)/outputs").1["outputs"] as? [[String: Any]] ?? []
        var outputs: [String: (state: String, tilesDone: Int)] = [:]
        for output in list {
            outputs[output["output"] as? String ?? ""] = (output["state"] as? String ?? "", output["tilesDone"] as? Int ?? 0)
        }
        return outputs
    }

    /// The outputs of job `id` once `condition` holds (or after two minutes).
    @discardableResult
    func waitForOutputs(
        of id: Int, until condition: ([String: (state: String, tilesDone: Int)]) -> Bool
    ) throws -> [String: (state: String, tilesDone: Int)] {
        try poll({ try outputs(of: id) }, until: condition)
    }

    /// Job `id` once it is finished (completed, failed or cancelled).
    @discardableResult
    func finished(_ id: Int) throws -> [String: Any] {
        try wait(for: id) { ["completed", "failed", "cancelled"].contains($0["state"] as? String ?? "") }
    }

    /// Starts a `blurfarm run` of `manifest` with the server's configuration (its state folder:
    /// the same job lock), one worker, as cron would, and returns once it wrote its first
    /// output (it holds the job's lock), stopped (SIGSTOP): it holds the lock however long the
    /// test takes, until the test lets it go on (SIGCONT).
    func startRun(_ manifest: String) throws -> Process {
        let run = Process()
        run.executableURL = Blurfarm.executable
        run.arguments = ["run", manifest, "--config", path("farm.conf"), "--workers", "1"]
        run.environment = Blurfarm.environment
        run.standardError = Pipe()
        try run.run()
        let job = (manifest as NSString).lastPathComponent.replacingOccurrences(of: ".job", with: "")
        let out = path("out/\(job)")
        let deadline = Date().addingTimeInterval(60)
        while ((try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []).filter({ !$0.hasPrefix(".") }).isEmpty,
            Date() < deadline, run.isRunning
        {
            Thread.sleep(forTimeInterval: 0.02)
        }
        kill(run.processIdentifier, SIGSTOP)
        return run
    }

    /// Writes `manifest.job`-style `name.job` in the folder: job `name`, the files of `inputs`
    /// blurred (gaussian `sigma`) to `out/name/{stem}.png`. Returns its path.
    func writeJob(_ name: String, inputs: String = "photos/*", sigma: Double = 1.5) throws -> String {
        let manifest = path("\(name).job")
        try """
            job: \(name)
            inputs: [\(inputs)]
            outputs:
              - name: blur
                path: out/\(name)/{stem}.png
                filters:
                  - gaussian:
                      sigma: \(sigma)

            """.write(toFile: manifest, atomically: true, encoding: .utf8)
        return manifest
    }

    /// Copies corpus photos into `photos/` of `folder` (`count` files, the corpus's 8 photos
    /// repeated under new names).
    static func addPhotos(to folder: URL, count: Int = 8, into subfolder: String = "photos") throws {
        let target = folder.appendingPathComponent(subfolder)
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
        let names = try FileManager.default.contentsOfDirectory(atPath: Fixtures.corpus("photos")).filter {
            $0.hasSuffix(".jpg")
        }.sorted()
        for index in 0..<count {
            let name = names[index % names.count]
            let copy = index < names.count ? name : "\(index)-\(name)"
            try FileManager.default.copyItem(
                atPath: Fixtures.corpus("photos/\(name)"), toPath: target.appendingPathComponent(copy).path)
        }
    }
}

struct ServeFailure: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
