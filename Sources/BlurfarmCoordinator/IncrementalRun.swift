import BlurfarmState
import BlurfarmSystem
import BlurfarmCore
import BlurfarmImageIO
import BlurfarmManifest
import Foundation
import Synchronization

/// The up-to-date side of a run: before the runner sees the plan,
/// ``init(plan:records:versions:plugins:pixelLimit:force:retryFailed:parts:stopped:)`` takes out every output
/// that is up to date (reported `skipped`, its input not decoded for it) and those of inputs
/// that failed earlier (`failedEarlier`); while the runner works, ``willRead(_:)`` fingerprints
/// each input before it is first read and ``recordWritten(_:)`` records each output it wrote;
/// after, ``recordFailures(of:)`` reports and remembers the inputs that could not be decoded,
/// ``pruneRefusal(_:)`` says whether pruning looks like a missing input folder, and ``prune(_:)``
/// removes the recorded outputs whose input is gone.
/// ``status(of:records:versions:plugins:pixelLimit:)`` asks the same question for
/// `check --status`, changing nothing.
///
/// An output is up to date when its record has the same recipe (``OutputRecipe``), the input's
/// bytes hash as recorded, and the output file is still there with the recorded bytes. A file
/// whose stamp (size, times, inode) is the recorded one is taken to hold the recorded bytes;
/// one whose stamp differs is hashed. Safe to call from several threads.
///
/// The versions a recipe names are asked only when a decision needs them: to compare a record
/// or a remembered failure, to record an output or a failure. A first run, which has no record
/// to compare, hands its work out before they are known, and asks them when it records its
/// first output (`run` finds libvips's in its cache or asks a worker meanwhile: BlurfarmFarm's `LibvipsVersion`).
public final class IncrementalRun: Sendable {
    /// The plan with the up-to-date outputs taken out (and the inputs left with none).
    public let plan: JobPlan
    /// The outputs taken out, by their places among the full plan's outputs: 2 bits an output,
    /// where a list of places took 12 bytes, their reports (``report(of:in:)``) 64 and, with
    /// their paths, 150 (a no-change run of 300,000 outputs held 19 MB of reports to its end).
    let takenOut: TakenOuts
    /// Why each input whose outputs are taken out as failed earlier failed, by its place in
    /// the full plan.
    let failedEarlier: [UInt32: String]

    /// An output the check took out, up to date or because its input failed earlier, by its
    /// input's place in the full plan and its own in the input's.
    struct TakenOut {
        let input: UInt32, output: UInt32
        let failedEarlier: Bool
    }

    /// The outputs the check took out (``takenOut``): two bits an output, in plan order.
    struct TakenOuts {
        private var taken: [UInt64] = [], failed: [UInt64] = []
        /// How many were taken out.
        private(set) var count = 0

        init(outputs: Int) {
            taken = Array(repeating: 0, count: (outputs + 63) / 64)
            failed = taken
        }

        /// Takes out the output at `position` among the plan's, up to date or `failedEarlier`
        /// (the bits grown to it: a part's, whose outputs are not counted before).
        mutating func take(_ position: Int, failedEarlier: Bool) {
            if position / 64 >= taken.count {
                taken += repeatElement(0, count: position / 64 + 1 - taken.count)
                failed += repeatElement(0, count: taken.count - failed.count)
            }
            taken[position / 64] |= 1 << UInt64(position % 64)
            if failedEarlier { failed[position / 64] |= 1 << UInt64(position % 64) }
            count += 1
        }

        /// Takes out those `other` took out, `offset` places on (a part's, in the plan).
        mutating func take(_ other: TakenOuts, at offset: Int) {
            for (index, word) in other.taken.enumerated() where word != 0 {
                for bit in 0..<64 where word & (1 << UInt64(bit)) != 0 {
                    take(offset + index * 64 + bit, failedEarlier: other.failed[index] & (1 << UInt64(bit)) != 0)
                }
            }
        }

        /// Whether the output at `position` was taken out, and if so whether as failed earlier
        /// (nil: it was not).
        func failedEarlier(at position: Int) -> Bool? {
            guard position / 64 < taken.count, taken[position / 64] & (1 << UInt64(position % 64)) != 0 else { return nil }
            return failed[position / 64] & (1 << UInt64(position % 64)) != 0
        }
    }

