import BlurfarmCore
import BlurfarmDetection
import BlurfarmEngine
import BlurfarmImageIO
import BlurfarmManifest
import BlurfarmState
import BlurfarmSystem
import Foundation
import Synchronization

/// The step of a run between the up-to-date split and rendering that gives the outputs whose
/// variants detect their regions (`regions: {detect: …}`) the regions of their input's boxes
/// (``RegionDetector``), several inputs at once: searched in the worker processes when the
/// rendering has them (a `detectionTask` each: a detector that crashes takes a worker, not the
/// coordinator, and each worker's network keeps its buffers from photo to photo in its one
/// heap), else in this process. An input whose boxes cannot be had fails:
/// its outputs of those variants are reported failed and left out of the work (nothing is
/// written for them, and the caller withdraws what an earlier run wrote); its other outputs run.
public enum DetectedRegions {
    /// The work with its detecting outputs given their regions, the reports of those that
    /// failed, and their paths.
    public struct Outcome: Sendable {
        public let plan: JobPlan
        public let failed: [OutputReport]
    }

    /// How a farm of `parallelism` (its workers, or its threads) detects `photos` photos: as
    /// many at once as its parallelism, each network on its share of the cores (one, when there
    /// are photos enough). A network's layers wait for each other: on two cores, `blurfarm
    /// bench faces`'s photos took 6.8 s two at a time on a thread each, 7.1 s two at a time on
    /// both threads, 7.8 s one at a time on both (medians of 6, 6 and 2 runs). Each photo at
    /// once holds a network's buffers (about 250 MB a megapixel of a tile): given back when the
    /// step ends, before the rendering.
    public static func split(parallelism: Int, photos: Int) -> (atOnce: Int, threadsEach: Int) {
        let atOnce = max(1, min(parallelism, photos))
        return (atOnce, max(1, parallelism / atOnce))
    }

    /// Resolves every output of `plan` whose variant detects, with `detectors` (by name; every
    /// detector the plan names), in the workers of `rendering` when it has them, else here on
    /// `parallelism` cores, as ``split(parallelism:photos:)`` says; stops starting inputs once
    /// `control` ends (their outputs are reported as it ended), and searches no photo whose
    /// outputs go only to disks the job stopped writing to (``unwritten(_:detector:control:)``).
    /// `cacheProblem` hears of boxes
    /// that could not be cached. `willRead` hears of each input before it is first read, from
    /// the thread that then reads it (``IncrementalRun/willRead(_:)``).
    public static func resolve(
        _ plan: JobPlan, detectors: [String: RegionDetector], rendering: (any ImageRendering)?, parallelism: Int,
        pixelLimit: Int, memoryLimit: Int, confinement: RootConfinement?, control: JobControl,
        cacheProblem: @escaping @Sendable (StateError) -> Void, willRead: @Sendable (PlannedInput) -> Void = { _ in }
    ) -> Outcome {
        let pairs = searches(in: plan)
        guard !pairs.isEmpty else { return Outcome(plan: plan, failed: []) }
        // Largest file first: the last photo a thread takes is a small one, not a large one
        // that runs alone while the other threads have nothing left (0.2 s of 7 in `blurfarm
        // bench faces`, whose photos are named smallest first).
        let sizes = pairs.map { FileStamp.of(plan.inputs[$0.0].path)?.size ?? 0 }
        let detecting = pairs.indices.sorted { sizes[$0] > sizes[$1] || (sizes[$0] == sizes[$1] && $0 < $1) }.map { pairs[$0] }
        let results = Mutex<[Int: [String: Result<Found, OutputFailure>]]>([:])
        let next = Atomic(0)
        // In the workers when the rendering has them (a rendering of this process's threads
        // makes no whole image and searches no photo), each decode with its share of the limit
        // as a whole image's task has; else here, each with the whole limit.
        let workers = rendering?.wholeImageWorkers?.workers
        let (atOnce, threadsEach) = split(parallelism: workers ?? parallelism, photos: detecting.count)
        let search = { @Sendable (detector: RegionDetector) in
            Search(
                detector: detector, rendering: workers == nil ? nil : rendering, threads: threadsEach, pixelLimit: pixelLimit,
                memoryLimit: workers == nil ? memoryLimit : memoryLimit / atOnce, confinement: confinement, control: control)
        }
        DispatchQueue.concurrentPerform(iterations: atOnce) { _ in
            while true {
                let (_, taken) = next.add(1, ordering: .relaxed)
                let position = taken - 1
                guard position < detecting.count else { return }
                let (index, name) = detecting[position]
                let result: Result<Found, OutputFailure>
                if let ended = control.ended ?? unwritten(plan.inputs[index], detector: name, control: control) {
                    result = .failure(ended)
                } else {
                    willRead(plan.inputs[index])
                    result = search(detectors[name]!).boxes(of: plan.inputs[index], cacheProblem: cacheProblem)
                }
                results.withLock { $0[index, default: [:]][name] = result }
            }
        }
        // The networks' buffers go before the rendering starts, and what the allocator kept of them.
        for detector in detectors.values { detector.closeIdleSessions() }
        Syscalls.returnFreedMemory()
        return outcome(plan, results.withLock { $0 })
    }

