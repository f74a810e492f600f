import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One run of a command, timed, with the peak memory of it and of its children read from /proc.
public struct MeasuredProcess: Sendable, Hashable, Codable {
    /// Wall time from start to exit, in seconds.
    public var seconds: Double
    /// The command's own peak resident memory (VmHWM), in bytes: for `blurfarm`, the coordinator.
    public var coordinatorPeak = 0
    /// The largest peak resident memory of any one of its children (the workers), in bytes.
    public var workerPeak = 0
    /// The command and its children together, each page counted once: the largest sum of their
    /// proportional set sizes (a shared page counts a part in each process that maps it),
    /// sampled every 50 ms, in bytes.
    public var togetherPeak = 0

    public init(seconds: Double) { self.seconds = seconds }

    /// Runs `executable arguments`, failing on a non-zero exit; with `memory`, sampling its own
    /// peak every millisecond, its children's every 25 ms and their proportional sum every 50 ms.
    /// A no-change run of 1,000 inputs lasts about 40 ms and peaks at its end: sampled every
    /// 25 ms, its peak read 32 MB where the kernel's (`/usr/bin/time -f %M`) was 37. The
    /// wall time ends when the process is seen to exit (Foundation's termination handler), not
    /// at the next sample: a sampling loop that slept between looks added up to its interval to
    /// every figure. Each look takes processor time from the process measured (reading
    /// `smaps_rollup` walks every mapping: 1–3% of a 2-core machine in `perf record` of the web
    /// job), so a figure's timed runs sample nothing and its memory comes from a run of its own.
    ///
    /// - Throws: `BenchError` with the command and its standard error when it fails.
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, memory: Bool = false
    ) throws(BenchError) -> MeasuredProcess {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardOutput = FileHandle.nullDevice
        // Standard error to a file, not a pipe: a pipe nobody reads until the end would block
        // a child with much to say.
        let errors = FileManager.default.temporaryDirectory.appendingPathComponent("blurfarm-bench-\(getpid()).err")
        guard FileManager.default.createFile(atPath: errors.path, contents: nil),
            let errorFile = try? FileHandle(forWritingTo: errors)
        else { throw BenchError("bench: cannot create \(errors.path)") }
        defer {
            try? errorFile.close()
            try? FileManager.default.removeItem(at: errors)
        }
        process.standardError = errorFile
        let exit = Mutex<ContinuousClock.Instant?>(nil)
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in
            exit.withLock { $0 = ContinuousClock.now }
            exited.signal()
        }
        let start = ContinuousClock.now
        do { try process.run() } catch { throw BenchError("bench: cannot start \(executable): \(error)") }
        let pid = process.processIdentifier
        var measurement = MeasuredProcess(seconds: 0)
        if memory {
            var samples = 0
            var workers: [Int32] = []
            repeat {
                measurement.coordinatorPeak = max(measurement.coordinatorPeak, peakMemory(pid))
                if samples % 25 == 0 {
                    workers = children(of: pid)
                    for child in workers {
                        measurement.workerPeak = max(measurement.workerPeak, peakMemory(child))
                    }
                }
                if samples % 50 == 0 {
                    let together = ([pid] + workers).reduce(0) { $0 + proportionalMemory($1) }
                    measurement.togetherPeak = max(measurement.togetherPeak, together)
                }
                samples += 1
            } while exited.wait(timeout: .now() + .milliseconds(1)) == .timedOut
        } else {
            exited.wait()
        }
        process.waitUntilExit()
        measurement.seconds = (exit.withLock { $0! } - start).seconds
        let stderr = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
        guard process.terminationStatus == 0 else {
            throw BenchError(
                "bench: '\(([executable] + arguments.prefix(8)).joined(separator: " "))' exited with "
                    + "\(process.terminationStatus): \(stderr)")
        }
        return measurement
    }

    /// VmHWM of `pid` in bytes (0 when it is gone).
    static func peakMemory(_ pid: Int32) -> Int { bytes("VmHWM:", in: "/proc/\(pid)/status") }

    /// The proportional set size of `pid` in bytes (`Pss` of /proc/PID/smaps_rollup: its
    /// private pages, and of each shared page its part; 0 when it is gone).
    static func proportionalMemory(_ pid: Int32) -> Int { bytes("Pss:", in: "/proc/\(pid)/smaps_rollup") }

    /// The kilobytes on the line of `file` that starts with `key`, in bytes; 0 without one.
    static func bytes(_ key: String, in file: String) -> Int {
        guard let text = try? String(contentsOfFile: file, encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix(key) }),
            let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { return 0 }
        return kilobytes * 1024
    }

    /// The child processes of `pid`.
    static func children(of pid: Int32) -> [Int32] {
        let tasks = "/proc/\(pid)/task"
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? []
        return threads.flatMap { thread -> [Int32] in
            let text = (try? String(contentsOfFile: "\(tasks)/\(thread)/children", encoding: .utf8)) ?? ""
            return text.split(separator: " ").compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
    }

    /// Whether an executable `name` is on the PATH.
    static func onPath(_ name: String) -> Bool {
        (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").contains {
            FileManager.default.isExecutableFile(atPath: "\($0)/\(name)")
        }
    }
}
