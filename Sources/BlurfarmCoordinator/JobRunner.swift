import BlurfarmCore
import BlurfarmEngine
import BlurfarmImageIO
import BlurfarmKernels
import BlurfarmManifest
import Foundation

/// Runs a planned job: each input is decoded once (once per resize for variants that resize),
/// each variant's chain rendered tile by tile by the rendering strategy (in this process, or in
/// the worker pool), and
/// each output written atomically. An input that cannot be read fails its outputs and the
/// run goes on. The runner holds no global state: create one per run.
public struct JobRunner: Sendable {
    /// The filters the variants name.
    public let registry: FilterRegistry
    /// What renders each image: ``InProcessRendering`` or a ``WorkerPool``.
    public let rendering: any ImageRendering
    /// Largest image, in pixels, that is decoded (checked on the header first).
    public let pixelLimit: Int

    /// A runner rendering with `rendering`.
    public init(registry: FilterRegistry, rendering: any ImageRendering, pixelLimit: Int) {
        self.registry = registry
        self.rendering = rendering
        self.pixelLimit = pixelLimit
    }

    /// Runs `plan`, calling `progress` after each output with its report. `verify` overrides the
    /// job's `verify:` mode.
    public func run(
        _ plan: JobPlan, verify: VerifyMode? = nil, settings: RunSettings, stop: StopRequest = StopRequest(),
        progress: (OutputReport) -> Void = { _ in }
    ) -> RunReport {
        let mode = verify ?? plan.job.verify
        let started = Date()
        var reports: [OutputReport] = []
        for input in plan.inputs {
            var decoded: [ResizeSpec?: Result<(DecodedImage, Double), ImageIOError>] = [:]
            for output in input.outputs {
                if stop.signalNumber != nil {
                    reports.append(OutputReport(
                        input: input.relativePath, output: output.path, variant: output.variant.name, status: .stopped,
                        tiles: 0, pixels: 0, decodeSeconds: 0, filterSeconds: 0, encodeSeconds: 0, error: nil))
                    continue
                }
                let key = output.variant.resize
                if decoded[key] == nil {
                    let clock = ContinuousClock()
                    var result: Result<DecodedImage, ImageIOError> = .failure(
                        ImageIOError(code: .decodeFailed, path: input.path, message: "not decoded"))
                    let time = clock.measure {
                        result = Result { () throws(ImageIOError) -> DecodedImage in
                            if let resize = key {
                                return try ImageReader.thumbnail(
                                    input.path, width: resize.width, height: resize.height, fit: resize.fit.thumbnailFit,
                                    upscale: resize.upscale, pixelLimit: pixelLimit)
                            }
                            return try ImageReader.read(input.path, pixelLimit: pixelLimit)
                        }
                    }
                    decoded[key] = result.map { ($0, time.seconds) }
                }
                let report = render(
                    input: input, output: output, decoded: decoded[key]!, tileSize: plan.tileSize, verify: mode)
                reports.append(report)
                progress(report)
            }
        }
        return RunReport(
            job: plan.job.name, manifest: plan.manifestPath, started: started, finished: Date(), settings: settings,
            outputs: reports)
    }

