import BlurfarmAPI
import BlurfarmClient
import BlurfarmCore
import Foundation
import Synchronization

extension LibvipsComparison {
    /// The one image submitted to a warm `blurfarm serve` (started once on a free port, its
    /// workers started by one job before the timing), at each sigma, two ways, each against a
    /// warm lane at concurrency 2: `blurfarm submit JOB --wait` (a client process, as users
    /// submit from a shell: the ``Comparison/Figure/serve`` rows), and the same request from a
    /// client that stays (``FarmClient`` in this process, its connection kept, as a program
    /// submits through the API: the ``Comparison/Figure/serveWarmClient`` rows). Each run's
    /// job writes outputs of its own, so none is up to date. Call it from a thread of its own
    /// (a command's `run`), not from async code: the warm client's calls are awaited on it.
    ///
    /// - Throws: `BenchError`.
    public func serve() throws -> [Comparison] {
        let image = try corpus(settings.image)
        let folder = try BenchFolder()
        // A copy, not a link: a served job may read only below its roots.
        let input = folder.path + "/in/" + PathName.lastName(of: image)
        do { try FileManager.default.copyItem(atPath: image, toPath: input) } catch {
            throw BenchError("bench: cannot copy \(image): \(error)")
        }
        let server = try ServedFarm(executable: executable, root: folder.path, config: folder.config)
        defer { server.stop() }
        let lane = try lanes()[0]
        let out = try folder.freshFolder("vips")
        var job = 0
        func write(_ sigma: Double) throws -> String {
            job += 1
            return try folder.writeJob(
                "serve-\(job).job", variants: [BenchJob.variant(name: "blur", path: "out/\(job)/{stem}.jpg", sigma: sigma, quality: 90)])
        }
        func submit(_ sigma: Double) throws -> Double {
            let path = try write(sigma)
            return try MeasuredProcess.run(executable, ["submit", path, "--server", server.url, "--wait"]).seconds
        }
        let client = WarmClient(server: server.url)
        func submitWarm(_ sigma: Double) throws -> Double {
            let path = try write(sigma)
            return try BenchStatistics.wallSeconds { try client.submitAndWait(path) }
        }
        _ = try submit(settings.sigmas.first ?? 8)  // starts the pool's workers: the service is warm
        _ = try submitWarm(settings.sigmas.first ?? 8)  // and the client's connection
        try lane.setConcurrency(2)
        defer { try? lane.setConcurrency(Machine.cores) }
        let baseline = "libvips \(try libvipsVersion()) in-process, concurrency 2"
        var cold: [Comparison] = [], warm: [Comparison] = []
        for sigma in settings.sigmas {
            var ours: [Double] = [], oursWarm: [Double] = [], theirs: [Double] = []
            for _ in 0..<runs {
                ours.append(try submit(sigma))
                oursWarm.append(try submitWarm(sigma))
                theirs.append(
                    try BenchStatistics.wallSeconds {
                        try lane.request(["op": "blur", "files": [image], "out": out, "sigma": sigma, "quality": 90])
                    })
            }
            cold.append(Comparison(figure: .serve, label: Self.label(sigma), blurfarmRuns: ours, baselineRuns: theirs, baseline: baseline))
            warm.append(
                Comparison(figure: .serveWarmClient, label: Self.label(sigma), blurfarmRuns: oursWarm, baselineRuns: theirs, baseline: baseline))
        }
        return cold + warm
    }
}

/// A client of the served farm that stays: one ``FarmClient`` (its process-wide HTTP client and
/// kept connection) for every job, as a program submits through the API. Its async calls are
/// awaited on the calling thread, which must not be one of the concurrency pool's.
final class WarmClient: Sendable {
    private let client: FarmClient

    init(server: String) { client = FarmClient(base: URL(string: server)!, token: nil) }

    /// Submits the manifest at `path` (`POST /api/v1/jobs`), waits for its end on the event
    /// stream, and checks that it wrote its one output.
    ///
    /// - Throws: `BenchError` when the service refuses the job or the job does not write it.
    func submitAndWait(_ path: String) throws(BenchError) {
        let outcome = Mutex<Result<JobView, ClientError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let client = client
        Task.detached {
            let result: Result<JobView, ClientError>
            do throws(ClientError) {
                let submitted = try await client.submit(SubmitRequest(path: path))
                result = .success(try await client.waitUntilFinished(submitted.job.id ?? -1))
            } catch {
                result = .failure(error)
            }
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        switch outcome.withLock({ $0 }) {
        case .success(let view) where view.job.state == .completed && view.job.outputsWritten == 1: return
        case .success(let view):
            throw BenchError("bench: the served job \(path) ended \(view.job.state.rawValue) with \(view.job.outputsWritten) written")
        case .failure(let error): throw BenchError("bench: the served job \(path): \(error)")
        case nil: throw BenchError("bench: the served job \(path) gave no answer")
        }
    }
}

/// A `blurfarm serve` on 127.0.0.1 and a free port, for the serve figure.
final class ServedFarm {
    private let process = Process()
    /// The service's address, as it printed it: "http://127.0.0.1:40123".
    let url: String

    /// Starts `executable serve` with `root` and `config` and waits for its address.
    ///
    /// - Throws: `BenchError` when it does not start or exits before listening.
    init(executable: String, root: String, config: String) throws(BenchError) {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["serve", "--listen", "127.0.0.1:0", "--root", root, "--config", config]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { throw BenchError("bench: cannot start \(executable) serve: \(error)") }
        var text = ""
        let marker = "listening on "
        while !text.contains("\n") || !text.contains(marker) {
            let more = output.fileHandleForReading.availableData
            guard !more.isEmpty else {
                process.waitUntilExit()
                throw BenchError("bench: 'blurfarm serve' exited (\(process.terminationStatus)) before listening: \(text)")
            }
            text += String(decoding: more, as: UTF8.self)
        }
        let line = text.split(separator: "\n").first { $0.contains(marker) }.map(String.init) ?? ""
        url = String(line[line.range(of: marker)!.upperBound...]).trimmingCharacters(in: .whitespaces)
    }

    /// Stops the service (SIGTERM) and waits for it.
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    deinit { stop() }
}
