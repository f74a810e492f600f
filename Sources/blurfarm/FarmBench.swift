import ArgumentParser
import BlurfarmImageIO
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `blurfarm bench --farm PATH...`: `blurfarm run` on a batch of images beside
/// `parallel -j N vips gaussblur` on the same files (or, for thumbnails,
/// `parallel -j N vipsthumbnail`), in the same run, with the peak memory of the coordinator and
/// of its workers.
struct FarmBench {
    /// Images or folders of them (their `.jpg`, `.jpeg`, `.png`, `.webp`, `.tif` files).
    let paths: [String]
    /// The batch is the images this many times over (links to them), to show that memory
    /// does not grow with the batch.
    let copies: Int
    /// Worker counts to time, one row each.
    let workers: [Int]
    let sigma: Double
    /// Instead of the gaussian: thumbnails inside this many pixels square, JPEG q 80.
    let thumbnail: Int?
    let runs: Int
    /// Whether to time `vips` too.
    let vips: Bool

    struct Measurement {
        var seconds: Double
        /// blurfarm: the report's filter seconds, summed over the outputs.
        var filterSeconds = 0.0
        /// blurfarm: a second run right after, every output up to date.
        var rerunSeconds = 0.0
        var coordinatorPeak = 0
        var workerPeak = 0
        /// The coordinator and its workers together, each page counted once: the largest sum
        /// of their proportional set sizes (a shared page counts a part in each process that
        /// maps it), sampled every 50 ms.
        var togetherPeak = 0
    }

    func run() throws {
        let images = try inputs()
        guard !images.isEmpty else { throw CommandError("bench --farm: no images in \(paths.joined(separator: ", "))") }
        if vips, !Self.onPath("parallel") || !Self.onPath("vips") {
            throw CommandError("bench --farm: 'parallel' and 'vips' are needed to time libvips (bash scripts/setup.sh installs them)")
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("blurfarm-bench-\(getpid())")
        defer { try? FileManager.default.removeItem(at: folder) }
        let batch = folder.appendingPathComponent("in")
        try FileManager.default.createDirectory(at: batch, withIntermediateDirectories: true)
        var files: [String] = []
        for copy in 0..<copies {
            for (index, image) in images.enumerated() {
                let link = batch.appendingPathComponent(String(format: "c%03d-%05d-", copy, index) + (image as NSString).lastPathComponent)
                try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: image)
                files.append(link.path)
            }
        }
        let job = folder.appendingPathComponent("bench.job")
        let variant =
            if let thumbnail {
                """
                  - name: thumb
                    path: out/{stem}.jpg
                    resize:
                      width: \(thumbnail)
                      height: \(thumbnail)
                    quality: 80
                """
            } else {
                """
                  - name: blur
                    path: out/{stem}.jpg
                    filters:
                      - gaussian:
                          sigma: \(sigma)
                    quality: 90
                """
            }
        try "job: bench\ninputs: [in/*]\noutputs:\n\(variant)\n".write(to: job, atomically: true, encoding: .utf8)
        let what = thumbnail.map { "thumbnails inside \($0)x\($0) to JPEG q 80" } ?? "gaussian sigma \(sigma) to JPEG q 90"
        let config = folder.appendingPathComponent("bench.conf")
        try "state: state\n".write(to: config, atomically: true, encoding: .utf8)

        let megapixels = try images.reduce(0.0) { sum, image in
            let header = try ImageReader.header(ofFile: image)
            return sum + Double(header.width * header.height) / 1e6
        } * Double(copies)
        print("blurfarm \(Blurfarm.version) bench --farm: \(files.count) images (\(String(format: "%.1f", megapixels)) MP), \(what)")
        print("machine: \(Machine.cpuModel), \(ProcessInfo.processInfo.activeProcessorCount) cores; libvips \(ImageReader.libvipsVersion)")
        print("median of \(runs) runs, each run timing every row once, in turn; ratio = vips time / blurfarm time; "
            + "rerun: blurfarm run again at once, every output up to date")
        print("")
        let header = [
            "command", "s", "images/s", "MP/s", "filter s", "coordinator peak MB", "worker peak MB",
            "together peak MB (PSS)", "ratio", "rerun s",
        ]
        var rows: [[String]] = []
        var vipsSeconds: [Double] = []
        var farm: [Int: [Measurement]] = [:]
        for _ in 0..<max(runs, 1) {
            for count in workers {
                try? FileManager.default.removeItem(at: folder.appendingPathComponent("out"))
                let report = folder.appendingPathComponent("report.json")
                let arguments = [
                    "run", job.path, "--config", config.path, "--workers", "\(count)", "--quiet", "--report", report.path,
                ]
                var measurement = try Self.measure("/proc/self/exe", arguments)
                measurement.filterSeconds = try Self.filterSeconds(report)
                measurement.rerunSeconds = try Self.measure("/proc/self/exe", Array(arguments.dropLast(2))).seconds
                farm[count, default: []].append(measurement)
            }
            if vips {
                let out = folder.appendingPathComponent("vips")
                try? FileManager.default.removeItem(at: out)
                try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
                let jobs = workers.max() ?? 1
                let command =
                    if let thumbnail {
                        ["vipsthumbnail", "{}", "-s", "\(thumbnail)x\(thumbnail)", "-o", "\(out.path)/%s.jpg[Q=80]"]
                    } else {
                        ["vips", "gaussblur", "{}", "\(out.path)/{/.}.jpg[Q=90]", "\(sigma)"]
                    }
                let arguments = ["-j", "\(jobs)"] + command + [":::"] + files
                vipsSeconds.append(try Self.measure("/usr/bin/env", ["parallel"] + arguments).seconds)
            }
        }
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        let vipsMedian = vipsSeconds.isEmpty ? nil : median(vipsSeconds)
        for count in workers {
            let measured = farm[count]!
            let seconds = median(measured.map(\.seconds))
            let coordinator = measured.map(\.coordinatorPeak).max()!
            let worker = measured.map(\.workerPeak).max()!
            let together = measured.map(\.togetherPeak).max()!
            rows.append([
                "blurfarm run --workers \(count)", String(format: "%.2f", seconds),
                String(format: "%.1f", Double(files.count) / seconds), String(format: "%.1f", megapixels / seconds),
                String(format: "%.3f", median(measured.map(\.filterSeconds))), String(format: "%.0f", Double(coordinator) / 1e6), count == 0 ? "-" : String(format: "%.0f", Double(worker) / 1e6),
                String(format: "%.0f", Double(together) / 1e6),
                vipsMedian.map { String(format: "%.2f", $0 / seconds) } ?? "-",
                String(format: "%.2f", median(measured.map(\.rerunSeconds))),
            ])
        }
        if let vipsMedian {
            rows.append([
                "parallel -j \(workers.max() ?? 1) \(thumbnail == nil ? "vips gaussblur" : "vipsthumbnail")",
                String(format: "%.2f", vipsMedian),
                String(format: "%.1f", Double(files.count) / vipsMedian), String(format: "%.1f", megapixels / vipsMedian),
                "-", "-", "-", "-", "1.00", "-",
            ])
        }
        let widths = header.indices.map { c in ([header] + rows).map { $0[c].count }.max()! }
        for (i, row) in ([header] + rows).enumerated() {
            print(row.enumerated().map { c, v in v.padding(toLength: widths[c], withPad: " ", startingAt: 0) }
                .joined(separator: "  "))
            if i == 0 { print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")) }
        }
    }

    /// The image files named by `paths`, folders expanded, sorted.
    private func inputs() throws -> [String] {
        let extensions: Set<String> = ["jpg", "jpeg", "png", "webp", "tif", "tiff"]
        var images: [String] = []
        for path in paths {
            let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: absolute, isDirectory: &isFolder) else {
                throw CommandError("bench --farm: \(path): no such file or folder")
            }
            if isFolder.boolValue {
                images += try FileManager.default.contentsOfDirectory(atPath: absolute)
                    .filter { extensions.contains(($0 as NSString).pathExtension.lowercased()) }.sorted()
                    .map { (absolute as NSString).appendingPathComponent($0) }
            } else {
                images.append(absolute)
            }
        }
        return images
    }