    /// The report of an output of `input` (made whole already) taken out: `skipped`, or
    /// `failedEarlier` with its input's reason.
    func report(of taken: TakenOut, in input: PlannedInput) -> OutputReport {
        let output = input.outputs[Int(taken.output)]
        guard taken.failedEarlier, let reason = failedEarlier[taken.input] else {
            return OutputReport(input: input.relativePath, output: output.path, variant: output.variant.name, status: .skipped)
        }
        return OutputReport(
            input: input.relativePath, output: output.path, variant: output.variant.name, status: .failedEarlier,
            failure: .decodedEarlier("\(input.path): \(reason)"))
    }
    /// The job's records.
    public let records: OutputRecords
    /// The full plan, before the up-to-date outputs were taken out.
    let full: JobPlan
    /// The full plan's outputs and inputs, by their absolute paths: what ``prune(_:)`` never
    /// removes (made when first asked, then kept).
    var plannedPaths: PlannedPaths {
        planned.withLock { planned in
            if let planned { return planned }
            let made = PlannedPaths(full, folders: folders)
            planned = made
            return made
        }
    }
    private let planned = Mutex<PlannedPaths?>(nil)
    /// How many outputs the records held when the check began (nil: not counted, the run
    /// asks no orphans), and how many of them the check found as the records of planned
    /// outputs (the lookups' rows are each an output's, and each planned output's path is
    /// its own). When the two are one, every recorded output was a planned one, and outputs
    /// recorded since are planned ones too (a run records only what it writes): there is no
    /// orphan (``orphans()``), and the recorded paths need not be walked.
    let recordedBefore: Int?
    let recordedPlanned: Int
    /// The inputs the full plan left out because their regions could not be had.
    let regionFailedInputs: [String]
    /// The sizes of the full plan not made because their input is narrower
    /// (``PlannedInput/notEnlarged``): the report lists them, read from the plan as it is
    /// written; `--prune` removes their recorded files.
    package var notEnlarged: NotEnlargedList { .ofPlan(full.inputs) }

    /// An input being made, fingerprinted as it is first read (``willRead(_:)``), before
    /// anything decodes it: what its written outputs are recorded with (``recordWritten(_:)``)
    /// and its failure remembered with (``recordFailures(of:)``). Held from its first read
    /// until its outputs are recorded (an input whose outputs failed, until its batch's
    /// failures are: ``batches(of:)``), so
    /// that memory holds the inputs in flight, whatever the number of inputs: hashed here
    /// before the run, a first run of 10,000 inputs held 30,000 of them, 9.5 MB.
    final class Reading: Sendable {
        /// The input's absolute path.
        let input: String
        /// Its outputs as the check planned them, whose recipes are recorded.
        let outputs: [PlannedOutput]
        /// The fingerprint, taken by the first reader; the others wait for it (nil inside:
        /// the input could not be hashed, and its outputs are not recorded).
        private let taken = Mutex<FileFingerprint??>(nil)

        init(input: String, outputs: [PlannedOutput]) { (self.input, self.outputs) = (input, outputs) }

        /// The bytes as they are now, hashed by the first caller (the others wait).
        var fingerprint: FileFingerprint? {
            taken.withLock { taken in
                if let taken { return taken }
                let fingerprint = try? FileFingerprint.take(input)
                taken = .some(fingerprint)
                return fingerprint
            }
        }
    }

    /// The inputs read and not yet recorded, by the path of each of their outputs, by its
    /// bytes: two outputs whose paths are one string to Swift but other bytes (`é`, and `e`
    /// with a combining accent) are two files, and each is recorded as its own input's.
    let reading = Mutex<[RealPath.Identity.Bytes: Reading]>([:])

    /// The versions recipes name, asked once, when first needed.
    let versions: RecipeVersions
    /// The content hash of each plugin filter's library, by filter name (part of the recipe).
    let plugins: [String: String]
    /// The configuration's pixel limit, part of ``decoder``.
    let pixelLimit: Int

