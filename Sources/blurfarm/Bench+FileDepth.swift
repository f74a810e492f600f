import BlurfarmCore
import BlurfarmImageIO
import BlurfarmKernels
import Foundation

extension Bench {
    /// The gaussian at the file's depth, 8-bit samples in and 8-bit samples out, beside
    /// OpenCV's `cv2.GaussianBlur` (scripts/opencv-bench.py) and libvips's integer gaussblur on
    /// the same pixels, single-threaded, in the same run.
    func measureFileDepth(_ pixels: PixelBuffer) throws {
        print("8-bit in, 8-bit out (edge clamp): blurfarm's file-depth gaussian as one tile into an output allocated")
        print("once, OpenCV's GaussianBlur likewise (ksize 2*ceil(3 sigma)+1, BORDER_REPLICATE, cv2.setNumThreads(1)),")
        print("both in processor time (CPU ms: steady on a busy machine), and libvips's integer gaussblur in wall")
        print("time; ratio = their time / blurfarm's time (above 1: blurfarm is faster)")
        let header = ["sigma", "bands", "blurfarm CPU ms", "OpenCV CPU ms", "ratio", "libvips ms", "ratio"]
        var rows: [[String]] = []
        let rect = pixels.rect
        for bands in [3, 4] {
            let libvipsImage = try LibvipsReference.Image.eightBit(from: pixels, bands: bands)
            let source = SampleBuffer<UInt8>(rect: rect, channels: bands)
            source.withUnsafeSamples { $0.update(from: libvipsImage.data, count: libvipsImage.data.count) }
            let opencv = try openCVSeconds(libvipsImage.data, width: rect.width, height: rect.height, bands: bands)
            let output = SampleBuffer<UInt8>(rect: rect, channels: bands)
            for (i, s) in sigma.enumerated() {
                let gaussian = GaussianBlur(sigma: s)
                let ours = (0..<max(runs, 1)).map { _ in
                    Self.processorSeconds {
                        gaussian.render(tile: rect, source: source, image: rect, edge: .clamp, into: output)
                    }
                }.sorted()[max(runs, 1) / 2]
                let vips = try LibvipsReference.timeGaussianBlur(libvipsImage, sigma: s, precision: .integer, runs: runs)
                    .sorted()[max(runs, 1) / 2]
                let theirs = opencv.map { ($0.seconds[i], String(format: "%.2f", $0.seconds[i] / ours)) }
                rows.append([
                    String(describing: ParameterValue.number(s)), String(bands), ms(ours), theirs.map { ms($0.0) } ?? "-",
                    theirs?.1 ?? "-", ms(vips), String(format: "%.2f", vips / ours),
                ])
            }
        }
        printTable(header, rows)
    }

    /// The processor time `body` takes, in seconds: this process's, all threads (the kernel
    /// runs on this thread alone), so that other processes on the machine do not count.
    static func processorSeconds(_ body: () -> Void) -> Double {
        var start = timespec(), end = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &start)
        body()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &end)
        return Double(end.tv_sec - start.tv_sec) + Double(end.tv_nsec - start.tv_nsec) / 1e9
    }

    /// What scripts/opencv-bench.py measured on these pixels at each --sigma, or `nil` (with a
    /// line saying why) when OpenCV is left out or cannot run.
    private func openCVSeconds(_ data: [UInt8], width: Int, height: Int, bands: Int) throws
        -> (version: String, seconds: [Double])?
    {
        if skipOpencv { return nil }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../scripts/opencv-bench.py").standardizedFileURL
        let raw = FileManager.default.temporaryDirectory.appendingPathComponent("blurfarm-bench-\(getpid()).raw")
        try Data(data).write(to: raw)
        defer { try? FileManager.default.removeItem(at: raw) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [python, script.path, "--raw", raw.path, "--width", String(width), "--height", String(height),
            "--bands", String(bands), "--runs", String(runs)] + sigma.flatMap { ["--sigma", String($0)] }
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let answer = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        struct Answer: Decodable { let version: String; let seconds: [Double] }
        guard process.terminationStatus == 0, let decoded = try? JSONDecoder().decode(Answer.self, from: answer),
            decoded.seconds.count == sigma.count
        else {
            print("OpenCV left out: \(script.path) failed (exit \(process.terminationStatus)); run scripts/setup.sh")
            return nil
        }
        if bands == 3 { print("OpenCV \(decoded.version)") }
        return (decoded.version, decoded.seconds)
    }
}
