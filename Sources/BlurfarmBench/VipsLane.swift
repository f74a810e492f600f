import Foundation

/// One warm libvips 8.18 process (scripts/vips818-bench.py under the venv's Python): started
/// once, then given work one JSON line at a time, as a pyvips or sharp service runs libvips.
/// Several lanes work at once when each is sent its request before any answer is read.
public final class VipsLane {
    /// What the lane said when it started: libvips's version ("8.18.7") and its parts.
    public struct Hello: Sendable, Hashable, Codable {
        public var version: String
        public var major: Int
        public var minor: Int
        public var pid: Int32
    }

    private let process = Process()
    private let input: FileHandle
    private let output: FileHandle
    private var buffered: [UInt8] = []
    /// The version the lane reported.
    public private(set) var hello = Hello(version: "", major: 0, minor: 0, pid: 0)

    /// Starts `python script`, asks its version and requires libvips 8.18.
    ///
    /// - Throws: `BenchError` when the Python or the script is missing, the lane cannot start,
    ///   or it loads another libvips (Debian's 8.14 when pyvips-binary is not picked up).
    public init(python: String, script: String, concurrency: Int? = nil) throws(BenchError) {
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw BenchError("bench: no Python with libvips 8.18 at \(python): run scripts/setup.sh (it makes .venv-bench) or give --python")
        }
        guard FileManager.default.fileExists(atPath: script) else { throw BenchError("bench: \(script) is missing; give --scripts") }
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-u", script]
        var environment = ProcessInfo.processInfo.environment
        if let concurrency { environment["VIPS_CONCURRENCY"] = String(concurrency) }
        process.environment = environment
        let toLane = Pipe(), fromLane = Pipe()
        process.standardInput = toLane
        process.standardOutput = fromLane
        process.standardError = FileHandle.standardError
        input = toLane.fileHandleForWriting
        output = fromLane.fileHandleForReading
        do { try process.run() } catch { throw BenchError("bench: cannot start \(python) \(script): \(error)") }
        let answer = try request(["op": "hello"])
        hello = Hello(
            version: answer["version"] as? String ?? "", major: answer["major"] as? Int ?? 0,
            minor: answer["minor"] as? Int ?? 0, pid: Int32(answer["pid"] as? Int ?? 0))
        guard hello.major == 8, hello.minor == 18 else {
            throw BenchError(
                "bench: \(python) loads libvips \(hello.version), not 8.18 (Debian's is 8.14): run scripts/setup.sh")
        }
    }

    deinit {
        try? input.close()
        process.waitUntilExit()
    }

    /// Sends `request` and reads its answer.
    ///
    /// - Throws: `BenchError` when the lane answers an error or has gone.
    @discardableResult
    public func request(_ request: [String: Any]) throws(BenchError) -> [String: Any] {
        try send(request)
        return try receive()
    }

    /// Sends `request` without waiting for the answer (read it with ``receive()``).
    public func send(_ request: [String: Any]) throws(BenchError) {
        guard let data = try? JSONSerialization.data(withJSONObject: request) else {
            throw BenchError("bench: cannot encode \(request)")
        }
        do { try input.write(contentsOf: data + [0x0A]) } catch { throw BenchError("bench: the libvips lane has gone: \(error)") }
    }

    /// Reads the answer to the request sent last.
    ///
    /// - Throws: `BenchError` with the lane's error.
    public func receive() throws(BenchError) -> [String: Any] {
        while !buffered.contains(0x0A) {
            // availableData returns what the pipe holds (waiting for some); read(upToCount:)
            // would wait for the whole count.
            let more = output.availableData
            guard !more.isEmpty else {
                throw BenchError("bench: the libvips lane (\(process.arguments?.last ?? "")) stopped without answering")
            }
            buffered += more
        }
        let end = buffered.firstIndex(of: 0x0A)!
        let line = Data(buffered[..<end])
        buffered.removeSubrange(...end)
        guard let answer = (try? JSONSerialization.jsonObject(with: line)) as? [String: Any] else {
            throw BenchError("bench: the libvips lane answered '\(String(decoding: line, as: UTF8.self))'")
        }
        guard answer["ok"] as? Bool == true else {
            throw BenchError("bench: libvips 8.18: \(answer["error"] as? String ?? "failed")")
        }
        return answer
    }

    /// Sets how many threads libvips gives each operation (vips_concurrency_set).
    public func setConcurrency(_ threads: Int) throws(BenchError) {
        try request(["op": "concurrency", "n": threads])
    }
}