    /// ``decoderKey(versions:pixelLimit:)`` of this run: recorded with the failures.
    var decoder: String { Self.decoderKey(versions: versions.text, pixelLimit: pixelLimit) }

    /// The recipe `output` is recorded with in this run.
    func recipe(of output: PlannedOutput) -> String { recipes.of(output, versions: versions.text) }
    /// This run's recipes, each made once.
    let recipes: OutputRecipe.Made
    /// The folders of this job's paths, each resolved once.
    let folders = RealPath.Folders()

    /// The job's input globs with their fixed folder (absolute, and as shown), and whether
    /// each matches a file now: what ``pruneRefusal(_:)`` checks.
    let inputGlobs: [(glob: GlobPattern, folder: String, shownFolder: String, matches: Bool)]

    /// Splits `plan` against `records`. With `force` nothing is up to date (every output runs
    /// and is recorded again); with `retryFailed` (implied by `force`) inputs that failed
    /// earlier run again. Inputs whose outputs run are hashed as they are first read
    /// (``willRead(_:)``), so that a record never claims newer bytes than were read. An input
    /// that cannot be read stays in the plan: the runner reports it.
    /// `versions`: blurfarm's and libvips's, asked at most once, and only when a decision
    /// needs them. `plugins`: the content hash of each plugin filter's library, by filter name
    /// (part of the recipe). `pixelLimit`: the configuration's, part of what decides that an
    /// input failed (``decoderKey(versions:pixelLimit:)``).
    /// The inputs are checked in `parts` at once (nil: one a core, of at least
    /// ``checkPartInputs`` each). `stopped` is asked between batches of inputs: once it says
    /// true (the job was stopped or cancelled while its outputs were checked), the inputs not
    /// checked yet stay in the plan unchecked, for the runner to report as it reports any work
    /// its job ended before. `orphansAsked`: whether ``orphans()`` will be (`--prune`, an
    /// output map), for which the records are counted as the check begins (``recordedBefore``).
    public init(
        plan full: JobPlan, records: OutputRecords, versions: @escaping @Sendable () -> String,
        plugins: [String: String] = [:], pixelLimit: Int, force: Bool, retryFailed: Bool = false,
        parts: Int? = nil, orphansAsked: Bool = true, stopped: @escaping @Sendable () -> Bool = { false }
    ) {
        self.records = records
        // Before the check, which refreshes records but adds none.
        recordedBefore = orphansAsked ? records.count : nil
        let versions = RecipeVersions(versions)
        self.versions = versions
        self.plugins = plugins
        let recipes = OutputRecipe.Made(plugins: plugins)
        self.recipes = recipes
        self.pixelLimit = pixelLimit
        let folders = folders
        /// Checks the inputs of `full` in `range`: a part of the check, whose outputs' places
        /// count from its first.
        @Sendable func check(_ range: Range<Int>) -> CheckedPart {
            var part = CheckedPart()
            var (checkedInputs, outputsBefore) = (range.lowerBound, 0)
            // The records of a batch of inputs' outputs are read from the index together, and
            // only theirs: memory holds a batch's, whatever the job's size.
            for first in stride(from: range.lowerBound, to: range.upperBound, by: Self.lookupBatch) {
                if stopped() {
                    // Their outputs counted, for the places of the parts after.
                    part.unchecked = first..<range.upperBound
                    outputsBefore += full.inputs[first..<range.upperBound].reduce(0) { $0 + $1.outputs.count }
                    break
                }
                // Each input made whole once (``PlannedInputs``).
                let batch = Array(full.inputs[first..<min(first + Self.lookupBatch, range.upperBound)])
                var paths: [(input: String, outputs: [String])] = []
                for input in batch {
                    var outputs: [String] = []
                    for output in input.outputs { outputs.append(Self.absolute(output.path, using: folders)) }
                    paths.append((Self.absolute(input.path, using: folders), outputs))
                }
                // An index that cannot be read leaves the batch's outputs not recorded: made again,
                // never taken for up to date.
                let known = (try? records.lookUp(recordsOf: paths.map(\.input), failures: !force && !retryFailed)) ?? .init()
                for (input, paths) in zip(batch, paths) {
                    defer { (checkedInputs, outputsBefore) = (checkedInputs + 1, outputsBefore + input.outputs.count) }
                    var probe = FileProbe(path: paths.input, seen: input.seen)
                    let failure = known.failures[.init(probe.path)]
                    var remaining: [PlannedOutput] = []
                    for (index, (output, outputPath)) in zip(input.outputs, paths.outputs).enumerated() {
                        var outputFile = FileProbe(path: outputPath, seen: output.seen)
                        let record = known.records[.init(outputFile.path)]
                        if record != nil { part.recorded += 1 }
                        let state =
                            force
                            ? .notRecorded
                            : Self.state(
                                of: &outputFile, recipe: recipes.of(output, versions: versions.text),
                                record: record, failure: failure,
                                decoder: Self.decoderKey(versions: versions.text, pixelLimit: pixelLimit), input: &probe)
                        if state == .upToDate, let record, let current = probe.current(trusting: record.inputFile) {
                            // Touched but the same bytes: the new stamps are recorded, so the next run
                            // need not hash the files again. Not being able to is no error: the next
                            // run hashes them again and decides the same.
                            if current.stamp != record.inputFile.stamp || !outputFile.hasStamp(record.outputFile.stamp),
                                let outputStamp = outputFile.stamp()
                            {
                                var refreshed = record
                                refreshed.inputFile = current
                                refreshed.outputFile.stamp = outputStamp
                                try? records.add(refreshed)
                            }
                            part.takenOut.take(outputsBefore + index, failedEarlier: false)
                            continue
                        }
                        if state == .failedEarlier, let failure {
                            // Touched but the same bytes: its new stamp is recorded, as for an output.
                            if let current = probe.current(trusting: failure.inputFile), current.stamp != failure.inputFile.stamp,
                                records.failure(for: probe.path)?.inputFile.stamp != current.stamp
                            {
                                var refreshed = failure
                                refreshed.inputFile = current
                                try? records.add(refreshed)
                            }
                            part.takenOut.take(outputsBefore + index, failedEarlier: true)
                            part.failedEarlier[UInt32(checkedInputs)] = failure.reason
                            continue
                        }
                        remaining.append(output)
                    }
                    if remaining.count == input.outputs.count {
                        // Every output to make (a first run's): the planned input itself, its
                        // outputs' storage shared, not copied (22 MB of a first run at 100k). Its
                        // sizes not made come with it, and go nowhere: the report's are the full
                        // plan's (``notEnlarged``). With them left out, every input with a size
                        // not made was copied: 100,000 such inputs made a first run's work a list.
                        part.inputs?.append(input)
                        continue
                    }
                    // The first input not made whole: the work is its own list from here.
                    if part.inputs == nil { part.inputs = Array(full.inputs[range.lowerBound..<checkedInputs]) }
                    if !remaining.isEmpty {
                        part.inputs?.append(input.with(outputs: remaining))
                    }
                }
            }
            part.outputs = outputsBefore
            return part
        }
        // In parts, one a core (or `parts`), checked at once (the index's reads one after
        // another), put together in order: the check in one part, as the tests compare.
        let partCount = max(1, min(full.inputs.count, parts ?? min(ProcessInfo.processInfo.activeProcessorCount, full.inputs.count / Self.checkPartInputs)))
        let bounds = (0...partCount).map { full.inputs.count * $0 / partCount }
        let checked = Threads.concurrently(partCount) { check(bounds[$0]..<bounds[$0 + 1]) }
        var takenOut = TakenOuts(outputs: full.outputCount)
        var failedEarlier: [UInt32: String] = [:]
        // The work: while every input checked is to be made whole (a first run's), nil, and the
        // plan's own inputs are the work's, not a copy of them (9 MB of a first run at 100k).
        var inputs: [PlannedInput]?
        var outputsBefore = 0
        for (index, part) in checked.enumerated() {
            takenOut.take(part.takenOut, at: outputsBefore)
            failedEarlier.merge(part.failedEarlier) { $1 }
            outputsBefore += part.outputs
            // A part whose inputs are all to be made whole (those not checked too): the plan's.
            if part.inputs == nil, inputs == nil { continue }
            if inputs == nil { inputs = Array(full.inputs[..<bounds[index]]) }
            if let list = part.inputs {
                // The inputs not checked (stopped) stay in the plan unchecked, for the runner
                // to report as it reports any work its job ended before.
                inputs! += list
                if let unchecked = part.unchecked { inputs! += full.inputs[unchecked] }
            } else {
                inputs! += full.inputs[bounds[index]..<bounds[index + 1]]
            }
        }
        plan = JobPlan(
            job: full.job, manifestPath: full.manifestPath, folder: full.folder, inputs: inputs.map(PlannedInputs.init) ?? full.inputs,
            tileSize: full.tileSize, refused: full.refused)
        (self.takenOut, self.failedEarlier) = (takenOut, failedEarlier)
        recordedPlanned = checked.reduce(0) { $0 + $1.recorded }
        self.full = full
        regionFailedInputs = full.regionFailed.map(\.input)
        inputGlobs = full.job.inputs.compactMap { try? GlobPattern($0) }.map { glob in
            let shown = JobPlanner.join(full.folder, glob.fixedPrefix.isEmpty ? "." : glob.fixedPrefix)
            return (glob, Self.absolute(shown, using: folders), shown, full.inputs.contains { glob.matches($0.relativePath) })
        }
    }

