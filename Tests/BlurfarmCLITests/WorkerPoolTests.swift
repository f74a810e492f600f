import BlurfarmTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `blurfarm run --workers N`: tiles rendered in worker processes give the very bytes of the
/// in-process engine; a worker killed, stopped or stalled mid-task is replaced and its tile
/// retried; a tile that keeps crashing fails its image alone; no worker outlives its
/// coordinator. The faults come from the test-only `fault` plugin (``FaultPlugin``), whose
/// `stall` leaves a marker file naming the stalled worker: the tests act on that process, at a
/// moment when it certainly holds a task, without sleeping.
@Suite(.tags(.process), .blocking) struct WorkerPoolTests {
    /// Twenty corpus images: photos, the special cases (16-bit, alpha, grey, CMYK, Display P3,
    /// EXIF-rotated, TIFF, WebP) and four of the 1080p batch.
    static let photos =
        [
            "photos/mate-Aqua.jpg", "photos/mate-FreshFlower.jpg", "photos/mate-GreenMeadow.jpg", "photos/mate-Storm.jpg",
            "photos/plasma-ColorfulCups.jpg", "photos/plasma-EveningGlow.jpg", "photos/plasma-Kite.jpg",
            "photos/plasma-Volna.jpg", "special/kite.webp", "special/grayscale.jpg",
            "special/alpha-garbage-under-transparent.png", "special/deep-16bit.png", "special/aqua.tif", "special/cmyk.jpg",
            "special/display-p3.jpg", "special/exif-orientation-6.jpg",
        ] + (0..<4).map { "batch1080/b0\($0).jpg" }

    /// Gaussian and motion variants under three edge rules, shrunk on load to 320 px wide so that
    /// twenty images run quickly, written losslessly (PNG keeps every rendered difference
    /// visible in the bytes). `fault` is put after the gaussian of the first variant.
    static func manifest(fault: KeyValuePairs<String, String>? = nil) -> String {
        let faultStage = Self.faultStage(fault)
        return """
            job: pool
            inputs: [photos/**/*.jpg, photos/**/*.webp, photos/**/*.png, photos/**/*.tif]
            outputs:
              - name: gauss
                path: out/{stem}-gauss.png
                resize:
                  width: 320
                filters:
                  - gaussian:
                      sigma: 2.5\(faultStage)
                edge: mirror
              - name: motion
                path: out/{stem}-motion.png
                resize:
                  width: 320
                filters:
                  - motion:
                      radius: 6
                      angle: 30
                edge: grow
              - name: both
                path: out/{stem}-both.png
                resize:
                  width: 320
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

    /// A `fault` stage with `arguments`, to follow a filter of a manifest's chain; empty for nil.
    static func faultStage(_ arguments: KeyValuePairs<String, String>?) -> String {
        arguments.map { arguments in
            "\n      - fault:" + arguments.map { "\n          \($0.key): \($0.value)" }.joined()
        } ?? ""
    }

    /// Every output file of the job folder, by name.
    static func outputs(_ folder: URL) throws -> [String: Data] {
        let out = folder.appendingPathComponent("out")
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: out.path) {
            files[name] = try Data(contentsOf: out.appendingPathComponent(name))
        }
        return files
    }

    /// The outputs of a `--report` file (one job): output path → its report.
    static func reportedOutputs(_ report: URL) throws -> [String: [String: Any]] {
        let list = try JSONSerialization.jsonObject(with: Data(contentsOf: report)) as? [[String: Any]]
        let outputs = list?.first?["outputs"] as? [[String: Any]] ?? []
        return Dictionary(uniqueKeysWithValues: outputs.map { ($0["output"] as? String ?? "", $0) })
    }

    /// The job's outputs rendered untiled, in process: the reference every other run must match.
    /// With `fault` (a plugin, which runs in worker processes only), by one worker, one tile
    /// an image, its configuration loading the plugin and nothing else.
    static func reference(_ job: String, _ folder: URL, fault: FaultPlugin? = nil) throws -> [String: Data] {
        var arguments = ["run", job, "--workers", "0", "--tile", "0", "--quiet"]
        if let fault {
            let config = folder.appendingPathComponent("reference.conf")
            try (fault.configuration + "whole-image-pixels: 0\n").write(to: config, atomically: true, encoding: .utf8)
            arguments = ["run", job, "--config", config.path, "--workers", "1", "--tile", "0", "--quiet"]
        }
        let result = try Blurfarm.run(arguments)
        #expect(result.status == 0, "\(result.stderr)")
        let files = try outputs(folder)
        try FileManager.default.removeItem(at: folder.appendingPathComponent("out"))
        return files
    }

    @Test func workerProcessesWriteTheBytesOfTheInProcessEngineWhateverTheTiles() throws {
        let folder = try JobCommandTests.makeJob(Self.manifest(), photos: Self.photos)
        defer { try? FileManager.default.removeItem(at: folder) }
        let job = folder.appendingPathComponent("job.job").path
        let reference = try Self.reference(job, folder)
        #expect(reference.count == 60)
        var checksums: [String: String]?
        for (workers, tile) in [("0", "64"), ("1", "64"), ("1", "0"), ("2", "0"), ("2", "37"), ("2", "256")] {
            try? FileManager.default.removeItem(at: folder.appendingPathComponent("out"))
            let report = folder.appendingPathComponent("report-\(workers)-\(tile).json")
            let result = try Blurfarm.run(["run", job, "--workers", workers, "--tile", tile, "--report", report.path])
            #expect(result.status == 0, "--workers \(workers) --tile \(tile): \(result.stderr)")
            #expect(result.stdout.contains("pool: 60 written, 0 failed"), "\(result.stdout)")
            let files = try Self.outputs(folder)
            #expect(files.keys.sorted() == reference.keys.sorted())
            for (name, data) in reference {
                #expect(files[name] == data, "\(name) differs with --workers \(workers) --tile \(tile)")
            }
            let reported = try Self.reportedOutputs(report).mapValues { $0["checksum"] as? String ?? "" }
            #expect(reported.count == 60 && reported.values.allSatisfy { $0.count == 16 })
            if let checksums { #expect(reported == checksums, "--workers \(workers) --tile \(tile)") }
            checksums = reported
        }
    }

    /// Runs the job with a worker stalled on its first try at one tile, does `act` to that
    /// worker once it is stalled (nil: nothing, the pool's timeouts free it), and checks that
    /// the job completes with the reference's bytes and one retried tile in the report (at
    /// least one unless `exactRetries`). Returns the stalled worker's pid.
    @discardableResult
    static func runWithAStalledWorker(
        configuration: String, exactRetries: Bool = true, act: ((Int32) -> Void)?
    ) throws -> Int32 {
        let fault = try FaultPlugin()
        defer { fault.remove() }
        let folder = try JobCommandTests.makeJob(Self.manifest(fault: FaultPlugin.stall()), photos: Array(Self.photos.prefix(6)))
        defer { try? FileManager.default.removeItem(at: folder) }
        let job = folder.appendingPathComponent("job.job").path
        let config = folder.appendingPathComponent("farm.conf")
        // Tile by tile (no whole-image tasks): the stall is one tile's (WholeImageTests has an image's).
        try (configuration + "\nwhole-image-pixels: 0\nstate: state\n" + fault.configuration)
            .write(to: config, atomically: true, encoding: .utf8)
        let report = folder.appendingPathComponent("report.json")

        let coordinator = try Coordinator(
            ["run", job, "--config", config.path, "--workers", "2", "--tile", "64", "--report", report.path])
        let stalled = try coordinator.waitForMarker(fault.marker)
        if let act {
            #expect(coordinator.children.contains(stalled), "the marker names a worker of this coordinator")
            act(stalled)
        }
        let status = coordinator.waitForExit(timeout: 120)
        #expect(status == 0, "\(coordinator.stderr())")
        #expect(!Processes.isAlive(stalled), "the stalled worker \(stalled) is gone")
        let files = try Self.outputs(folder)
        try FileManager.default.removeItem(at: folder.appendingPathComponent("out"))
        // The marker is still there: the reference run copies through `fault`.
        let reference = try Self.reference(job, folder, fault: fault)
        #expect(files.keys.sorted() == reference.keys.sorted())
        for (name, data) in reference { #expect(files[name] == data, "\(name) differs from the clean run") }
        let retries = try Self.reportedOutputs(report).values.map { $0["retries"] as? Int ?? -1 }
        // With a short timeout a healthy worker starved on a loaded machine may be taken too:
        // then at least the stalled one's retry.
        let total = retries.reduce(0, +)
        #expect((exactRetries ? total == 1 : total >= 1) && retries.allSatisfy { $0 >= 0 }, "retries: \(retries)")
        return stalled
    }

    /// A configuration in `folder` under which the stalled worker stays stalled until the test
    /// acts, however late (no task timeout to speak of), and images go tile by tile unless
    /// `wholeImages`, loading `fault` when given; its path.
    static func untimedConfiguration(in folder: URL, wholeImages: Bool = false, fault: FaultPlugin? = nil) throws -> String {
        let config = folder.appendingPathComponent("farm.conf")
        try ("task-timeout: 3600\nstate: state\n" + (wholeImages ? "" : "whole-image-pixels: 0\n") + (fault?.configuration ?? ""))
            .write(to: config, atomically: true, encoding: .utf8)
        return config.path
    }

    @Test func aWorkerKilledMidTaskIsReplacedAndItsTileRetried() throws {
        // No timeout frees the stalled worker before the test kills it, however late.
        try Self.runWithAStalledWorker(configuration: "task-timeout: 3600\nheartbeat-timeout: 60") { kill($0, SIGKILL) }
    }

    @Test func aStoppedWorkerIsKilledAfterTheHeartbeatTimeoutAndItsTileRetried() throws {
        // Alive but silent: only the heartbeat timeout frees its tile (the stall itself goes
        // on heartbeating until the test stops it, however late).
        try Self.runWithAStalledWorker(configuration: "task-timeout: 3600\nheartbeat-timeout: 3", exactRetries: false) {
            kill($0, SIGSTOP)
        }
    }

    @Test func aTaskPastTheTaskTimeoutIsKilledAndRetried() throws {
        // Stalled in the filter with its heartbeats going on: only the task timeout frees it.
        try Self.runWithAStalledWorker(configuration: "task-timeout: 2\nheartbeat-timeout: 60", exactRetries: false, act: nil)
    }

    @Test func aTileThatKeepsCrashingFailsItsImageAloneWithTheSignal() throws {
        // Only the 1280-pixel-wide PNG holds the pixel (1100, 10): its tile crashes every time.
        let manifest = """
            job: crash
            inputs: [photos/**/*.webp, photos/**/*.jpg, photos/**/*.png]
            outputs:
              - name: blur
                path: out/{stem}.png
                filters:
                  - gaussian:
                      sigma: 2
                  - fault:
                      x: 1100
                      y: 10
                      crash: true

            """
        let photos = ["special/kite.webp", "special/grayscale.jpg", "special/alpha-garbage-under-transparent.png"]
        let folder = try JobCommandTests.makeJob(manifest, photos: photos)
        defer { try? FileManager.default.removeItem(at: folder) }
        let fault = try FaultPlugin()
        defer { fault.remove() }
        let config = folder.appendingPathComponent("farm.conf")
        // Tile by tile: the crash is one tile's.
        try ("retries: 1\nstate: state\nwhole-image-pixels: 0\n" + fault.configuration)
            .write(to: config, atomically: true, encoding: .utf8)
        let report = folder.appendingPathComponent("report.json")
        let result = try Blurfarm.run(
            [
                "run", folder.appendingPathComponent("job.job").path, "--config", config.path, "--workers", "2",
                "--tile", "256", "--report", report.path,
            ])
        #expect(result.status == 1, "\(result.stderr)")
        let failures = result.stderr.split(separator: "\n")
        #expect(failures.count == 1, "\(result.stderr)")
        let line = String(failures.first ?? "")
        // Decoded whole and cut into tiles of 256 (a chain with a plugin is never streamed).
        #expect(line.contains("alpha-garbage-under-transparent.png: tile 256x256+1024+0 failed 2 times"), "\(line)")
        #expect(line.contains("killed by signal 11"), "\(line)")
        #expect(result.stdout.contains("crash: 2 written, 1 failed"), "\(result.stdout)")
        let written = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("out").path)
        #expect(written.sorted() == ["grayscale.png", "kite.png"])
        let outputs = try Self.reportedOutputs(report)
        let failed = outputs.values.filter { $0["status"] as? String == "failed" }
        #expect(failed.count == 1 && failed.first?["retries"] as? Int == 1)
    }

    @Test func noWorkerOutlivesAKilledCoordinator() throws {
        let fault = try FaultPlugin()
        defer { fault.remove() }
        let folder = try JobCommandTests.makeJob(
            Self.manifest(fault: FaultPlugin.stall()), photos: Array(Self.photos.prefix(2)))
        defer { try? FileManager.default.removeItem(at: folder) }
        let job = folder.appendingPathComponent("job.job").path
        let coordinator = try Coordinator(
            [
                "run", job, "--config", try Self.untimedConfiguration(in: folder, fault: fault), "--workers", "2", "--tile", "64",
                "--quiet",
            ])
        _ = try coordinator.waitForMarker(fault.marker)  // mid-job: one worker stalled, the other busy or idle
        // Its children: the two workers, and perhaps still the worker asked libvips's version.
        let children = coordinator.children
        let workers = children.filter {
            ((try? String(contentsOfFile: "/proc/\($0)/cmdline", encoding: .utf8)) ?? "").contains("--worker-id")
        }
        #expect(workers.count == 2)
        #expect(kill(coordinator.process.processIdentifier, SIGKILL) == 0)
        _ = coordinator.waitForExit()
        var alive = children
        try eventually("the workers' end; \(alive) survived their coordinator", timeout: .seconds(30)) {
            alive = alive.filter(Processes.isAlive)
            return alive.isEmpty
        }
    }

    /// Sends `coordinator` SIGTERM and checks what any stop must leave: exit 143, no worker
    /// alive, no temporary file in `folder`'s `out`, and a report naming exactly the files
    /// written. Returns the report's outputs by path.
    static func stopAndCheck(_ coordinator: Coordinator, folder: URL, report: URL) throws -> [String: [String: Any]] {
        let workers = coordinator.children
        #expect(kill(coordinator.process.processIdentifier, SIGTERM) == 0)
        #expect(coordinator.waitForExit(timeout: 120) == 143, "\(coordinator.stderr())")
        #expect(workers.allSatisfy { !Processes.isAlive($0) }, "workers \(workers.filter(Processes.isAlive)) are left")
        let out = folder.appendingPathComponent("out")
        let files = (try? FileManager.default.contentsOfDirectory(atPath: out.path)) ?? []
        #expect(!files.contains { $0.hasPrefix(".") }, "no temporary file: \(files.sorted())")
        let outputs = try reportedOutputs(report)
        let written = outputs.filter { $0.value["status"] as? String == "written" }.keys.map { ($0 as NSString).lastPathComponent }
        #expect(written.sorted() == files.sorted(), "the report names exactly the files written")
        return outputs
    }

    /// A run stopped by a signal while the worker asked libvips's version (a fresh state folder
    /// keeps none) has not answered leaves no process behind: that worker is killed and reaped
    /// with the run, not left running past it.
    @Test func aStoppedRunLeavesNoWorkerAskingTheVersion() throws {
        let folder = try JobCommandTests.makeJob(Self.manifest(), photos: Array(Self.photos.prefix(2)))
        defer { try? FileManager.default.removeItem(at: folder) }
        // Asked the version, it says which process it is and never answers; else the real worker.
        let marker = folder.appendingPathComponent("asked")
        let wrapper = folder.appendingPathComponent("worker.sh")
        try """
            #!/bin/sh
            if [ "$1" = --libvips-version ]; then echo $$ > '\(marker.path).tmp'; mv '\(marker.path).tmp' '\(marker.path)'; exec sleep 600; fi
            exec '\(BuiltExecutable.worker.path)' "$@"

            """.write(to: wrapper, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: wrapper.path)
        let coordinator = try Coordinator(
            [
                "run", folder.appendingPathComponent("job.job").path, "--config", try Self.untimedConfiguration(in: folder),
                "--workers", "2", "--quiet",
            ],
            environment: ["BLURFARM_WORKER": wrapper.path])
        let asked = try coordinator.waitForMarker(marker)
        #expect(kill(coordinator.process.processIdentifier, SIGTERM) == 0)
        #expect(coordinator.waitForExit() == 143, "\(coordinator.stderr())")
        // Reaped by the run: no such process (a zombie still answers signal 0).
        #expect(kill(asked, 0) == -1 && errno == ESRCH, "the worker asked the version, \(asked), outlived the run")
    }

    @Test func sigtermStopsTheWorkersAndKeepsWhatWasWritten() throws {
        let fault = try FaultPlugin()
        defer { fault.remove() }
        let folder = try JobCommandTests.makeJob(
            Self.manifest(fault: FaultPlugin.stall()), photos: Array(Self.photos.prefix(4)))
        defer { try? FileManager.default.removeItem(at: folder) }
        let report = folder.appendingPathComponent("report.json")
        let coordinator = try Coordinator(
            [
                "run", folder.appendingPathComponent("job.job").path, "--config",
                try Self.untimedConfiguration(in: folder, fault: fault), "--workers", "2", "--tile", "64", "--report", report.path,
            ])
        _ = try coordinator.waitForMarker(fault.marker)
        let outputs = try Self.stopAndCheck(coordinator, folder: folder, report: report)
        // Every output written or stopped; the stalled image's listed (it was started), those
        // not started counted.
        let counts = try IncrementalRunTests.Report(path: report.path).counts
        #expect(counts["written"]! + counts["stopped"]! == 12, "\(counts)")
        #expect(outputs.values.contains { $0["status"] as? String == "stopped" }, "the stalled image was stopped")
        #expect(!outputs.values.contains { $0["status"] as? String == "failed" })
    }
}

/// A `blurfarm run` started in the background, whose worker processes the test can find.
final class Coordinator {
    let process = Process()
    private let errors = Pipe()

    init(_ arguments: [String], environment: [String: String] = [:]) throws {
        process.executableURL = Blurfarm.executable
        process.arguments = arguments
        process.environment = Blurfarm.environment.merging(environment) { $1 }
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

    /// Waits (`eventually`) for the `fault` filter's marker file and returns the pid in it: a
    /// worker that is stalled in a task, its heartbeats going on. The coordinator is killed
    /// when none comes.
    func waitForMarker(_ marker: URL, sourceLocation: SourceLocation = #_sourceLocation) throws -> Int32 {
        var pid: Int32?
        do {
            try eventually("a stalled worker", sourceLocation: sourceLocation) {
                if let text = try? String(contentsOf: marker, encoding: .utf8), text.hasSuffix("\n") {
                    pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
                }
                try #require(
                    pid != nil || process.isRunning, "the coordinator ended first: \(stderr())", sourceLocation: sourceLocation)
                return pid != nil
            }
        } catch {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            throw error
        }
        return try #require(pid)
    }

    /// Waits for the coordinator's exit and returns its status; a coordinator still running
    /// after `timeout` seconds fails the test, is killed, and the status is -1.
    func waitForExit(timeout: Int = 120, sourceLocation: SourceLocation = #_sourceLocation) -> Int32 {
        try? eventually("the coordinator's exit", timeout: .seconds(timeout), sourceLocation: sourceLocation) {
            !process.isRunning
        }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return -1
        }
        return process.terminationStatus
    }

    /// What the coordinator wrote on standard error (after its exit).
    func stderr() -> String {
        String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }
}
