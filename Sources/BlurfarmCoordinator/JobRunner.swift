import BlurfarmState
import BlurfarmCore
import BlurfarmEngine
import BlurfarmImageIO
import BlurfarmKernels
import BlurfarmManifest
import BlurfarmSystem
import Foundation
import Synchronization

/// Runs a planned job: each input is decoded once (once per resize for variants that resize;
/// once for all the sizes of a variant with `sizes`),
/// each variant's chain rendered tile by tile by the rendering strategy (in this process, or in
/// the worker pool), and each output written atomically. An input that cannot be read fails its
/// outputs and the run goes on. The runner holds no global state: create one per run.
///
/// **Images in flight.** Lanes, each a thread, take the next input and make its outputs: as
/// many as `decodedImages`, or with a worker pool as many as its workers hold tasks (a worker
/// makes a small image whole, decoded and encoded there: a lane waiting for it holds no
/// pixels), whichever is more. At most `decodedImages` inputs are decoded in this process at
/// once (each with its outputs of one resize at a time): the bound on this process's pixel
/// memory, whatever the number of inputs; while one image is decoded or encoded, the tiles of
/// another keep the workers busy.
public struct JobRunner: Sendable {
    /// The filters the variants name.
    public let registry: FilterRegistry
    /// What renders each image: ``InProcessRendering``, or a worker pool (which also makes
    /// whole images: ``ImageRendering/wholeImageWorkers``).
    public let rendering: any ImageRendering
    /// Largest image, in pixels, that is decoded (checked on the header first).
    public let pixelLimit: Int
    /// Inputs decoded, rendered and encoded at once (at least 1).
    public let decodedImages: Int
    /// The most bytes all the decodes in flight may allocate: each decode may use this divided
    /// by ``decodedImages`` (estimated from the header, checked before decoding).
    public let memoryLimit: Int
    /// The most pixels an input may have to be one task of a worker (``wholeImage(_:pool:waiting:inputs:verify:)``);
    /// 0 for never.
    public let wholeImagePixels: Int
    /// The folders inputs must be read and outputs written below, or nil (``FarmJob/confinement``).
    public let confinement: RootConfinement?

    /// A runner rendering with `rendering`, `decodedImages` inputs at a time, whose decodes
    /// share `memoryLimit` bytes (by default all this process may use), sending inputs of at
    /// most `wholeImagePixels` to one worker whole, writing below the roots of `confinement`
    /// when given.
    public init(
        registry: FilterRegistry, rendering: any ImageRendering, pixelLimit: Int, decodedImages: Int = 1,
        memoryLimit: Int = ImageReader.usableMemory, wholeImagePixels: Int = FarmConfiguration.defaultWholeImagePixels,
        confinement: RootConfinement? = nil
    ) {
        precondition(decodedImages >= 1, "at least one image is decoded at a time")
        self.registry = registry
        self.rendering = rendering
        self.pixelLimit = pixelLimit
        self.decodedImages = decodedImages
        self.memoryLimit = memoryLimit
        self.wholeImagePixels = wholeImagePixels
        self.confinement = confinement
    }

    /// What the runner tells as it goes: outputs finished one call at a time, from the image
    /// threads; tile progress as it comes, from the rendering's thread.
    public enum Event: Sendable {
        /// An input is about to be read (decoded here, or sent to a worker), from the thread
        /// that reads it, which waits for this call: the last moment to fingerprint it
        /// (``IncrementalRun/willRead(_:)``).
        case inputRead(PlannedInput)
        /// An output's rendering begins: its input is decoded, its tiles are about to go out.
        case outputStarted(PlannedOutput, tiles: Int)
        /// Tiles of the output done so far.
        case tilesDone(PlannedOutput, done: Int, total: Int)
        /// The output is done: written, failed, stopped or cancelled.
        case outputFinished(OutputReport)
    }

