import BlurfarmCore
import Foundation

extension LibvipsComparison {
    /// The one image submitted to a warm `blurfarm serve` (started once on a free port, its
    /// workers started by one job before the timing), at each sigma: `blurfarm submit JOB
    /// --wait` (a client process, as users submit) against a warm lane at concurrency 2. Each
    /// run's job writes outputs of its own, so none is up to date.
    ///
    /// - Throws: `BenchError`.
    public func serve() throws -> [Comparison] {
        let image = try corpus(settings.image)
        let folder = try BenchFolder()
        // A copy, not a link: a served job may read only below its roots.
        let input = folder.path + "/in/" + (image as NSString).lastPathComponent
        do { try FileManager.default.copyItem(atPath: image, toPath: input) } catch {
            throw BenchError("bench: cannot copy \(image): \(error)")
        }
        let server = try ServedFarm(executable: executable, root: folder.path, config: folder.config)
        defer { server.stop() }
        let lane = try lanes()[0]
        let out = try folder.freshFolder("vips")
        var job = 0
        func submit(_ sigma: Double) throws -> Double {
            job += 1
            let path = try folder.writeJob(
                "serve-\(job).job", variants: [BenchJob.variant(name: "blur", path: "out/\(job)/{stem}.jpg", sigma: sigma, quality: 90)])
            return try MeasuredProcess.run(executable, ["submit", path, "--server", server.url, "--wait"]).seconds
        }
        _ = try submit(settings.sigmas.first ?? 8)  // starts the pool's workers: the service is warm
        try lane.setConcurrency(2)
        defer { try? lane.setConcurrency(Machine.cores) }
        var rows: [Comparison] = []
        for sigma in settings.sigmas {
            var ours: [Double] = [], theirs: [Double] = []
            for _ in 0..<runs {
                ours.append(try submit(sigma))
                theirs.append(
                    try BenchStatistics.wallSeconds {
                        try lane.request(["op": "blur", "files": [image], "out": out, "sigma": sigma, "quality": 90])
                    })
            }
            rows.append(
                Comparison(
                    figure: .serve, label: Self.label(sigma), blurfarmRuns: ours, baselineRuns: theirs,
                    baseline: "libvips \(try libvipsVersion()) in-process, concurrency 2"))
        }
        return rows
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