    /// `.stopped` when no output of `input` that `detector` finds the regions of can be written:
    /// each goes to a disk the job stopped writing to (full, read-only:
    /// ``JobControl/ended(writing:)``), so the photo is not searched (a redaction job of a
    /// million photos on a full disk searched a batch of them after another, for nothing).
    static func unwritten(_ input: PlannedInput, detector: String, control: JobControl) -> OutputFailure? {
        let outputs = input.outputs.lazy.filter { $0.variant.detection?.detector == detector }
        return outputs.allSatisfy { control.ended(writing: $0.path) != nil } ? .stopped : nil
    }

    /// Every output of `plan` whose variant detects failed with `failure`, unsearched (no
    /// worker could start: the photos are not searched in this process instead, where a
    /// detector that crashes would take the run with it).
    public static func unsearched(_ plan: JobPlan, because failure: OutputFailure) -> Outcome {
        var results: [Int: [String: Result<Found, OutputFailure>]] = [:]
        for (index, name) in searches(in: plan) { results[index, default: [:]][name] = .failure(failure) }
        return outcome(plan, results)
    }

    /// Each input of `plan` with each detector its variants name (one detection serves every
    /// variant that names it, whatever its threshold, grow or shape).
    static func searches(in plan: JobPlan) -> [(Int, String)] {
        plan.inputs.indices.flatMap { index in
            Set(plan.inputs[index].outputs.compactMap { $0.variant.detection?.detector }).sorted().map { (index, $0) }
        }
    }

    /// The boxes a detector found in an input, and the stamp of the file they are of.
    struct Found: Sendable {
        let contents: RegionFile.Contents
        let stamp: FileStamp
    }

    /// `plan` with its detecting outputs given the regions of `found`'s boxes (by input index,
    /// then detector), bound to the file they were found in, or failed with why there are none.
    static func outcome(_ plan: JobPlan, _ found: [Int: [String: Result<Found, OutputFailure>]]) -> Outcome {
        var inputs: [PlannedInput] = []
        var failed: [OutputReport] = []
        for (index, input) in plan.inputs.enumerated() {
            guard let results = found[index] else {
                inputs.append(input)
                continue
            }
            var outputs: [PlannedOutput] = []
            for output in input.outputs {
                guard let detection = output.variant.detection, let result = results[detection.detector] else {
                    outputs.append(output)
                    continue
                }
                switch result {
                case .success(let found)
                where found.contents.boxes.count >= RegionFile.maximumBoxes
                    && detection.threshold < found.contents.boxes.compactMap(\.score).min() ?? 1:
                    // More boxes than a region file holds: those scoring less than the last kept are unknown.
                    failed.append(OutputReport(
                        input: input.relativePath, output: output.path, variant: output.variant.name, status: .failed,
                        failure: .regions(
                            "\(input.path): detector '\(detection.detector)' found more than \(RegionFile.maximumBoxes) boxes "
                                + "scoring \(ParameterValue.number(detection.threshold)) or more: a higher threshold, or regions of your own")))
                case .success(let found):
                    outputs.append(output.with(variant: resolved(output.variant, detection, found.contents), regionsOf: found.stamp))
                case .failure(let failure):
                    let status: OutputReport.Status =
                        failure == .stopped ? .stopped : failure == .cancelled ? .cancelled : .failed
                    failed.append(OutputReport(
                        input: input.relativePath, output: output.path, variant: output.variant.name, status: status,
                        failure: failure))
                }
            }
            if !outputs.isEmpty {
                inputs.append(input.with(outputs: outputs, notEnlarged: input.notEnlarged))
            }
        }
        return Outcome(plan: plan.withInputs(PlannedInputs(inputs)), failed: failed)
    }

    /// How one photo is searched: by `detector`, in a worker of `rendering` (nil: in this
    /// process), the network on `threads` threads, its decodes within `pixelLimit` and
    /// `memoryLimit`.
    struct Search {
        let detector: RegionDetector
        let rendering: (any ImageRendering)?
        let threads: Int
        let pixelLimit: Int
        let memoryLimit: Int
        let confinement: RootConfinement?
        let control: JobControl

