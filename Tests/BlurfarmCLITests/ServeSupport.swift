import BlurfarmState
import BlurfarmTestSupport
import Foundation
import Synchronization
import Testing

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

    /// Starts the server (workers and more `arguments`) and waits until it listens. `byName`:
    /// started as `blurfarm` found on `PATH` (`PATH` first holding that folder), in the
    /// working folder `workingFolder`, as a systemd unit or a shell starts an installed one.
    init(
        folder: URL, workers: Int = 2, port: Int = 0, arguments: [String] = [], byName: String? = nil,
        workingFolder: URL? = nil
    ) throws {
        self.folder = folder
        let config = folder.appendingPathComponent("farm.conf").path
        if !FileManager.default.fileExists(atPath: config) {
            try "state: state\n".write(toFile: config, atomically: true, encoding: .utf8)
        }
        let serve = [
            "serve", "--listen", "127.0.0.1:\(port)", "--workers", "\(workers)", "--root", folder.path, "--config", config,
            "--grace", "5",
        ] + arguments
        var environment = Blurfarm.environment
        if let byName {
            // env(1) looks `blurfarm` up on the PATH and runs it with argv[0] "blurfarm".
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["blurfarm"] + serve
            environment["PATH"] = byName + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        } else {
            process.executableURL = Blurfarm.executable
            process.arguments = serve
        }
        process.environment = environment
        if let workingFolder { process.currentDirectoryURL = workingFolder }
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

    /// A server the test left running (it failed, or threw before its `stop`) is killed with the
    /// object: no server or worker outlives the test that started it.
    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// Sends `signal` (0: none, a signal sent already) and waits for the exit; the status and standard error. A server still
    /// running after `within` seconds fails the test and is killed (SIGKILL: its status then
    /// says so), so that a `defer` can stop it too.
    @discardableResult
    func stop(
        signal: Int32 = SIGTERM, within: Int = 300, sourceLocation: SourceLocation = #_sourceLocation
    ) -> (status: Int32, stderr: String) {
        kill(process.processIdentifier, signal)
        try? eventually(
            "the server's exit after signal \(signal)", timeout: .seconds(within), sourceLocation: sourceLocation
        ) { !process.isRunning }
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

    /// What `read` gives once `condition` holds of it (`eventually`: the test fails, showing
    /// what it read last, when it does not).
    func poll<T>(
        _ read: () throws -> T, until condition: (T) -> Bool, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> T {
        var value = try read()
        try eventually("the condition, last read \(value)", interval: .milliseconds(50), sourceLocation: sourceLocation) {
            value = try read()
            return condition(value)
        }
        return value
    }

    /// Job `id` once `condition` holds.
    @discardableResult
    func wait(
        for id: Int, sourceLocation: SourceLocation = #_sourceLocation, until condition: ([String: Any]) -> Bool
    ) throws -> [String: Any] {
        try poll({ try call("GET", "/api/v1/jobs/\(id)").1 }, until: condition, sourceLocation: sourceLocation)
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

    /// The outputs of job `id` once `condition` holds.
    @discardableResult
    func waitForOutputs(
        of id: Int, sourceLocation: SourceLocation = #_sourceLocation,
        until condition: ([String: (state: String, tilesDone: Int)]) -> Bool
    ) throws -> [String: (state: String, tilesDone: Int)] {
        try poll({ try outputs(of: id) }, until: condition, sourceLocation: sourceLocation)
    }

    /// Job `id` once it is finished (completed, failed or cancelled).
    @discardableResult
    func finished(_ id: Int, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        try wait(for: id, sourceLocation: sourceLocation) {
            ["completed", "failed", "cancelled"].contains($0["state"] as? String ?? "")
        }
    }

    /// Makes the configuration of `folder` (written before the server starts) load the test
    /// plugin `hold`, which keeps each tile in its worker while the file `hold` in the folder
    /// exists, and render tile by tile (no whole-image tasks, where the plugin would not be
    /// first); writes that file and returns it. A job with `hold` first among its filters
    /// (``writeJob(_:inputs:sigma:held:)``) then renders nothing until the test removes the file:
    /// a test makes the state it needs (outputs mid-render, a run holding its lock) rather than
    /// racing a fast or busy machine for it.
    static func holdTiles(in folder: URL) throws -> URL {
        let hold = folder.appendingPathComponent("hold")
        try Data().write(to: hold)
        let plugins = folder.appendingPathComponent("plugins")
        try FileManager.default.createDirectory(at: plugins, withIntermediateDirectories: true)
        try TestPlugins.setMode(0o755, plugins)
        try TestPlugins.compile("misbehave.c", as: "hold", into: plugins, defines: ["NAME=\"hold\"", "HOLD=\"\(hold.path)\""])
        try "state: state\nwhole-image-pixels: 0\nplugin-folders: [plugins]\n".write(
            to: folder.appendingPathComponent("farm.conf"), atomically: true, encoding: .utf8)
        return hold
    }

    /// Starts a `blurfarm run` of `manifest`, a job whose tiles are held (``holdTiles(in:)``),
    /// with the server's configuration (its state folder: the same job lock), one worker, as
    /// cron would, and returns once the run holds the job's lock (its process id in the lock
    /// file). It holds the lock until the test removes the hold file and the run ends.
    func startRun(_ manifest: String) throws -> Process {
        let run = Process()
        run.executableURL = Blurfarm.executable
        run.arguments = ["run", manifest, "--config", path("farm.conf"), "--workers", "1"]
        run.environment = Blurfarm.environment
        run.standardError = Pipe()
        try run.run()
        let job = (manifest as NSString).lastPathComponent.replacingOccurrences(of: ".job", with: "")
        let lock = JobStateFolder(state: path("state"), jobName: job, manifestPath: manifest).lockPath
        try eventually("`blurfarm run \(manifest)` holding the job's lock") {
            if (try? String(contentsOfFile: lock, encoding: .utf8)) == "\(run.processIdentifier)\n" { return true }
            guard run.isRunning else { throw ServeFailure(message: "`blurfarm run \(manifest)` ended before it took the lock") }
            return false
        }
        return run
    }

    /// Writes `manifest.job`-style `name.job` in the folder: job `name`, the files of `inputs`
    /// blurred (gaussian `sigma`) to `out/name/{stem}.png`, each tile first held while the file
    /// `hold` exists when `held` (``holdTiles(in:)``). Returns its path.
    func writeJob(_ name: String, inputs: String = "photos/*", sigma: Double = 1.5, held: Bool = false) throws -> String {
        let manifest = path("\(name).job")
        try """
            job: \(name)
            inputs: [\(inputs)]
            outputs:
              - name: blur
                path: out/\(name)/{stem}.png
                filters:\(held ? "\n      - hold" : "")
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

/// A listener on `127.0.0.1:port` that takes each connection and closes it unanswered, and
/// counts them: a server that is down, as a client that keeps asking sees it, and the proof
/// that the client asked.
final class UnansweringListener: Sendable {
    private let socket: Int32
    private let accepted = Atomic<Int>(0)
    private let ended = DispatchSemaphore(value: 0)

    /// The connections taken so far.
    var connections: Int { accepted.load(ordering: .relaxed) }

    init(port: Int) throws {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ServeFailure(message: "socket: errno \(errno)") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port)).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            let error = errno
            Glibc.close(fd)
            throw ServeFailure(message: "cannot listen on 127.0.0.1:\(port): errno \(error)")
        }
        socket = fd
        Thread { [self] in
            while true {
                let connection = accept(fd, nil, nil)
                if connection < 0 {
                    if errno == EINTR { continue }
                    break  // closed
                }
                accepted.add(1, ordering: .relaxed)
                Glibc.close(connection)
            }
            ended.signal()
        }.start()
    }

    /// Stops listening: the port is free again.
    func close() {
        shutdown(socket, Int32(SHUT_RDWR))
        ended.wait()
        Glibc.close(socket)
    }
}