    /// Runs `plan` under `control` (stopped, cancelled, paused, its place in the pool's
    /// queue), telling `events` as it goes. `verify` overrides the job's `verify:` mode. Returns
    /// every output's report in the plan's order, whatever order the outputs finished in: those
    /// not started too (``OutputReport/notStarted``), which a run's report counts and does not list.
    /// `plan` may be a batch of a job's work, with `around` of the job's inputs before and after
    /// it (``IncrementalRun/Batch``); `removingAbandoned`: whether the temporary files an earlier
    /// run killed outright left beside its outputs are removed first (``removeAbandonedFiles(of:)``:
    /// a batch's were, with its job's).
    public func run(
        _ plan: JobPlan, verify: VerifyMode? = nil, control: JobControl = JobControl(),
        around: (before: Int, after: Int) = (0, 0), removingAbandoned: Bool = true,
        events: @escaping @Sendable (Event) -> Void = { _ in }
    ) -> [OutputReport] {
        let mode = verify ?? plan.job.verify
        if removingAbandoned { Self.removeAbandonedFiles(of: plan) }
        let inputs = plan.inputs
        let next = Atomic<Int>(0)
        // Decodes in this process: at most `decodedImages` at once, whatever the lanes.
        let decodes = DispatchSemaphore(value: decodedImages)
        let results = Mutex([[OutputReport]](repeating: [], count: inputs.count))
        let reporting = Mutex(())
        let lane: @Sendable () -> Void = {
            while true {
                let index = next.add(1, ordering: .relaxed).oldValue
                guard index < inputs.count else { return }
                let reports = run(
                    inputs[index], waiting: inputs.count - index + around.after, inputs: around.before + inputs.count + around.after,
                    decodes: decodes, tileSize: plan.tileSize, verify: mode,
                    control: control
                ) { event in
                    // Tile progress comes from the pool's thread: never held up behind an
                    // output's report (which records it, a write to the state folder).
                    if case .outputFinished = event {
                        reporting.withLock { _ in events(event) }
                    } else {
                        events(event)
                    }
                }
                results.withLock { $0[index] = reports }
            }
        }
        // With workers, a lane per task the workers can hold: a lane waiting for a whole-image
        // task holds no pixels.
        let pool = rendering.wholeImageWorkers.map { $0.workers * $0.tasksHeld } ?? 0
        let lanes = min(max(decodedImages, pool), inputs.count)
        // This thread is one lane; a lane the system refuses a thread leaves its inputs to the
        // others.
        let group = DispatchGroup()
        for _ in 1..<max(1, lanes) {
            group.enter()
            do throws(Threads.StartFailure) {
                try Threads.start(stackSize: 8 << 20) {
                    lane()
                    group.leave()
                }
            } catch {
                group.leave()
                break
            }
        }
        lane()
        group.wait()
        return results.withLock { results in
            // In one allocation of their number: grown by doubling, it held twice the reports.
            var all: [OutputReport] = []
            all.reserveCapacity(results.reduce(0) { $0 + $1.count })
            for reports in results { all += reports }
            return all
        }
    }

    /// Removes the temporary files that an earlier run killed outright left beside the
    /// outputs of `plan`, not written for `minimumAge` seconds
    /// (``ImageWriter/removeAbandonedTemporaryFiles(inFolder:minimumAge:)``), a listing of each
    /// of their folders.
    public static func removeAbandonedFiles(of plan: JobPlan, minimumAge: Double = 600) {
        for folder in outputFolders(of: plan) { ImageWriter.removeAbandonedTemporaryFiles(inFolder: folder, minimumAge: minimumAge) }
    }

    /// The folders of `plan`'s outputs, each once (`.` for none), by their bytes (`é` and `e`
    /// with a combining accent are two folders, which one set of strings took for one): read
    /// from the prefixes the outputs of a folder share (``PlannedInputs/forEachOutputPrefix(_:)``),
    /// each once, not from every output's path (a million outputs in a few folders made a
    /// million strings, 79 MB; made and read in place, 5% of a million's first run before its
    /// first output).
    static func outputFolders(of plan: JobPlan) -> [String] {
        var (read, seen, folders): (Set<ObjectIdentifier>, Set<[UInt8]>, [String]) = ([], [], [])
        plan.inputs.forEachOutputPrefix { prefix in
            guard read.insert(ObjectIdentifier(prefix)).inserted else { return }
            let folder = prefix.folder
            if seen.insert(Array(folder.utf8)).inserted { folders.append(folder) }
        }
        return folders
    }

