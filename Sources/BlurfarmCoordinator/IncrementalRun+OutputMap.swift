import BlurfarmState
import BlurfarmSystem
import BlurfarmCore
import BlurfarmImageIO
import Foundation
import Synchronization

extension IncrementalRun {
    /// What ``writeMap(to:plan:published:changedOutputs:limits:confinement:control:)`` did.
    public struct MapResult: Sendable {
        /// Whether the file was written; false when it held these bytes already, or the job was
        /// stopped or cancelled before it was (the map is left as it was).
        public var written: Bool
        /// The inputs (absolute paths) whose placeholder could not be made, and why: listed
        /// without one.
        public var missingPlaceholders: [(input: String, reason: String)]
    }

    /// Why the output map was not written.
    public struct MapFailure: Error, Sendable, CustomStringConvertible {
        public let path: String
        public let message: String
        public var description: String { "\(ShownName.of(path)): \(message)" }
    }

    /// Why the output map must stay as it is after this run, or nil when it may be written:
    /// inputs that vanish with their folder (an unmounted disk), behind a glob that suddenly
    /// matches nothing, or behind a folder that could not be read, are not gone, and a site
    /// build must not publish a map without them. The same signs as ``pruneRefusal(_:)``'s, and
    /// `--force-prune` overrides both: the inputs are really gone.
    public func mapRefusal() -> String? {
        switch pruneRefusal(orphans()) {
        case .folderMissing(let folder, let glob, let outputs)?:
            return "input folder '\(ShownName.of(folder))' of '\(ShownName.of(glob))' is missing (\(counted(outputs, "recorded output")) would leave the map)"
        case .globEmpty(let glob, let outputs)?:
            return "input glob '\(ShownName.of(glob))' matches no file (\(counted(outputs, "recorded output")) would leave the map)"
        case .tooMany?, nil: break
        }
        // An input left out for its regions was seen: it failed, and leaves the map.
        let failed = Set(regionFailedInputs.map { RealPath.Identity.Bytes(absolute($0)) })
        if !plan.refused.isEmpty, case let planned = plannedPaths,
            let unseen = firstRecord(where: { !planned.reads($0.input) && !failed.contains(.init($0.input)) })
        {
            return "the inputs could not all be read (\(plan.refused[0])), and '\(ShownName.of(unseen.input))' was not seen"
        }
        return nil
    }

    /// The first record, in the table's order, that `matches`: read `page` at a time, not
    /// whole; nil when none does or the records cannot be read.
    func firstRecord(page size: Int = ShardRecords.mergePage, where matches: (OutputRecord) -> Bool) -> OutputRecord? {
        var last: (input: String, output: String)?
        while let page = try? records.page(after: last, limit: size), let end = page.last {
            if let found = page.first(where: matches) { return found }
            last = (end.input, end.output)
        }
        return nil
    }

