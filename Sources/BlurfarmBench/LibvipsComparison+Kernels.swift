import BlurfarmCore
import BlurfarmImageIO
import BlurfarmKernels
import Foundation

extension LibvipsComparison {
    /// The gaussian alone, in memory, one thread, on the one image as 8-bit RGB and RGBA (alpha
    /// 255), at each kernel sigma: blurfarm's file-depth gaussian (8-bit in, 8-bit out, one tile,
    /// into an output allocated once) vs a lane at concurrency 1 timing
    /// `gaussblur(sigma, min_ampl=0.011).write_to_memory()`, alternating, and vs OpenCV's
    /// `GaussianBlur` (scripts/opencv-bench.py, same reach, its own runs). Every side in
    /// processor time of its own process, steady on a busy machine.
    ///
    /// - Throws: `BenchError`, or `ImageIOError` when the image cannot be read.
    public func kernels() throws -> [Comparison] {
        let image = try corpus(settings.image)
        let lane = try lanes()[0]
        try lane.setConcurrency(1)
        defer { try? lane.setConcurrency(Machine.cores) }
        let pixels = try ImageReader.read(image).pixels
        let rect = pixels.rect
        let opencv = OpenCVRunner(python: locations.opencvPython, script: locations.scripts + "/opencv-bench.py")
        var rows: [Comparison] = []
        for bands in [3, 4] {
            let eightBit = try LibvipsReference.Image.eightBit(from: pixels, bands: bands)
            let source = SampleBuffer<UInt8>(rect: rect, channels: bands)
            source.withUnsafeSamples { $0.update(from: eightBit.data, count: eightBit.data.count) }
            let output = SampleBuffer<UInt8>(rect: rect, channels: bands)
            var note: String?
            let theirs =
                settings.includeOpenCV
                ? try opencv.measure(
                    eightBit.data, width: rect.width, height: rect.height, bands: bands, sigmas: settings.kernelSigmas,
                    runs: runs, note: &note) : nil
            for (i, sigma) in settings.kernelSigmas.enumerated() {
                let gaussian = GaussianBlur(sigma: sigma)
                var ours: [Double] = [], libvips: [Double] = []
                for _ in 0..<runs {
                    ours.append(
                        BenchStatistics.processorSeconds {
                            gaussian.render(tile: rect, source: source, image: rect, edge: .clamp, into: output)
                        })
                    let answer = try lane.request([
                        "op": "kernel", "file": image, "bands": bands, "sigmas": [sigma], "runs": 1,
                    ])
                    libvips.append((answer["cpu"] as? [Double])?.first ?? 0)
                }
                let label = "\(bands == 3 ? "RGB" : "RGBA") \(Self.label(sigma)), \(rect.width)x\(rect.height)"
                rows.append(
                    Comparison(
                        figure: .kernel, label: label, blurfarmRuns: ours, baselineRuns: libvips,
                        baseline: "libvips \(try libvipsVersion()) gaussblur, concurrency 1"))
                if let theirs {
                    rows.append(
                        Comparison(
                            figure: .kernelOpenCV, label: label, blurfarmRuns: ours, baselineRuns: [theirs.seconds[i]],
                            baseline: "OpenCV \(theirs.version) GaussianBlur, 1 thread"))
                }
            }
        }
        return rows
    }
}