    /// What a part of the check (``init(plan:records:versions:plugins:pixelLimit:force:retryFailed:parts:stopped:)``)
    /// found of its inputs, its outputs' places counted from its first.
    struct CheckedPart: Sendable {
        var takenOut = TakenOuts(outputs: 0)
        /// Why each input whose outputs are taken out as failed earlier failed, by its place in
        /// the full plan.
        var failedEarlier: [UInt32: String] = [:]
        /// Its work, nil while every input is to be made whole.
        var inputs: [PlannedInput]?
        /// Its inputs not checked, once `stopped` said so.
        var unchecked: Range<Int>?
        /// The outputs of its inputs checked.
        var outputs = 0
        /// Of those, the outputs with a record.
        var recorded = 0
    }

    /// Inputs checked together at least (a part of the check, one a core): below this, one
    /// part. The check of 100,000 inputs took 2.4–3.0 s in one part, 1.7 s in two: the parts
    /// read the index in turn, and decide at once.
    static let checkPartInputs = 4096

    /// Inputs whose outputs' records are read from the index at once (``OutputRecords/lookUp(recordsOf:failures:)``):
    /// one read of the index for many lookups, without holding more than a batch's records.
    static let lookupBatch = 256

    /// What decides whether an input that failed fails again: the versions of blurfarm and
    /// libvips, and the pixel limit.
    public static func decoderKey(versions: String, pixelLimit: Int) -> String {
        "\(versions); pixel limit \(pixelLimit)"
    }

