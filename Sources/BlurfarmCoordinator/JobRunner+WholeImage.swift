import BlurfarmState
import BlurfarmCore
import BlurfarmEngine
import BlurfarmImageIO
import BlurfarmKernels
import BlurfarmManifest
import BlurfarmSystem
import Foundation

/// The whole-image path of ``JobRunner``: an input small enough for one core is one task of
/// the worker pool. A worker decodes it (reading the descriptor this process opened beneath
/// the job's roots), renders every output's chain and encodes every output in memory; this
/// process keeps the plan, the scheduling, the records and the atomic writes. While one worker
/// decodes and encodes an image, the others do the same with theirs: every core runs codecs
/// as well as filters, and no pixel crosses a process boundary (docs/pool.md, "Whole
/// images or tiles").
extension JobRunner {
    /// The input's size when its outputs go to one of the rendering's `workers` as whole-image tasks, else
    /// nil. They go, all of them, when their filters are all built in (a plugin's failure is a tile's),
    /// the input's header reads, it has at most ``wholeImagePixels`` pixels
    /// (`whole-image-pixels`) and its decode fits a worker's share of the memory limit, and the
    /// input is in a full round of the job's `inputs` (``inFullRound(waiting:inputs:workers:)``,
    /// `waiting` inputs left with this one: while it is made, the other workers have images of
    /// their own) or every output is at most half the input's width (``shrinksByHalf(_:_:)``: a
    /// thumbnail's decode is its work, on one core wherever it runs): each worker then decodes,
    /// filters and encodes images of its own, every core running codecs, and no pixel crosses a
    /// process boundary (a task whose outputs can all be streamed, the worker makes band by
    /// band). Else the image is made here: band by band with its tiles spread over the workers,
    /// or decoded whole.
    func wholeImage(
        _ input: PlannedInput, workers: Int, waiting: Int, inputs: Int, verify: VerifyMode
    ) -> Rect? {
        guard wholeImagePixels > 0, verify != .untiled, !input.outputs.isEmpty,
            input.outputs.allSatisfy({ output in
                output.variant.filters.allSatisfy { registry.descriptor(named: $0.name)?.isPlugin == false }
            }),
            let header = try? ImageReader.header(ofFile: input.path, confinement: confinement)
        else { return nil }
        let image = Rect(width: header.width, height: header.height)
        guard image.area <= wholeImagePixels, let memory = header.decodeMemory, memory <= memoryLimit / workers,
            Self.inFullRound(waiting: waiting, inputs: inputs, workers: workers)
                || input.outputs.allSatisfy({ Self.shrinksByHalf($0.decodeResize, image) })
        else { return nil }
        return image
    }

    /// Whether the input with `waiting` inputs left (itself included) of a job's `inputs` is in
    /// a full round of whole-image tasks: the job's inputs, handed out in order, fill the
    /// `workers` round after round, and only a last round of `inputs % workers` inputs leaves
    /// workers with nothing to do while its images are made. Those are spread over the
    /// workers (a lone input too, with two workers or more); every other input goes whole, the
    /// last of a batch that fills its rounds included (48 × 1080p σ2: giving the last image to a
    /// worker took 0.982× the time of spreading it, decoded and encoded here while both workers
    /// still made images of their own; 12 × 4K, 0.905×).
    static func inFullRound(waiting: Int, inputs: Int, workers: Int) -> Bool {
        waiting > inputs % max(1, workers)
    }

    /// Whether `resize` makes at most half the width (or, without one, the height) of `image`:
    /// a thumbnail, whose decode is most of its work.
    static func shrinksByHalf(_ resize: ResizeSpec?, _ image: Rect) -> Bool {
        guard let resize else { return false }
        if let width = resize.width { return 2 * width <= image.width }
        if let height = resize.height { return 2 * height <= image.height }
        return false
    }