    /// Runs the outputs of one input, those of one decode after another so that one decoded
    /// image (or one set of sizes) at a time is held, and returns their reports in the plan's
    /// order.
    /// The outputs go to one worker per decode when they should
    /// (``wholeImage(_:pool:waiting:inputs:verify:)``, `waiting` inputs of the job's `inputs` left with this one); else,
    /// and those too large for a worker's answer, they are made here (one of `decodes` at a
    /// time).
    private func run(
        _ input: PlannedInput, waiting: Int, inputs: Int, decodes: DispatchSemaphore, tileSize: Int, verify: VerifyMode,
        control: JobControl, events: @escaping @Sendable (Event) -> Void
    ) -> [OutputReport] {
        var reports = [OutputReport?](repeating: nil, count: input.outputs.count)
        control.waitWhilePaused()
        // The outputs of a job that ended, or on a disk found full or read-only, are not made
        // (``JobControl/stopWriting(at:)``); an input with none left is not read.
        for (index, output) in input.outputs.enumerated() {
            guard let stopped = control.ended(writing: output.path) else { continue }
            reports[index] = .notStarted(output, of: input, stopped)
            events(.outputFinished(reports[index]!))
        }
        if !reports.contains(where: { $0 == nil }) { return reports.map { $0! } }
        if control.ended == nil { events(.inputRead(input)) }
        if let workers = rendering.wholeImageWorkers?.workers, control.ended == nil,
            let image = wholeImage(input, workers: workers, waiting: waiting, inputs: inputs, verify: verify)
        {
            for (index, report) in runWhole(
                input, outputs: input.outputs.indices.filter { reports[$0] == nil }, image: image, workers: workers,
                tileSize: tileSize, verify: verify, control: control, events: events)
            {
                reports[index] = report
            }
            if !reports.contains(where: { $0 == nil }) { return reports.map { $0! } }
        }
        decodes.wait()
        defer { decodes.signal() }
        // The outputs that can be made band by band first, from one decode stream.
        let streamable = input.outputs.indices.filter {
            reports[$0] == nil && Self.canStream(input.outputs[$0], verify: verify, registry: registry)
        }
        if !streamable.isEmpty, control.ended == nil {
            for (index, streamed) in stream(input, indices: streamable, tileSize: tileSize, control: control, events: events)
                .sorted(by: { $0.key < $1.key })
            {
                var report = streamed
                if report.status == .failed, let ended = control.ended {
                    // Cut short while it was rendered: the pool drops its tiles.
                    report = .failed(input.outputs[index], of: input, ended)
                }
                reports[index] = report
                events(.outputFinished(report))
            }
        }
        var resizes: [ResizeSpec?] = []
        for (index, output) in input.outputs.enumerated() where reports[index] == nil && !resizes.contains(output.decodeResize) {
            resizes.append(output.decodeResize)
        }
        for resize in resizes {
            let (request, widths) = decodeRequest(for: input, resize: resize)
            var decoded: Result<([DecodedImage], Double), ImageIOError>?
            // Outputs that differ only in their encoding (the formats of a variant) share one render.
            var renders = SharedRenders<VariantSpec.RenderKey, RenderedImage>(keys: input.outputs.indices.compactMap { index in
                let output = input.outputs[index]
                return output.decodeResize == resize && reports[index] == nil ? output.variant.renderKey : nil
            })
            for (index, output) in input.outputs.enumerated() where output.decodeResize == resize && reports[index] == nil {
                control.waitWhilePaused()
                if let ended = control.ended(writing: output.path) {
                    let report = OutputReport.notStarted(output, of: input, ended)
                    reports[index] = report
                    events(.outputFinished(report))
                    continue
                }
                if decoded == nil { decoded = decode(input, request) }
                let image = decoded!.map { images, seconds in
                    (widths.isEmpty ? images[0] : images[widths.firstIndex(of: output.variant.resize!.width!)!], seconds)
                }
                var report = render(
                    input: input, output: output, decoded: image, tileSize: tileSize, verify: verify, control: control,
                    renders: &renders, events: events)
                if report.status == .failed, let ended = control.ended {
                    // Cut short while it was rendered: the pool drops its tiles.
                    report = .failed(output, of: input, ended)
                }
                reports[index] = report
                events(.outputFinished(report))
            }
        }
        return reports.map { $0! }
    }

