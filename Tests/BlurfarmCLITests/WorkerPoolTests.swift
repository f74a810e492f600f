import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `blurfarm run --workers N`: tiles rendered in worker processes give the very bytes of the
/// in-process engine, survive a worker killed mid-job, and die with their coordinator.
@Suite struct WorkerPoolTests {
    static let photos = [
        "special/kite.webp", "special/grayscale.jpg", "special/alpha-garbage-under-transparent.png",
        "special/deep-16bit.png",
    ]

    /// Gaussian and motion variants under three edge rules, written losslessly (PNG keeps
    /// every rendered difference visible in the bytes).
    static func manifest(sigma: Double) -> String {
        """
        job: pool
        inputs: [photos/**/*.webp, photos/**/*.jpg, photos/**/*.png]
        outputs:
          - name: gauss
            path: out/{stem}-gauss.png
            filters:
              - gaussian:
                  sigma: \(sigma)
            edge: mirror
          - name: motion
            path: out/{stem}-motion.png
            filters:
              - motion:
                  radius: 6
                  angle: 30
            edge: grow
          - name: both
            path: out/{stem}-both.png
            filters:
              - gaussian:
                  sigma: 1.5
              - motion:
                  radius: 3
                  angle: 100
            edge: transparent
            colour: linear

        """
    }