    /// The pixels a whole image's task reads to make `outputs` of an input covering `image`,
    /// the measure of its work the adaptive task timeout allows time for (``TaskTimeout``): its
    /// decode, taken twice, and each output's filters over the whole of its output, grown by
    /// `edge: grow` (``FilterChain/pixelsRead(for:image:)``), and its encode. Counted on the
    /// input's size, as if decoded whole: a thumbnail's filters read less. (Two decodes and two
    /// encodes an output, blind to the filters, killed a motion blur of radius 2,000 grown from a
    /// 64 × 40 photo after 2.2 s, four times, where it takes 10.)
    static func pixelsRead(of outputs: [PlannedOutput], image: Rect, registry: FilterRegistry) -> Int {
        outputs.reduce(image.area.multipliedReportingOverflow(by: 2).partialValue) { sum, output in
            let chain = chain(of: output, registry: registry)
            let made = chain.outputRect(forImage: image)
            let (filtered, overflow) = chain.pixelsRead(for: made, image: image).addingReportingOverflow(made.area)
            let (total, overflowing) = sum.addingReportingOverflow(filtered)
            return overflow || overflowing ? Int.max : total
        }
    }

    /// Runs the outputs of `input` at `outputs` in the rendering's `workers`, one task per decode
    /// (``PlannedOutput/decodeResize``), and writes what the workers encoded. Returns a report
    /// for each, by index, except those whose file did not fit a message
    /// (``ImageOutputFailure/Kind/tooLarge``): the caller makes them in this process.
    func runWhole(
        _ input: PlannedInput, outputs: [Int], image: Rect, workers: Int, tileSize: Int, verify: VerifyMode,
        control: JobControl, events: @escaping @Sendable (Event) -> Void
    ) -> [Int: OutputReport] {
        var reports: [Int: OutputReport] = [:]
        func finish(_ index: Int, _ report: OutputReport) {
            reports[index] = report
            events(.outputFinished(report))
        }
        func report(_ index: Int, _ failure: OutputFailure, decode: Double = 0, retries: Int = 0) {
            finish(index, .failed(input.outputs[index], of: input, failure, decode: decode, retries: retries))
        }
        let opened: SharedInput
        do throws(ImageIOError) {
            opened = try SharedInput(input.path, confinement: confinement)
        } catch {
            for index in outputs { report(index, .decode(error)) }
            return reports
        }
        var resizes: [ResizeSpec?] = []
        for index in outputs where !resizes.contains(input.outputs[index].decodeResize) {
            resizes.append(input.outputs[index].decodeResize)
        }
        for resize in resizes {
            let indices = outputs.filter { input.outputs[$0].decodeResize == resize }
            control.waitWhilePaused()
            if let ended = control.ended {
                for index in indices { finish(index, .notStarted(input.outputs[index], of: input, ended)) }
                continue
            }
            let (request, widths) = decodeRequest(for: input, resize: resize)
            let task = ImageTask(
                taskID: 0, imageID: 0, attempt: 0,
                input: TaskInput(path: opened.sharedPath, name: input.path, pixelLimit: pixelLimit, memoryLimit: memoryLimit / workers),
                decode: request,
                outputs: indices.map { index in
                    let output = input.outputs[index]
                    return ImageTaskOutput(
                        path: output.path,
                        decoded: widths.isEmpty ? 0 : widths.firstIndex(of: output.variant.resize!.width!)!,
                        filters: output.variant.filters, edge: output.variant.edge, colour: output.variant.colour,
                        regions: output.variant.regions,
                        tileSize: tileSize, encoding: encodeOptions(of: output.variant),
                        verifyDecode: verify == .decode)
                })
            for index in indices { events(.outputStarted(input.outputs[index], tiles: 1)) }
            let ticket = control.ticket()
            let answer: ImageResult, retries: Int
            do throws(RenderFailure) {
                (answer, retries) = try rendering.renderImage(
                    task, image: image, pixelsRead: Self.pixelsRead(of: indices.map { input.outputs[$0] }, image: image, registry: registry),
                    ticket: ticket)
            } catch {
                // Cut short by its job's end (the pool drops its task), or failed every attempt.
                let ended = control.ended ?? (error.reason == .cancelled ? .cancelled : nil)
                for index in indices {
                    report(index, ended ?? .render(output: input.outputs[index].path, error.ofWholeImage), retries: error.retries)
                }
                continue
            }
            let decodeSeconds = Double(answer.decodeNanoseconds) / 1e9
            for (index, outcome) in zip(indices, answer.outputs) {
                let output = input.outputs[index]
                events(.tilesDone(output, done: 1, total: 1))
                switch outcome {
                case .failed(let failure):
                    guard let problem = OutputFailure(failure) else { continue }  // too large: made here
                    report(index, problem, decode: decodeSeconds, retries: retries)
                case .encoded(let encoded):
                    if let mismatch = output.sizeMismatch(width: encoded.width) {
                        report(index, mismatch, decode: decodeSeconds, retries: retries)
                        continue
                    }
                    // A job cancelled (or a run stopped) meanwhile writes nothing more.
                    if let ended = control.ended {
                        report(index, ended, decode: decodeSeconds, retries: retries)
                        continue
                    }
                    let commit: OutputCommit
                    do throws(OutputFailure) {
                        commit = try OutputCommit(output, of: input, confinement: confinement)
                    } catch {
                        report(index, error, decode: decodeSeconds, retries: retries)
                        continue
                    }
                    let clock = ContinuousClock()
                    let start = clock.now
                    do throws(OutputFailure) {
                        try commit.write(unless: control) { () throws(ImageIOError) in
                            try ImageWriter.write(
                                encoded.bytes, to: output.path, temporaryFiles: control.temporaryFiles, confinement: confinement)
                        }
                    } catch {
                        finish(index, commit.failed(error, decode: decodeSeconds, retries: retries))
                        continue
                    }
                    finish(index, commit.written(OutputCommit.Written(
                        width: encoded.width, height: encoded.height, tiles: encoded.tiles,
                        // The tiles the worker copied: those of its grid no region reaches.
                        tilesCopied: encoded.tiles == 0 ? 0 : chain(of: output).copiedTiles(
                            TileGrid(bounds: Rect(width: encoded.width, height: encoded.height), tileSize: tileSize).tiles,
                            image: Rect(width: encoded.width, height: encoded.height)),
                        bands: encoded.bands, decodeSeconds: decodeSeconds,
                        filterSeconds: Double(encoded.filterNanoseconds) / 1e9,
                        encodeSeconds: Double(encoded.encodeNanoseconds) / 1e9 + (clock.now - start).seconds,
                        retries: retries, checksum: encoded.checksum)))
                }
            }
        }
        return reports
    }