    /// One file (an input, or an output) as the up-to-date check reads it: stated once,
    /// hashed at most once, and not at all while its stamp is a recorded one. A no-change run
    /// makes one `stat` of each input and each output this way (issue 47's floor), however many
    /// outputs an input has and however many questions the check asks of each.
    struct FileProbe {
        /// The file's absolute path.
        let path: String
        /// What the plan saw of it (``SeenStamp``): compared with a record's stamp before any
        /// `stat`, so a no-change run states each file once, as it plans.
        private let seen: SeenStamp
        private var stated: stat??
        private var taken: FileFingerprint??

        init(path: String, seen: SeenStamp = .unseen) { (self.path, self.seen) = (path, seen) }

        /// What `stat` says of the path (following links), asked once; nil when nothing is there.
        private mutating func status() -> stat? {
            if let stated { return stated }
            let info = Syscalls.status(path)
            stated = .some(info)
            return info
        }

        /// Whether anything is at the path (a file, a folder, a link even if it leads nowhere):
        /// not asked of a file the plan found absent.
        mutating func exists() -> Bool { seen.isFile || !seen.isAbsent && (status() != nil || IncrementalRun.exists(path)) }

        /// Whether the file's stamp is `recorded`: as the plan saw it, else as `stat` says.
        mutating func hasStamp(_ recorded: FileStamp) -> Bool { seen.matches(recorded) ?? (stamp() == recorded) }