    /// Runs `executable arguments`, failing on a non-zero exit, and returns its wall time, the
    /// peak resident memory (VmHWM) of it and of the largest of its children, sampled every
    /// 10 ms from /proc, and the peak of their proportional set sizes together, every 50 ms.
    static func measure(_ executable: String, _ arguments: [String]) throws -> Measurement {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        // Standard error to a file, not a pipe: a pipe nobody reads until the end would block
        // a child with much to say.
        let errors = FileManager.default.temporaryDirectory.appendingPathComponent("blurfarm-bench-\(getpid()).err")
        guard FileManager.default.createFile(atPath: errors.path, contents: nil),
            let errorFile = try? FileHandle(forWritingTo: errors)
        else { throw CommandError("bench --farm: cannot create \(errors.path)") }
        defer {
            try? errorFile.close()
            try? FileManager.default.removeItem(at: errors)
        }
        process.standardError = errorFile
        let start = ContinuousClock.now
        try process.run()
        let pid = process.processIdentifier
        var measurement = Measurement(seconds: 0)
        var samples = 0
        while process.isRunning {
            measurement.coordinatorPeak = max(measurement.coordinatorPeak, peakMemory(pid))
            let workers = children(of: pid)
            for child in workers {
                measurement.workerPeak = max(measurement.workerPeak, peakMemory(child))
            }
            if samples % 5 == 0 {
                let together = ([pid] + workers).reduce(0) { $0 + proportionalMemory($1) }
                measurement.togetherPeak = max(measurement.togetherPeak, together)
            }
            samples += 1
            usleep(10_000)
        }
        measurement.seconds = (ContinuousClock.now - start).seconds
        let stderr = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
        guard process.terminationStatus == 0 else {
            throw CommandError("bench --farm: '\(([executable] + arguments.prefix(8)).joined(separator: " "))' exited with \(process.terminationStatus): \(stderr)")
        }
        return measurement
    }

    /// The `filterSeconds` of every output of a `--report` file, summed.
    static func filterSeconds(_ report: URL) throws -> Double {
        struct Output: Decodable { let filterSeconds: Double }
        struct Report: Decodable { let outputs: [Output] }
        let reports = try JSONDecoder().decode([Report].self, from: Data(contentsOf: report))
        return reports.flatMap(\.outputs).reduce(0) { $0 + $1.filterSeconds }
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

    static func onPath(_ name: String) -> Bool {
        (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").contains {
            FileManager.default.isExecutableFile(atPath: "\($0)/\(name)")
        }
    }
}