    /// Every output file of the job folder, by path under `out/`.
    static func outputs(_ folder: URL) throws -> [String: Data] {
        let out = folder.appendingPathComponent("out")
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: out.path) {
            files[name] = try Data(contentsOf: out.appendingPathComponent(name))
        }
        return files
    }

    @Test(arguments: ["0", "64", "256"])
    func workerProcessesWriteTheBytesOfTheInProcessEngine(tile: String) throws {
        let folder = try JobCommandTests.makeJob(Self.manifest(sigma: 2.5), photos: Self.photos)
        defer { try? FileManager.default.removeItem(at: folder) }
        let job = folder.appendingPathComponent("job.job").path
        var runs: [(String, [String: Data])] = []
        for workers in ["0", "1", "2"] {
            try? FileManager.default.removeItem(at: folder.appendingPathComponent("out"))
            let result = try Blurfarm.run(["run", job, "--workers", workers, "--tile", tile])
            #expect(result.status == 0, "--workers \(workers): \(result.stderr)")
            #expect(result.stdout.contains("pool: 12 written, 0 failed"), "\(result.stdout)")
            runs.append((workers, try Self.outputs(folder)))
        }
        let (_, reference) = runs[0]
        #expect(reference.count == 12)
        for (workers, files) in runs.dropFirst() {
            #expect(files.keys.sorted() == reference.keys.sorted())
            for (name, data) in reference {
                #expect(files[name] == data, "\(name) differs with --workers \(workers) --tile \(tile)")
            }
        }
    }

    @Test func aWorkerKilledMidJobIsReplacedAndTheOutputsAreTheSame() throws {
        let folder = try JobCommandTests.makeJob(Self.manifest(sigma: 8), photos: Self.photos)
        defer { try? FileManager.default.removeItem(at: folder) }
        let job = folder.appendingPathComponent("job.job").path
        let inProcess = try Blurfarm.run(["run", job, "--workers", "0", "--tile", "64", "--quiet"])
        #expect(inProcess.status == 0, "\(inProcess.stderr)")
        let reference = try Self.outputs(folder)
        try FileManager.default.removeItem(at: folder.appendingPathComponent("out"))

        let coordinator = try Coordinator(["run", job, "--workers", "2", "--tile", "64", "--quiet"])
        let workers = try coordinator.waitForWorkers(2)
        Thread.sleep(forTimeInterval: 0.5)  // into the job: the workers have tasks
        let runningAtKill = coordinator.process.isRunning
        #expect(kill(workers[0], SIGKILL) == 0)
        let status = coordinator.waitForExit()
        #expect(runningAtKill, "the job ended before the worker was killed: nothing was tested")
        #expect(status == 0, "\(coordinator.stderr())")
        let files = try Self.outputs(folder)
        #expect(files.keys.sorted() == reference.keys.sorted())
        for (name, data) in reference { #expect(files[name] == data, "\(name) differs after a worker was killed") }
    }

    @Test func aSilentWorkerIsKilledAfterTheHeartbeatTimeoutAndItsTileRetried() throws {
        let folder = try JobCommandTests.makeJob(Self.manifest(sigma: 8), photos: Self.photos)
        defer { try? FileManager.default.removeItem(at: folder) }
        let job = folder.appendingPathComponent("job.job").path
        let config = folder.appendingPathComponent("farm.conf")
        try "heartbeat-timeout: 1\nstate: state\n".write(to: config, atomically: true, encoding: .utf8)
        let inProcess = try Blurfarm.run(["run", job, "--config", config.path, "--workers", "0", "--tile", "64", "--quiet"])
        #expect(inProcess.status == 0, "\(inProcess.stderr)")
        let reference = try Self.outputs(folder)
        try FileManager.default.removeItem(at: folder.appendingPathComponent("out"))

        let coordinator = try Coordinator(["run", job, "--config", config.path, "--workers", "2", "--tile", "64", "--quiet"])
        let workers = try coordinator.waitForWorkers(2)
        Thread.sleep(forTimeInterval: 0.5)
        let runningAtStop = coordinator.process.isRunning
        #expect(kill(workers[0], SIGSTOP) == 0)  // alive but silent: only the heartbeat timeout frees its tile
        let status = coordinator.waitForExit(timeout: 120)
        #expect(runningAtStop, "the job ended before the worker was stopped: nothing was tested")
        #expect(status == 0, "\(coordinator.stderr())")
        #expect(!Coordinator.isAlive(workers[0]))
        let files = try Self.outputs(folder)
        #expect(files.keys.sorted() == reference.keys.sorted())
        for (name, data) in reference { #expect(files[name] == data, "\(name) differs after a worker hung") }
    }

    @Test func aTileFailingMoreThanTheRetryLimitFailsItsImageWithTheExitStatus() throws {
        let folder = try JobCommandTests.makeJob(Self.manifest(sigma: 8), photos: Self.photos)
        defer { try? FileManager.default.removeItem(at: folder) }
        let job = folder.appendingPathComponent("job.job").path
        let config = folder.appendingPathComponent("farm.conf")
        try "retries: 0\nstate: state\n".write(to: config, atomically: true, encoding: .utf8)
        let coordinator = try Coordinator(["run", job, "--config", config.path, "--workers", "1", "--tile", "64"])
        let workers = try coordinator.waitForWorkers(1)
        Thread.sleep(forTimeInterval: 0.5)  // the only worker has a task
        let runningAtKill = coordinator.process.isRunning
        #expect(kill(workers[0], SIGKILL) == 0)
        let status = coordinator.waitForExit(timeout: 120)
        let stderr = coordinator.stderr()
        #expect(runningAtKill, "the job ended before the worker was killed: nothing was tested")
        #expect(status == 1, "\(stderr)")
        #expect(stderr.contains("failed 1 times; the last time: worker 1 (pid \(workers[0]))"), "\(stderr)")
        #expect(stderr.contains("killed by signal 9"), "\(stderr)")
    }

    @Test func noWorkerOutlivesAKilledCoordinator() throws {
        let folder = try JobCommandTests.makeJob(Self.manifest(sigma: 8), photos: Self.photos)
        defer { try? FileManager.default.removeItem(at: folder) }
        let job = folder.appendingPathComponent("job.job").path
        let coordinator = try Coordinator(["run", job, "--workers", "2", "--tile", "64", "--quiet"])
        let workers = try coordinator.waitForWorkers(2)
        Thread.sleep(forTimeInterval: 0.3)
        #expect(kill(coordinator.process.processIdentifier, SIGKILL) == 0)
        _ = coordinator.waitForExit()
        let deadline = Date().addingTimeInterval(2)
        var alive = workers
        while !alive.isEmpty && Date() < deadline {
            alive = alive.filter(Coordinator.isAlive)
            usleep(20_000)
        }
        #expect(alive.isEmpty, "workers \(alive) survived their coordinator")
    }
}

/// A `blurfarm run` started in the background, whose worker processes the test can find.
final class Coordinator {
    let process = Process()
    private let errors = Pipe()

    init(_ arguments: [String]) throws {
        process.executableURL = Blurfarm.executable
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
    }

    /// The coordinator's child processes: its workers.
    var children: [Int32] {
        let tasks = "/proc/\(process.processIdentifier)/task"
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? []
        return threads.flatMap { thread -> [Int32] in
            let text = (try? String(contentsOfFile: "\(tasks)/\(thread)/children", encoding: .utf8)) ?? ""
            return text.split(separator: " ").compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
    }

    /// Waits (10 s at most) until the coordinator has `count` children and returns them.
    func waitForWorkers(_ count: Int) throws -> [Int32] {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            let found = children
            if found.count >= count { return found }
            usleep(10_000)
        }
        process.terminate()
        throw CocoaError(.featureUnsupported, userInfo: [NSLocalizedDescriptionKey: "no \(count) workers within 10 s"])
    }

    /// Waits for the coordinator's exit and returns its status; after `timeout` seconds it is
    /// killed and the status is -1.
    func waitForExit(timeout: Double = 120) -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning {
            if Date() > deadline {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                return -1
            }
            usleep(20_000)
        }
        return process.terminationStatus
    }

    /// What the coordinator wrote on standard error (after its exit).
    func stderr() -> String {
        String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    /// Whether `pid` is a live process (not gone, not a zombie).
    static func isAlive(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        let state = stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first
        return state != "Z" && state != "X"
    }
}