        /// The file's stamp now, nil when it is not a regular file.
        mutating func stamp() -> FileStamp? {
            guard let info = status(), info.st_mode & S_IFMT == S_IFREG else { return nil }
            return FileStamp(info)
        }

        /// The fingerprint of the bytes as they are now (hashed once), nil when unreadable.
        mutating func now() -> FileFingerprint? {
            if let taken { return taken }
            let fingerprint = try? FileFingerprint.take(path)
            taken = .some(fingerprint)
            return fingerprint
        }

        /// The fingerprint, taking `recorded` as it is when the file's stamp is the recorded one.
        mutating func current(trusting recorded: FileFingerprint?) -> FileFingerprint? {
            if let recorded, seen.matches(recorded.stamp) == true || stamp() == recorded.stamp { return recorded }
            return now()
        }

        /// Whether the file still holds the bytes `recorded` describes: the same stamp, or the
        /// same size and hash (what ``IncrementalRun/isUnchanged(_:as:)`` asks of a path).
        mutating func isUnchanged(as recorded: FileFingerprint) -> Bool {
            if seen.matches(recorded.stamp) == true { return true }
            guard let stamp = stamp(), stamp.size == recorded.stamp.size else { return false }
            return stamp == recorded.stamp || now()?.hash == recorded.hash
        }
    }

    /// The one up-to-date decision, which `run` (``init(plan:records:versions:plugins:pixelLimit:force:retryFailed:parts:stopped:)``)
    /// and `check --status` (``status(of:records:versions:plugins:pixelLimit:)``) both ask:
    /// the state of the output `output` (its absolute path, stated once) whose recipe is `recipe`,
    /// against its record and the input's remembered failure. The first reason found is given:
    /// missing, not recorded, recipe changed, input changed, output changed; an output that is
    /// not up to date is `failedEarlier` when its input's failure holds (same bytes, same
    /// decoder). `recipe` is made only for an output on disk with a record, `decoder` only for
    /// an input with a remembered failure.
    static func state(
        of output: inout FileProbe, recipe: @autoclosure () -> String, record: OutputRecord?, failure: InputFailure?,
        decoder: @autoclosure () -> String, input: inout FileProbe
    ) -> OutputState {
        let state: OutputState
        if !output.exists() {
            state = .missing
        } else if let record {
            if record.recipe != recipe() {
                state = .recipeChanged
            } else if record.input != input.path || input.current(trusting: record.inputFile)?.hash != record.inputFile.hash {
                state = .inputChanged
            } else if !output.isUnchanged(as: record.outputFile) {
                state = .outputChanged
            } else {
                state = .upToDate
            }
        } else {
            state = .notRecorded
        }
        if state != .upToDate, let failure, failure.decoder == decoder(),
            input.current(trusting: failure.inputFile)?.hash == failure.inputFile.hash
        {
            return .failedEarlier
        }
        return state
    }

    /// The records `check --status` decides against: looked up a batch of inputs at a time in
    /// the job's index, as a run looks them up (memory holds a batch's records, whatever the
    /// job's size), or read whole where an earlier blurfarm kept them (``of(_:)``).
    public enum StatusRecords: Sendable {
        case index(OutputRecords)
        case whole(OutputRecords.Contents)

        /// The records of the job in `folder` as the next run will see them, read without
        /// changing anything: its index; its records and its shards' laid over each other in a
        /// temporary index (``ShardRecords/overlaid(_:)``) when a shard's records wait to be
        /// merged into it; read whole when they are of an earlier format.
        /// - Throws: ``StateError`` when a records file cannot be read.
        public static func of(_ folder: JobStateFolder) throws(StateError) -> StatusRecords {
            if ShardRecords.waiting(folder) { return .index(try ShardRecords.overlaid(folder)) }
            if let index = try OutputRecords.reading(folder: folder.path) { return .index(index) }
            return .whole(try OutputRecords.read(folder: folder.path))
        }

        /// The records of the outputs of `inputs` (absolute paths), with their failures; whole,
        /// every record.
        func lookUp(_ inputs: [String]) -> OutputRecords.Contents {
            switch self {
            case .index(let index): (try? index.lookUp(recordsOf: inputs, failures: true)) ?? .init()
            case .whole(let contents): contents
            }
        }