    /// How `input` is decoded for the outputs of `resize`, and the widths of the sizes that
    /// decode serves (empty for a single size), always with the largest: a size run alone (the
    /// others up to date) is reduced from it too.
    func decodeRequest(for input: PlannedInput, resize: ResizeSpec?) -> (DecodeRequest, widths: [Int]) {
        let sized = input.outputs.filter { $0.decodeResize == resize && $0.largestSize != nil }
        let widths = Set(sized.compactMap { $0.variant.resize?.width } + sized.compactMap(\.largestSize)).sorted()
        guard let resize else { return (.whole, widths) }
        if !widths.isEmpty { return (.thumbnails(widths: widths, upscale: resize.upscale, sharpen: resize.sharpen), widths) }
        return (
            .thumbnail(
                width: resize.width, height: resize.height, fit: resize.fit, upscale: resize.upscale,
                crop: resize.crop, sharpen: resize.sharpen),
            widths
        )
    }
}

extension RenderFailure {
    /// The failure as a whole-image task's: its one "tile" is the image, and the message says so.
    var ofWholeImage: RenderFailure {
        guard case .tileFailed(_, let attempts, _, let last) = reason else { return self }
        return RenderFailure(.imageFailed(attempts: attempts, last: last), retries: retries)
    }

    /// The failure as a detection task's: its one "tile" is the photo searched.
    var ofSearch: RenderFailure {
        guard case .tileFailed(_, let attempts, _, let last) = reason else { return self }
        return RenderFailure(.searchFailed(attempts: attempts, last: last), retries: retries)
    }
}

extension OutputFailure {
    /// What a worker's failure of an output means for its report; nil when the output's file
    /// did not fit a message (it is made in the coordinator instead).
    init?(_ failure: ImageOutputFailure) {
        func error(_ fallback: ImageIOError.Code) -> ImageIOError {
            ImageIOError(
                code: failure.code.flatMap(ImageIOError.Code.init(name:)) ?? fallback, path: failure.path,
                message: failure.message)
        }
        switch failure.kind {
        case .decode: self = .decode(error(.decodeFailed))
        case .plugin: self = .plugin(failure.message)
        case .regions: self = .regions("\(ShownName.of(failure.path ?? "")): \(failure.message)")
        case .verification: self = .verification("\(failure.path ?? ""): \(failure.message)")
        case .encode: self = .write(error(.encodeFailed))
        case .tooLarge: return nil
        }
    }
}

