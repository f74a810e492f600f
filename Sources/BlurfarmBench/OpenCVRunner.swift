import Foundation

/// scripts/opencv-bench.py: OpenCV's 8-bit `GaussianBlur`, single-threaded, in processor time.
struct OpenCVRunner {
    /// What the script measured: OpenCV's version and the median seconds for each sigma.
    struct Answer: Decodable, Sendable {
        let version: String
        let seconds: [Double]
    }

    let python: String
    let script: String

    /// Runs the script on `data` (interleaved 8-bit pixels) at each of `sigmas`; `nil` when
    /// OpenCV cannot run here (the reason goes to `note`).
    func measure(_ data: [UInt8], width: Int, height: Int, bands: Int, sigmas: [Double], runs: Int, note: inout String?)
        throws -> Answer?
    {
        guard FileManager.default.fileExists(atPath: script) else {
            note = "OpenCV left out: \(script) is missing"
            return nil
        }
        let raw = FileManager.default.temporaryDirectory.appendingPathComponent("blurfarm-bench-\(getpid()).raw")
        try Data(data).write(to: raw)
        defer { try? FileManager.default.removeItem(at: raw) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            [python, script, "--raw", raw.path, "--width", String(width), "--height", String(height),
             "--bands", String(bands), "--runs", String(runs)] + sigmas.flatMap { ["--sigma", String($0)] }
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let answer = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0, let decoded = try? JSONDecoder().decode(Answer.self, from: answer),
            decoded.seconds.count == sigmas.count
        else {
            note = "OpenCV left out: \(script) failed (exit \(process.terminationStatus)); run scripts/setup.sh"
            return nil
        }
        return decoded
    }
}