    /// Renders, verifies and writes one output. Verification (`docs/manifest.md`): `untiled`
    /// renders the image again in one tile and requires the same bits; `decode` and `untiled`
    /// decode the encoded bytes again before anything is written and compare them with the
    /// rendered pixels. `checksum`: the worker pool checks every tile's checksum (always); in
    /// process there is nothing to check. An output that fails verification is not written.
    private func render(
        input: PlannedInput, output: PlannedOutput, decoded: Result<(DecodedImage, Double), ImageIOError>, tileSize: Int,
        verify: VerifyMode
    ) -> OutputReport {
        func failure(_ message: String, decode: Double = 0) -> OutputReport {
            OutputReport(
                input: input.relativePath, output: output.path, variant: output.variant.name, status: .failed, tiles: 0,
                pixels: 0, decodeSeconds: decode, filterSeconds: 0, encodeSeconds: 0, error: message)
        }
        let image: DecodedImage, decodeSeconds: Double
        switch decoded {
        case .failure(let error): return failure(error.description)
        case .success(let (i, s)): (image, decodeSeconds) = (i, s)
        }
        let variant = output.variant
        let chain = FilterChain(
            filters: variant.filters.map { registry.makeFilter($0) }, edge: variant.edge, colour: variant.colour)
        let clock = ContinuousClock()
        var rendered: Result<PixelBuffer, RenderFailure> = .failure(RenderFailure("not rendered"))
        let filterTime = clock.measure {
            rendered = Result { () throws(RenderFailure) -> PixelBuffer in
                try rendering.render(image.pixels, chain: chain, tileSize: tileSize)
            }
        }
        let pixels: PixelBuffer
        switch rendered {
        case .success(let p): pixels = p
        case .failure(let error): return failure("\(output.path): \(error.description)", decode: decodeSeconds)
        }
        if verify == .untiled {
            // Rendered as the tiles were (plugins run in worker processes only), in one tile.
            let whole: PixelBuffer
            do throws(RenderFailure) {
                whole = try rendering.render(image.pixels, chain: chain, tileSize: 0)
            } catch {
                return failure("\(output.path): untiled render for verification: \(error.description)", decode: decodeSeconds)
            }
            if whole.rect != pixels.rect {
                return failure("\(output.path): verification failed: untiled render is \(whole.rect), tiled \(pixels.rect)", decode: decodeSeconds)
            }
            if let d = whole.firstDifference(from: pixels) {
                return failure(
                    "\(output.path): verification failed: tiled and untiled renders differ, first at (\(d.x), \(d.y))",
                    decode: decodeSeconds)
            }
        }
        let folder = (output.path as NSString).deletingLastPathComponent
        do {
            if !folder.isEmpty { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        } catch {
            return failure("\(output.path): cannot create folder '\(folder)': \(error.localizedDescription)", decode: decodeSeconds)
        }
        let options = EncodeOptions(
            quality: variant.quality, lossless: variant.lossless, stripMetadata: variant.strip,
            background: variant.background.rgb)
        var problem: String?
        let encodeTime = clock.measure {
            do throws(ImageIOError) {
                let encoded = try ImageWriter.encode(
                    pixels, for: output.path, sourceBitDepth: image.bitDepth, sourceHadAlpha: image.hasAlpha,
                    metadata: image.metadata, options: options)
                if verify != .checksum, let mismatch = try encoded.mismatch(against: pixels) {
                    problem = "\(output.path): verification failed: \(mismatch)"
                    return
                }
                try ImageWriter.write(encoded)
            } catch {
                problem = error.description
            }
        }
        if let problem { return failure(problem, decode: decodeSeconds) }
        return OutputReport(
            input: input.relativePath, output: output.path, variant: variant.name, status: .written,
            tiles: TileGrid(bounds: chain.outputRect(forImage: image.pixels.rect), tileSize: tileSize).tiles.count, pixels: pixels.rect.area,
            decodeSeconds: decodeSeconds,
            filterSeconds: filterTime.seconds, encodeSeconds: encodeTime.seconds, error: nil)
    }
}

extension Duration {
    /// The duration in seconds.
    public var seconds: Double { Double(components.seconds) + Double(components.attoseconds) * 1e-18 }
}

extension ResizeSpec.Fit {
    /// The image reader's name for the same fit.
    var thumbnailFit: ThumbnailFit {
        switch self {
        case .inside: .inside
        case .cover: .cover
        case .exact: .exact
        }
    }
}

extension HexColour {
    /// The colour as sRGB values 0...1, for flattening onto it.
    var rgb: SIMD3<Float> { SIMD3(Float(red), Float(green), Float(blue)) / 255 }
}