        /// The records ``orphans(in:kept:)`` finds, sorted by their paths' bytes: of an index,
        /// only theirs are read.
        func orphans(kept: PlannedPaths) -> [OutputRecord] {
            switch self {
            case .index(let index):
                return IncrementalRun.orphans(in: index, kept: kept)
            case .whole(let contents):
                return contents.records.values.filter { !kept.holds($0.output) }
                    .sorted { RealPath.Identity.Bytes($0.output) < .init($1.output) }
            }
        }
    }

    /// What `check --status` shows of a job: each planned output's state (``state(of:recipe:record:failure:decoder:input:)``,
    /// the decision `run` makes), in plan order, then each recorded output `--prune` would
    /// remove (`wouldBePruned`: one the plan no longer writes, ``orphans(in:kept:)``: its
    /// input gone, its variant or size removed or renamed, a size now larger than its input
    /// (``PlannedInput/notEnlarged``); the file still there). The sizes not made are listed
    /// after their input's outputs (`notEnlarged`), unless a recorded file is at their path.
    /// Reads the files' stamps, and hashes those whose stamps changed; decodes nothing and
    /// writes nothing. The records are looked up a batch of inputs at a time
    /// (``lookupBatch``), and an output recorded as another input's has no record, as in a
    /// run (``OutputRecords/lookUp(recordsOf:failures:)``). The files are taken as the plan
    /// saw them (``SeenStamp``) when it was made just before; `trustingSeen` false, for a plan
    /// held while its files change (`slurm status --wait`'s, as the shards write), states each.
    public static func status(
        of plan: JobPlan, records: StatusRecords, versions: String, plugins: [String: String] = [:], pixelLimit: Int,
        trustingSeen: Bool = true
    ) -> OutputStatuses {
        let decoder = decoderKey(versions: versions, pixelLimit: pixelLimit)
        let folders = RealPath.Folders()
        let recipes = OutputRecipe.Made(plugins: plugins)
        var statuses = OutputStatuses.Planned(plan: plan)
        statuses.states.reserveCapacity(plan.outputCount)
        for first in stride(from: 0, to: plan.inputs.count, by: lookupBatch) {
            let batch = Array(plan.inputs[first..<min(first + lookupBatch, plan.inputs.count)])
            let found = records.lookUp(batch.map { absolute($0.path, using: folders) })
            for (offset, input) in batch.enumerated() {
                var probe = FileProbe(path: absolute(input.path, using: folders), seen: trustingSeen ? input.seen : .unseen)
                let failure = found.failures[.init(probe.path)]
                for output in input.outputs {
                    var outputFile = FileProbe(path: absolute(output.path, using: folders), seen: trustingSeen ? output.seen : .unseen)
                    let record = found.records[.init(outputFile.path)].flatMap { $0.input == probe.path ? $0 : nil }
                    let state = Self.state(
                        of: &outputFile, recipe: recipes.of(output, versions: versions), record: record, failure: failure,
                        decoder: decoder, input: &probe)
                    statuses.states.append(OutputStatuses.Planned.code(state))
                    if state == .failedEarlier, let failure { statuses.failures[first + offset] = failure.reason }
                }
                for skipped in input.notEnlarged {
                    // A recorded file there is listed as one `--prune` removes.
                    let path = absolute(skipped.output, using: folders)
                    let listedAsOrphan = found.records[.init(path)] != nil && exists(path)
                    statuses.states.append(listedAsOrphan ? OutputStatuses.Planned.hidden : OutputStatuses.Planned.notEnlarged)
                }
            }
        }
        // The orphans (few, mostly) sorted alone: sorting every record of a 30,000-output job
        // was 29% of its `check --status`.
        for record in records.orphans(kept: PlannedPaths(plan, folders: folders)) where exists(record.output) {
            statuses.orphans.append(OutputStatus(input: record.input, output: record.output, variant: nil, state: .wouldBePruned))
        }
        return OutputStatuses(statuses)
    }