    /// Writes the output map (``OutputMap``) of the job planned as `full` to `path` (relative
    /// to the working directory), after the run that wrote or found up to date the outputs
    /// `published` (by their places in `full`): every one of them recorded and on
    /// disk, with its size from the records (or its header, for records older than that) and
    /// its bytes too (the file's: the run found its stamp the record's, or recorded it as it
    /// wrote it: one `stat` an output in a run, the plan's). Failed,
    /// stopped and pruned outputs are not in it. The placeholder of an input is taken from the
    /// records when it was made from the same bytes (``InputPlaceholder``), else made now
    /// (at most `limits.decodes` inputs at once, sharing `limits.memory`) and recorded;
    /// placeholders of inputs no record names any more are forgotten. The file is written
    /// atomically (its temporary file in `control`'s), and only when its bytes change; its
    /// folders are made when missing, as an output's are (``CreatedFolder``). When the file is
    /// the one the last run left (``OutputMapStamp``) and the run `changedOutputs` not (it wrote,
    /// failed or pruned none), the map is left as it is when the plan's digest is the one kept
    /// and the records have not changed since (``OutputMapStamp/plan``); otherwise the entries
    /// are hashed first (``OutputMapDigest``), and encoded only when their digest is another;
    /// after a run that changed outputs they are encoded at
    /// once (the map most likely changed with them, and hashing first would be a pass lost:
    /// 3 s at 100,000 inputs). A job `control`
    /// stops or cancels meanwhile makes no more placeholders and leaves the map as it was.
    /// - Throws: ``MapFailure`` when the map cannot be encoded or written (nothing changed
    ///   then), or the records cannot be.
    package func writeMap(
        to path: String, plan full: JobPlan, published: PublishedOutputs, changedOutputs: Bool,
        limits: (pixels: Int, memory: Int, decodes: Int), confinement: RootConfinement?, control: JobControl
    ) throws(MapFailure) -> MapResult {
        let key = absolute(path)
        func digest() throws(MapFailure) -> OutputMapDigest {
            do {
                return try OutputMapDigest(job: full.job.name)
            } catch {
                throw MapFailure(path: path, message: "cannot encode the map: \(error)")
            }
        }
        // The plan's digest (``OutputMapDigest/plan(of:published:mapPath:versions:absolute:)``), made once.
        var planned: String?
        func plan() throws(MapFailure) -> String {
            if let planned { return planned }
            do {
                let made = try OutputMapDigest.plan(
                    of: full, published: published, mapPath: key, versions: versions.text) { absolute($0) }
                planned = made
                return made
            } catch {
                throw MapFailure(path: path, message: "cannot encode the map: \(error)")
            }
        }
        /// Its stamp kept, with the plan's digest when the entries had no `gaps` (the next run
        /// tries those again), or a failure naming the records.
        func keep(_ digest: OutputMapDigest, _ gaps: Gaps) throws(MapFailure) {
            guard let file = OutputMapText.stamp(ofFileAt: path, confinement: confinement) else { return }
            let stamp = OutputMapStamp(digest: digest.digest(), file: file, plan: gaps.isEmpty ? try plan() : nil)
            do throws(StateError) {
                try records.keep(stamp, at: key)
            } catch {
                throw MapFailure(path: path, message: "cannot record the map's stamp: \(error)")
            }
        }
        func forgetPlaceholders() throws(MapFailure) {
            do throws(StateError) {
                try records.forgetPlaceholdersOfInputsNotRecorded()
            } catch {
                throw MapFailure(path: path, message: "cannot record a placeholder: \(error)")
            }
        }
        var failed: [RealPath.Identity.Bytes: String] = [:]
        // The file the last run left, after a run that changed no output: its entries hashed,
        // and left as it is when they are the same.
        if !changedOutputs, let kept = records.mapStamp(at: key),
            OutputMapText.stamp(ofFileAt: path, confinement: confinement) == kept.file
        {
            // The records as they were when the map was made, and the same plan: the same
            // entries, neither looked up nor hashed (they had no gaps then, and no placeholder
            // is forgotten now: no output's record went since the last were).
            if let keptPlan = kept.plan, try keptPlan == plan() {
                return MapResult(written: false, missingPlaceholders: [])
            }
            let hashed = try digest()
            let gaps = try entries(
                of: full, published: published, mapPath: path, limits: limits, confinement: confinement, control: control,
                failed: [:]
            ) { input throws(MapFailure) in hashed.add(input) }
            if control.ended != nil { return MapResult(written: false, missingPlaceholders: gaps.missing) }
            if hashed.digest() == kept.digest {
                try forgetPlaceholders()
                // The records or the plan moved, not the entries: the stamp kept with them now.
                if gaps.isEmpty { try keep(hashed, gaps) }
                return MapResult(written: false, missingPlaceholders: gaps.missing)
            }
            for (input, reason) in gaps.missing { failed[.init(input)] = reason }
        }
        let text: OutputMapText
        do {
            text = try OutputMapText(
                job: full.job.name, comparedWith: path, confinement: confinement, keptIn: PathName.folder(of: records.path))
        } catch {
            throw MapFailure(path: path, message: "cannot encode the map: \(error)")
        }
        let hashed = try digest()
        let gaps = try entries(
            of: full, published: published, mapPath: path, limits: limits, confinement: confinement, control: control,
            failed: failed
        ) { input throws(MapFailure) in
            do {
                try text.add(input)
            } catch {
                throw MapFailure(path: path, message: "cannot encode the map: \(error)")
            }
            hashed.add(input)
        }
        if control.ended != nil { return MapResult(written: false, missingPlaceholders: gaps.missing) }
        try forgetPlaceholders()
        if text.finish() {
            try keep(hashed, gaps)
            return MapResult(written: false, missingPlaceholders: gaps.missing)
        }
        let folder = PathName.folder(of: path)
        do throws(StateError) {
            // Made as an output's folders are (beneath the roots, with `confinement`), and recorded.
            for created in try CreatedFolder.make(folder.isEmpty ? "." : folder, confinement: confinement) {
                try records.add(created)
            }
        } catch {
            throw MapFailure(path: path, message: "\(error)")
        }
        do {
            try ImageWriter.write(
                to: path, temporaryFiles: control.temporaryFiles, confinement: confinement, parts: text.parts(path: path))
        } catch {
            throw MapFailure(path: path, message: error.message)
        }
        try keep(hashed, gaps)
        return MapResult(written: true, missingPlaceholders: gaps.missing)
    }