    /// The input decoded as `request` asks (shrunk on load for a resize; at several widths,
    /// from one decode, for the sizes of a variant), and the seconds it took.
    private func decode(_ input: PlannedInput, _ request: DecodeRequest) -> Result<([DecodedImage], Double), ImageIOError> {
        let clock = ContinuousClock()
        let start = clock.now
        let result = Result { () throws(ImageIOError) -> [DecodedImage] in
            try ImageReader.decode(
                input.path, request, pixelLimit: pixelLimit, memoryLimit: memoryLimit / decodedImages,
                allocator: rendering.allocator, confinement: confinement)
        }
        return result.map { ($0, (clock.now - start).seconds) }
    }

    /// Renders, verifies and writes one output. Verification (`docs/manifest.md`): `untiled`
    /// renders the image again in one tile and requires the same bits; `decode` and `untiled`
    /// decode the encoded bytes again before anything is written and compare them with the
    /// rendered pixels. `checksum`: the worker pool checks every tile's checksum (always); in
    /// process there is nothing to check. An output that fails verification is not written.
    private func render(
        input: PlannedInput, output: PlannedOutput, decoded: Result<(DecodedImage, Double), ImageIOError>, tileSize: Int,
        verify: VerifyMode, control: JobControl, renders: inout SharedRenders<VariantSpec.RenderKey, RenderedImage>,
        events: @escaping @Sendable (Event) -> Void
    ) -> OutputReport {
        func failure(_ failure: OutputFailure, decode: Double = 0, retries: Int = 0) -> OutputReport {
            .failed(output, of: input, failure, decode: decode, retries: retries)
        }
        let image: DecodedImage, decodeSeconds: Double
        switch decoded {
        case .failure(let error): return failure(.decode(error))
        case .success(let (i, s)): (image, decodeSeconds) = (i, s)
        }
        if let mismatch = output.sizeMismatch(width: image.pixels.rect.width) {
            return failure(mismatch, decode: decodeSeconds)
        }
        let variant = output.variant
        let chain = chain(of: output)
        // A plugin's answers are checked before any rectangle is used, and so is the size of
        // the output they make.
        if let problem = chain.problem(forImage: image.pixels.rect) {
            return failure(.plugin(problem.message), decode: decodeSeconds)
        }
        if let problem = chain.regionProblem(forImage: image.pixels.rect) {
            return failure(.regions("\(ShownName.of(output.path)): \(problem)"), decode: decodeSeconds)
        }
        let outputRect = chain.outputRect(forImage: image.pixels.rect)
        if outputRect.area > pixelLimit {
            let plugins = chain.filters.filter { $0.origin != .builtIn }.map { "plugin '\($0.spec.name)'" }
            let by = plugins.isEmpty ? "" : " (the chain runs \(plugins.joined(separator: ", ")))"
            return failure(.plugin(
                "the filters' output would be \(outputRect.width)x\(outputRect.height) pixels, more than the pixel "
                    + "limit of \(pixelLimit)\(by)"), decode: decodeSeconds)
        }
        let clock = ContinuousClock()
        let options = encodeOptions(of: variant)
        var rendered: Result<RenderedImage, RenderFailure>?
        // A variant without filters (a thumbnail) whose chain keeps the channels is the decoded
        // image itself: the chain would copy it, tile by tile, to the same bits.
        let identity = chain.isIdentity(forSource: image.pixels.channels)
        let key = variant.renderKey
        let shared = renders.render(for: key)
        // Tiles rendered for this output: none when it shares another's render.
        let tiles = identity || shared != nil ? [] : TileGrid(bounds: outputRect, tileSize: tileSize).tiles
        let tileCount = tiles.count
        events(.outputStarted(output, tiles: tileCount))
        let ticket = control.ticket { done, total in events(.tilesDone(output, done: done, total: total)) }
        let filterTime = clock.measure {
            rendered = Result { () throws(RenderFailure) -> RenderedImage in
                if identity { return RenderedImage(pixels: image.pixels) }
                if let shared { return RenderedImage(pixels: shared.pixels) }
                return try rendering.render(
                    image.pixels, sourceBitDepth: image.bitDepth, outputBitDepth: options.bitDepth, chain: chain,
                    tileSize: tileSize, ticket: ticket)
            }
        }
        if case .success(let r) = rendered!, !identity { renders.done(key, render: r) } else { renders.done(key, render: nil) }
        let pixels: PixelBuffer, retries: Int
        switch rendered! {
        case .success(let r): (pixels, retries) = (r.pixels, r.retries)
        case .failure(let error):
            return failure(.render(output: output.path, error), decode: decodeSeconds, retries: error.retries)
        }
        func failed(_ problem: OutputFailure) -> OutputReport { failure(problem, decode: decodeSeconds, retries: retries) }
        if verify == .untiled {
            // In one tile, here in the coordinator; a chain with a plugin in one task of the
            // rendering, as plugins run in worker processes only.
            let plugins = chain.filters.contains { $0.origin != .builtIn }
            let untiled: any ImageRendering = plugins ? rendering : InProcessRendering(executor: ThreadedTileExecutor(threads: 1))
            let whole: PixelBuffer
            do throws(RenderFailure) {
                whole = try untiled.render(
                    image.pixels, sourceBitDepth: image.bitDepth, outputBitDepth: options.bitDepth, chain: chain,
                    tileSize: 0, ticket: control.ticket()
                ).pixels
            } catch {
                return failed(.verification("\(output.path): untiled render for verification: \(error.description)"))
            }
            if whole.rect != pixels.rect {
                return failed(.verification(
                    "\(output.path): verification failed: untiled render is \(whole.rect), tiled \(pixels.rect)"))
            }
            if let d = whole.firstDifference(from: pixels) {
                return failed(.verification(
                    "\(output.path): verification failed: tiled and untiled renders differ, first at (\(d.x), \(d.y))"))
            }
        }
        let commit: OutputCommit
        do throws(OutputFailure) {
            commit = try OutputCommit(output, of: input, confinement: confinement)
        } catch {
            return failed(error)
        }
        var problem: OutputFailure?
        var checksum: UInt64 = 0
        let encodeTime = clock.measure {
            do throws(ImageIOError) {
                let encoded = try ImageWriter.encode(
                    pixels, for: output.path, sourceBitDepth: image.bitDepth, sourceHadAlpha: image.hasAlpha,
                    metadata: image.metadata, options: options)
                if verify != .checksum, let mismatch = try encoded.mismatch(against: pixels) {
                    problem = .verification("\(output.path): verification failed: \(mismatch)")
                    return
                }
                do throws(OutputFailure) {
                    try commit.write(unless: control) { () throws(ImageIOError) in
                        try ImageWriter.write(encoded, temporaryFiles: control.temporaryFiles, confinement: confinement)
                    }
                    checksum = encoded.checksum
                } catch {
                    problem = error
                }
            } catch {
                problem = .write(error)
            }
        }
        if let problem { return commit.failed(problem, decode: decodeSeconds, retries: retries) }
        return commit.written(OutputCommit.Written(
            width: pixels.rect.width, height: pixels.rect.height, tiles: tileCount,
            tilesCopied: chain.copiedTiles(tiles, image: image.pixels.rect), decodeSeconds: decodeSeconds,
            filterSeconds: filterTime.seconds, encodeSeconds: encodeTime.seconds, retries: retries, checksum: checksum))
    }
}

extension RGBAColour {
    /// The colour as sRGB values 0...1, for flattening onto it.
    var rgb: SIMD3<Float> { SIMD3(Float(red), Float(green), Float(blue)) / 255 }
}