    /// Whether the file at `path` still holds the bytes `recorded` describes: the same stamp,
    /// or the same size and hash.
    static func isUnchanged(_ path: String, as recorded: FileFingerprint) -> Bool {
        var file = FileProbe(path: path)
        return file.isUnchanged(as: recorded)
    }

    /// Fingerprints `input` (the bytes as they are now) before anything reads it: the
    /// detection step calls it before it searches a photo, the runner before it decodes one or
    /// sends it to a worker. Only the first call of an input hashes it, and a concurrent one
    /// waits for that hash, so a record never claims bytes newer than any read of this run.
    /// Its outputs are recorded only after it (``recordWritten(_:)``).
    public func willRead(_ input: PlannedInput) {
        let reading = reading.withLock { table -> Reading in
            for output in input.outputs { if let known = table[.init(output.path)] { return known } }
            let new = Reading(input: absolute(input.path), outputs: input.outputs)
            for output in input.outputs { table[.init(output.path)] = new }
            return new
        }
        _ = reading.fingerprint
    }

    /// Records the output of `report` when its status is `written` (rendered, verified, written):
    /// hashes the file and appends its record, with the size the runner wrote (for a report
    /// without it, the size read from the file's header). Does nothing for other statuses, nor for an
    /// output whose input was not fingerprinted before it was read (``willRead(_:)``), or could
    /// not be, or is no longer the file fingerprinted (replaced or rewritten since, it may have
    /// been read as it is now: recorded as made of the bytes fingerprinted, the output would be
    /// up to date when the file came back to them) (it is not recorded, so it runs again next time). Call it from the runner's
    /// progress callback, from any thread.
    /// - Throws: ``StateError`` when the written file or the records file cannot be read or written.
    /// The folders made for the output (``OutputReport/createdFolders``) are recorded whatever
    /// its status. A written output's input is no longer remembered as failed (in the same
    /// transaction as its record).
    public func recordWritten(_ report: OutputReport) throws(StateError) {
        for folder in report.createdFolders { try records.add(folder) }
        guard report.status == .written, let reading = reading.withLock({ $0.removeValue(forKey: .init(report.output)) }),
            let planned = reading.outputs.first(where: { $0.path.utf8.elementsEqual(report.output.utf8) }),
            let inputFile = reading.fingerprint, FileStamp.of(reading.input) == inputFile.stamp
        else { return }
        let output = absolute(report.output)
        let file = try FileFingerprint.take(output)
        // Its size, for the output map; a header that cannot be read leaves it to the map.
        var size = report.width.flatMap { width in report.height.map { (width, $0) } }
        if size == nil, let header = try? ImageReader.header(ofFile: output) { size = (header.width, header.height) }
        try records.add(OutputRecord(
            output: output, input: reading.input, recipe: recipe(of: planned), inputFile: inputFile,
            outputFile: file, written: Date(), width: size?.0, height: size?.1))
    }

    /// Whether something (a file, a folder, a link, even dangling) is at `path`.
    static func exists(_ path: String) -> Bool {
        ((try? Syscalls.identity(of: path)) ?? nil) != nil
    }

    /// `path` made absolute against the working directory, its folder resolved as the kernel
    /// resolves it (links, `.`, `..`): records name files, not spellings, so the same manifest
    /// reached through a linked folder finds its records.
    static func absolute(_ path: String, using folders: RealPath.Folders? = nil) -> String {
        RealPath.resolveFolder(of: path, using: folders)
    }

    /// ``absolute(_:using:)`` with this job's folders.
    func absolute(_ path: String) -> String { Self.absolute(path, using: folders) }
}

/// The versions a run's recipes name (blurfarm's and libvips's), asked of their source once,
/// by the first decision that needs them; every later one reads the same text.
final class RecipeVersions: Sendable {
    private let source: @Sendable () -> String
    private let asked = Mutex<String?>(nil)

    init(_ source: @escaping @Sendable () -> String) { self.source = source }

    /// The versions: the source's answer, asked on the first read (a concurrent first read
    /// waits for it).
    var text: String {
        asked.withLock { text in
            if let text { return text }
            let answer = source()
            text = answer
            return answer
        }
    }
}