    /// What ``entries(of:published:mapPath:limits:confinement:control:failed:each:)`` could not
    /// give in full, which a later run tries again: the inputs whose placeholder could not be
    /// made (and why), and whether a published output was left out because its size could not
    /// be read from its header. A map with gaps keeps no plan (``OutputMapStamp/plan``).
    private struct Gaps {
        var missing: [(input: String, reason: String)] = []
        var unsized = false
        var isEmpty: Bool { missing.isEmpty && !unsized }
    }

    /// The map's entries of the job planned as `full` (``writeMap(to:plan:published:changedOutputs:limits:confinement:control:)``),
    /// each given to `each` in order, a batch of inputs at a time: their records looked up
    /// together, as a run looks them up, their placeholders read or made (not those of
    /// `failed`, which failed already, by input, with why), and the gaps left (``Gaps``). Stops
    /// after the batch in which `control` ends.
    private func entries(
        of full: JobPlan, published: PublishedOutputs, mapPath path: String, limits: (pixels: Int, memory: Int, decodes: Int),
        confinement: RootConfinement?, control: JobControl, failed: [RealPath.Identity.Bytes: String],
        each: (OutputMap.Input) throws(MapFailure) -> Void
    ) throws(MapFailure) -> Gaps {
        let relative = OutputMap.RelativePaths(from: PathName.folder(of: absolute(path)))
        var gaps = Gaps()
        var place = 0
        for first in stride(from: 0, to: full.inputs.count, by: Self.lookupBatch) {
            let batch = Array(full.inputs[first..<min(first + Self.lookupBatch, full.inputs.count)])
            // Records that cannot be read fail the map: it would leave their outputs out.
            let found: OutputRecords.Contents
            do throws(StateError) {
                found = try records.lookUp(recordsOf: batch.map { absolute($0.path) }, failures: false)
            } catch {
                throw MapFailure(path: error.path, message: error.message)
            }
            var inputs: [(absolute: String, entry: OutputMap.Input, inputHash: String)] = []
            for input in batch {
                var outputs: [OutputMap.Output] = []
                var inputHash: String?
                for output in input.outputs {
                    place += 1
                    guard published.contains(place - 1) else { continue }
                    let outputPath = absolute(output.path)
                    guard let record = found.records[.init(outputPath)],
                        let format = ImageFormat(extension: PathName.pathExtension(of: outputPath))
                    else { continue }
                    var size = record.width.flatMap { width in record.height.map { (width, $0) } }
                    if size == nil, let header = try? ImageReader.header(ofFile: outputPath, confinement: confinement) {
                        size = (header.width, header.height)
                        // A record older than the sizes gets them, so the next run need not read the file.
                        var completed = record
                        (completed.width, completed.height) = (header.width, header.height)
                        try? records.add(completed)
                    }
                    guard let (width, height) = size else {
                        gaps.unsized = true
                        continue
                    }
                    inputHash = inputHash ?? record.inputFile.hash
                    outputs.append(OutputMap.Output(
                        path: relative.relative(outputPath), format: format.mapName, width: width,
                        height: height, bytes: Int(record.outputFile.stamp.size), variant: output.variant.name, size: output.size))
                }
                guard let inputHash, !outputs.isEmpty else { continue }
                let inputPath = absolute(input.path)
                inputs.append((
                    inputPath,
                    OutputMap.Input(
                        path: relative.relative(inputPath), width: nil, height: nil, placeholder: nil,
                        outputs: outputs),
                    inputHash
                ))
            }
            let (placeholders, unmade) = try placeholders(
                of: inputs.map { ($0.absolute, $0.inputHash) }, limits: limits, confinement: confinement, control: control,
                mapPath: path, failed: failed)
            gaps.missing += unmade
            if control.ended != nil { return gaps }
            for input in inputs {
                var entry = input.entry
                if let placeholder = placeholders[.init(input.absolute)] {
                    entry.width = placeholder.width
                    entry.height = placeholder.height
                    entry.placeholder = OutputMap.Placeholder(thumbHash: placeholder.thumbHash, dataURI: placeholder.dataURI)
                }
                try each(entry)
            }
        }
        return gaps
    }