        /// The boxes `detector` finds in `input`'s image, cached or searched now and cached, with
        /// the stamp of the file they are of; a file that changed meanwhile fails its regions
        /// (not remembered as failed: the next run finds them again).
        func boxes(of input: PlannedInput, cacheProblem: @escaping @Sendable (StateError) -> Void) -> Result<Found, OutputFailure> {
            Result { () throws(OutputFailure) in
                let (stamp, hash) = try RegionDetector.stampAndHash(of: input.path) { OutputFailure.decode($0) }
                let changed = { OutputFailure.regions("\(RegionDetector.changed(input.path))") }
                let contents = try detector.boxes(
                    ofImageAt: input.path, stamp: stamp, contentHash: hash, changed: changed, cacheProblem: cacheProblem
                ) { () throws(OutputFailure) in
                    guard let rendering else {
                        do throws(PhotoSearch.Failure) {
                            return try detector.search(
                                input.path, threads: threads, pixelLimit: pixelLimit, memoryLimit: memoryLimit,
                                confinement: confinement)
                        } catch {
                            throw failure(error, of: input)
                        }
                    }
                    return try inWorker(input, rendering: rendering)
                }
                return Found(contents: contents, stamp: stamp)
            }
        }

        /// `input`'s photo searched in a worker: opened here, beneath the job's roots, and read
        /// there through this process's descriptor, as a whole image's task reads it.
        private func inWorker(_ input: PlannedInput, rendering: any ImageRendering) throws(OutputFailure) -> PhotoSearch.Found {
            let image: Rect, opened: SharedInput
            do throws(ImageIOError) {
                let header = try ImageReader.header(ofFile: input.path, confinement: confinement)
                image = Rect(x: 0, y: 0, width: header.width, height: header.height)
                opened = try SharedInput(input.path, confinement: confinement)
            } catch {
                throw .decode(error)
            }
            let task = DetectionTask(
                taskID: 0, imageID: 0, attempt: 0,
                input: TaskInput(path: opened.sharedPath, name: input.path, pixelLimit: pixelLimit, memoryLimit: memoryLimit),
                detector: detector.detector.name, modelFolder: detector.modelFolder,
                identity: detector.identity, threads: threads, schedule: detector.schedule)
            let answer: DetectionResult
            do throws(RenderFailure) {
                answer = try withExtendedLifetime(opened) { () throws(RenderFailure) in
                    try rendering.detect(task, image: image, ticket: control.ticket()).0
                }
            } catch {
                // Cut short by its job's end (the pool drops its task), or failed every attempt.
                throw control.ended ?? (error.reason == .cancelled ? .cancelled : .regions(
                    "\(input.path): detector '\(detector.detector.name)' could not search it, so nothing of it is written: "
                        + "\(error.ofSearch)"))
            }
            switch answer.outcome {
            case .found(let width, let height, let boxes) where width == image.width && height == image.height:
                return PhotoSearch.Found(width: width, height: height, boxes: boxes)
            case .found(let width, let height, _):
                // The photo changed between its header here and its decode there: its boxes are
                // not cached, and the next run searches it again.
                throw .decode(ImageIOError(
                    code: .fileUnreadable, path: input.path,
                    message: "changed while it was searched (\(image.width) x \(image.height), then \(width) x \(height))"))
            case .failed(let failure) where failure.kind == .decode:
                // A code no reader knows is not taken for the input's own fault (remembered as failed).
                throw .decode(ImageIOError(
                    code: failure.code.flatMap(ImageIOError.Code.init(name:)) ?? .fileUnreadable, path: input.path,
                    message: failure.message))
            case .failed(let failure):
                throw .regions(
                    "\(input.path): detector '\(detector.detector.name)' failed, so nothing of it is written: \(failure.message)")
            }
        }

        /// What a search in this process that failed means for `input`'s outputs.
        private func failure(_ error: PhotoSearch.Failure, of input: PlannedInput) -> OutputFailure {
            switch error {
            case .decode(let error): .decode(error)
            case .detector(let error):
                .regions("\(input.path): detector '\(detector.detector.name)' failed, so nothing of it is written: \(error)")
            }
        }
    }

    /// `variant` with the regions of `contents`' boxes that `detection` keeps: filtered there
    /// (inverted: everywhere else); with no box, its source unfiltered (inverted: filtered
    /// everywhere), as a region file without boxes.
    static func resolved(_ variant: VariantSpec, _ detection: RegionDetection, _ contents: RegionFile.Contents) -> VariantSpec {
        var resolved = variant
        resolved.detection = nil
        let regions = detection.regions(of: contents)
        if regions.isEmpty {
            if !variant.regions.invert { resolved.filters = [] }
            resolved.regions = .everywhere
        } else {
            resolved.regions = RegionMask(regions: regions, invert: variant.regions.invert)
        }
        return resolved
    }
}