    /// The placeholders of `inputs` (absolute path, hash of the bytes the outputs were made
    /// from), by input (by its bytes: twin names have a placeholder each): the recorded ones
    /// still good, the others made now, `limits.decodes` at once (each with its share of
    /// `limits.memory`), none once `control` has ended, and recorded (the map's batch of inputs;
    /// the placeholders of inputs no output record names are forgotten after the last); those
    /// of `failed` (by input, with why) are not made again, and are missing.
    private func placeholders(
        of inputs: [(path: String, hash: String)], limits: (pixels: Int, memory: Int, decodes: Int),
        confinement: RootConfinement?, control: JobControl, mapPath: String, failed: [RealPath.Identity.Bytes: String]
    ) throws(MapFailure) -> ([RealPath.Identity.Bytes: InputPlaceholder], [(input: String, reason: String)]) {
        var found: [RealPath.Identity.Bytes: InputPlaceholder] = [:]
        var wanted: [(path: String, hash: String)] = []
        var missing: [(input: String, reason: String)] = []
        let recorded = records.placeholders(for: inputs.map(\.path))
        for input in inputs {
            if let kept = recorded[.init(input.path)], kept.inputHash == input.hash, kept.recipe == InputPlaceholder.recipe {
                found[.init(input.path)] = kept
            } else if let reason = failed[.init(input.path)] {
                missing.append((input.path, reason))
            } else {
                wanted.append(input)
            }
        }
        let made = Mutex([Result<InputPlaceholder, ImageIOError>?](repeating: nil, count: wanted.count))
        let next = Atomic(0)
        let work = wanted
        let lanes = max(1, min(limits.decodes, ProcessInfo.processInfo.activeProcessorCount, work.count))
        let share = limits.memory / lanes
        DispatchQueue.concurrentPerform(iterations: lanes) { _ in
            while control.ended == nil {
                let index = next.add(1, ordering: .relaxed).oldValue
                if index >= work.count { return }
                let result = Result { () throws(ImageIOError) -> InputPlaceholder in
                    try InputPlaceholder.make(
                        work[index].path, inputHash: work[index].hash, pixelLimit: limits.pixels, memoryLimit: share,
                        confinement: confinement)
                }
                made.withLock { $0[index] = result }
            }
        }
        do throws(StateError) {
            for (input, result) in zip(wanted, made.withLock { $0 }) {
                switch result {
                case .success(let placeholder):
                    found[.init(input.path)] = placeholder
                    try records.add(placeholder)
                case .failure(let error): missing.append((input.path, error.message))
                case nil: break
                }
            }
        } catch {
            throw MapFailure(path: mapPath, message: "cannot record a placeholder: \(error)")
        }
        return (found, missing)
    }
}
