import BlurfarmCore
import BlurfarmImageIO
import BlurfarmManifest
import Foundation

/// The up-to-date side of a run: before the runner sees the plan,
/// ``init(plan:records:versions:plugins:pixelLimit:force:retryFailed:)`` takes out every output
/// that is up to date (reported `skipped`, its input not decoded for it) and those of inputs
/// that failed earlier (`failedEarlier`); while the runner works, ``recordWritten(_:)`` records
/// each output it wrote; after, ``recordFailures(of:)`` reports and remembers the inputs that
/// could not be decoded, ``pruneRefusal()`` says whether pruning looks like a missing input
/// folder, and ``prune()`` removes the recorded outputs whose input is gone.
/// ``status(of:records:versions:plugins:pixelLimit:)`` asks the same question for
/// `check --status`, changing nothing.
///
/// An output is up to date when its record has the same recipe (``OutputRecipe``), the input's
/// bytes hash as recorded, and the output file is still there with the recorded bytes. A file
/// whose stamp (size, times, inode) is the recorded one is taken to hold the recorded bytes;
/// one whose stamp differs is hashed. Safe to call from several threads.
public final class IncrementalRun: Sendable {
    /// The plan with the up-to-date outputs taken out (and the inputs left with none).
    public let plan: JobPlan
    /// The outputs taken out, as the report shows them (status `skipped`), in plan order.
    public let skipped: [OutputReport]
    /// The job's records.
    public let records: OutputRecords
    /// Every output path of the full plan, in plan order: the report's order.
    public let plannedOutputs: [String]

    /// What a written output is recorded with: the input as hashed before the run, the recipe.
    private struct Pending: Sendable {
        let input: String
        let inputFile: FileFingerprint
        let recipe: String
    }

    private let pending: [String: Pending]

    /// ``decoderKey(versions:pixelLimit:)`` of this run: recorded with the failures.
    private let decoder: String

    /// The job's input globs with their fixed folder (absolute, and as shown), and whether
    /// each matches a file now: what ``pruneRefusal()`` checks.
    private let inputGlobs: [(glob: GlobPattern, folder: String, shownFolder: String, matches: Bool)]

    /// Splits `plan` against `records`. With `force` nothing is up to date (every output runs
    /// and is recorded again); with `retryFailed` (implied by `force`) inputs that failed
    /// earlier run again. Inputs whose outputs run are hashed here, before they are decoded,
    /// so that a record never claims newer bytes than were read. An input that cannot be read
    /// stays in the plan: the runner reports it.
    /// `plugins`: the content hash of each plugin filter's library, by filter name (part of
    /// the recipe). `pixelLimit`: the configuration's, part of what decides that an input
    /// failed (``decoderKey(versions:pixelLimit:)``).
    public init(
        plan full: JobPlan, records: OutputRecords, versions: String, plugins: [String: String] = [:],
        pixelLimit: Int, force: Bool, retryFailed: Bool = false
    ) {
        self.records = records
        let decoder = Self.decoderKey(versions: versions, pixelLimit: pixelLimit)
        self.decoder = decoder
        var skipped: [OutputReport] = []
        var pending: [String: Pending] = [:]
        var inputs: [PlannedInput] = []
        var planned: [String] = []
        for input in full.inputs {
            var probe = InputProbe(path: Self.absolute(input.path))
            let failure = force || retryFailed ? nil : records.failure(for: probe.path)
            var remaining: [PlannedOutput] = []
            for output in input.outputs {
                let outputPath = Self.absolute(output.path)
                planned.append(output.path)
                let recipe = OutputRecipe.of(output, versions: versions, plugins: plugins)
                let record = records.record(for: outputPath)
                let state =
                    force
                    ? .notRecorded
                    : Self.state(
                        of: outputPath, recipe: recipe, record: record, failure: failure, decoder: decoder, input: &probe)
                if state == .upToDate, let record, let current = probe.current(trusting: record.inputFile) {
                    // Touched but the same bytes: the new stamps are recorded, so the next run
                    // need not hash the files again. Not being able to is no error: the next
                    // run hashes them again and decides the same.
                    if let outputStamp = FileStamp.of(outputPath),
                        current.stamp != record.inputFile.stamp || outputStamp != record.outputFile.stamp
                    {
                        var refreshed = record
                        refreshed.inputFile = current
                        refreshed.outputFile.stamp = outputStamp
                        try? records.add(refreshed)
                    }
                    skipped.append(OutputReport(
                        input: input.relativePath, output: output.path, variant: output.variant.name, status: .skipped))
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
                    skipped.append(OutputReport(
                        input: input.relativePath, output: output.path, variant: output.variant.name,
                        status: .failedEarlier, failure: .decodedEarlier("\(input.path): \(failure.reason)")))
                    continue
                }
                remaining.append(output)
                // The hash of the bytes as they are now, never a record's (the input may have changed).
                if let fingerprint = probe.now() {
                    pending[output.path] = Pending(input: probe.path, inputFile: fingerprint, recipe: recipe)
                }
            }
            if !remaining.isEmpty {
                inputs.append(PlannedInput(path: input.path, relativePath: input.relativePath, outputs: remaining))
            }
        }
        plan = JobPlan(
            job: full.job, manifestPath: full.manifestPath, folder: full.folder, inputs: inputs, tileSize: full.tileSize,
            refused: full.refused)
        self.skipped = skipped
        self.pending = pending
        plannedOutputs = planned
        inputGlobs = full.job.inputs.compactMap { try? GlobPattern($0) }.map { glob in
            let shown = JobPlanner.join(full.folder, glob.fixedPrefix.isEmpty ? "." : glob.fixedPrefix)
            return (glob, Self.absolute(shown), shown, full.inputs.contains { glob.matches($0.relativePath) })
        }
    }

    /// What decides whether an input that failed fails again: the versions of blurfarm and
    /// libvips, and the pixel limit.
    public static func decoderKey(versions: String, pixelLimit: Int) -> String {
        "\(versions); pixel limit \(pixelLimit)"
    }

    /// One input file as the up-to-date check reads it: hashed at most once, and not at all
    /// while its stamp is a recorded one.
    struct InputProbe {
        /// The input's absolute path.
        let path: String
        private var taken: FileFingerprint??

        init(path: String) { self.path = path }

        /// The fingerprint of the bytes as they are now (hashed once), nil when unreadable.
        mutating func now() -> FileFingerprint? {
            if let taken { return taken }
            let fingerprint = try? FileFingerprint.take(path)
            taken = .some(fingerprint)
            return fingerprint
        }

        /// The fingerprint, taking `recorded` as it is when the file's stamp is the recorded one.
        mutating func current(trusting recorded: FileFingerprint?) -> FileFingerprint? {
            if let recorded, let stamp = FileStamp.of(path), stamp == recorded.stamp { return recorded }
            return now()
        }
    }

    /// The one up-to-date decision, which `run` (``init(plan:records:versions:plugins:pixelLimit:force:retryFailed:)``)
    /// and `check --status` (``status(of:records:versions:plugins:pixelLimit:)``) both ask:
    /// the state of the output at the absolute path `outputPath` whose recipe is `recipe`,
    /// against its record and the input's remembered failure. The first reason found is given:
    /// missing, not recorded, recipe changed, input changed, output changed; an output that is
    /// not up to date is `failedEarlier` when its input's failure holds (same bytes, same
    /// decoder).
    static func state(
        of outputPath: String, recipe: String, record: OutputRecord?, failure: InputFailure?, decoder: String,
        input: inout InputProbe
    ) -> OutputState {
        let state: OutputState
        if !exists(outputPath) {
            state = .missing
        } else if let record {
            if record.recipe != recipe {
                state = .recipeChanged
            } else if record.input != input.path || input.current(trusting: record.inputFile)?.hash != record.inputFile.hash {
                state = .inputChanged
            } else if !isUnchanged(outputPath, as: record.outputFile) {
                state = .outputChanged
            } else {
                state = .upToDate
            }
        } else {
            state = .notRecorded
        }
        if state != .upToDate, let failure, failure.decoder == decoder,
            input.current(trusting: failure.inputFile)?.hash == failure.inputFile.hash
        {
            return .failedEarlier
        }
        return state
    }

    /// What `check --status` shows of a job: each planned output's state (``state(of:recipe:record:failure:decoder:input:)``,
    /// the decision `run` makes), in plan order, then each recorded output `--prune` would
    /// remove (`wouldBePruned`: its input gone, the file still there). Reads the files' stamps,
    /// and hashes those whose stamps changed; decodes nothing and writes nothing.
    public static func status(
        of plan: JobPlan, records: OutputRecords.Contents, versions: String, plugins: [String: String] = [:],
        pixelLimit: Int
    ) -> [OutputStatus] {
        let decoder = decoderKey(versions: versions, pixelLimit: pixelLimit)
        var statuses: [OutputStatus] = []
        for input in plan.inputs {
            var probe = InputProbe(path: absolute(input.path))
            let failure = records.failures[probe.path]
            for output in input.outputs {
                let outputPath = absolute(output.path)
                let state = Self.state(
                    of: outputPath, recipe: OutputRecipe.of(output, versions: versions, plugins: plugins),
                    record: records.records[outputPath], failure: failure, decoder: decoder, input: &probe)
                statuses.append(OutputStatus(
                    input: input.relativePath, output: output.path, variant: output.variant.name, state: state,
                    reason: state == .failedEarlier ? failure?.reason : nil))
            }
        }
        let planned = plan.inputs.flatMap(\.outputs).map { absolute($0.path) }
        for record in orphans(of: records.records.values.sorted { $0.output < $1.output }, planned: planned)
        where exists(record.output) {
            statuses.append(OutputStatus(input: record.input, output: record.output, variant: nil, state: .wouldBePruned))
        }
        return statuses
    }

    /// Whether the file at `path` still holds the bytes `recorded` describes: the same stamp,
    /// or the same size and hash.
    static func isUnchanged(_ path: String, as recorded: FileFingerprint) -> Bool {
        guard let stamp = FileStamp.of(path), stamp.size == recorded.stamp.size else { return false }
        if stamp == recorded.stamp { return true }
        return (try? ContentHash.ofFile(path)) == recorded.hash
    }

    /// Records the output of `report` when its status is `written` (rendered, verified, written):
    /// hashes the file and appends its record. Does nothing for other statuses, nor for an
    /// output whose input could not be hashed before the run (it is not recorded, so it runs
    /// again next time). Call it from the runner's progress callback, from any thread.
    /// - Throws: ``StateError`` when the written file or the records file cannot be read or written.
    /// The folders made for the output (``OutputReport/createdFolders``) are recorded whatever
    /// its status. A written output's input is no longer remembered as failed.
    public func recordWritten(_ report: OutputReport) throws(StateError) {
        for folder in report.createdFolders { try records.add(folder) }
        guard report.status == .written, let pending = pending[report.output] else { return }
        let output = Self.absolute(report.output)
        let file = try FileFingerprint.take(output)
        try records.add(OutputRecord(
            output: output, input: pending.input, recipe: pending.recipe, inputFile: pending.inputFile,
            outputFile: file, written: Date()))
        if records.failure(for: pending.input) != nil { try records.remove(failure: pending.input) }
    }

    /// Gathers the outputs of `report` (this run's) that failed because their input could not
    /// be decoded, one ``FailedInput`` per input in plan order, naming the variants it cost;
    /// and remembers the inputs that failed through their own fault (corrupt, not an image,
    /// over the pixel limit) with every output this run tried, so that later runs skip them
    /// (``OutputState/failedEarlier``) until the file changes. A failure that is not the
    /// input's (a missing or unreadable file, a worker, the disk, a plugin, a stop) is reported
    /// but not remembered. Every failed input is returned, even when remembering one could not
    /// be written (`error`: that input and those after it run again next time).
    public func recordFailures(of report: RunReport) -> (inputs: [FailedInput], error: StateError?) {
        var order: [String] = []
        var byInput: [String: [OutputReport]] = [:]
        for output in report.outputs where output.status != .skipped && output.status != .failedEarlier {
            if byInput[output.input] == nil { order.append(output.input) }
            byInput[output.input, default: []].append(output)
        }
        var failed: [FailedInput] = []
        var problem: StateError?
        for input in order {
            let outputs = byInput[input] ?? []
            let decodeFailures = outputs.filter { $0.decodeError != nil }
            guard let error = decodeFailures.first?.decodeError else { continue }
            let pending = decodeFailures.lazy.compactMap { self.pending[$0.output] }.first
            var remember = decodeFailures.count == outputs.count && error.isTheInputsFault && pending != nil
            if remember, problem == nil, let pending {
                do throws(StateError) {
                    try records.add(InputFailure(
                        input: pending.input, inputFile: pending.inputFile, reason: error.message, decoder: decoder,
                        failed: Date()))
                } catch {
                    problem = error
                }
            }
            remember = remember && problem == nil
            failed.append(FailedInput(error: error, variants: decodeFailures.map(\.variant), remembered: remember))
        }
        return (failed, problem)
    }

    /// What ``prune()`` did to one recorded output.
    public struct Pruned: Sendable {
        public enum Action: Sendable {
            /// The file was removed, and its record.
            case removed
            /// The file was already gone: only its record was removed.
            case alreadyGone
            /// The file was changed since blurfarm wrote it: left in place, its record removed.
            case keptChanged
        }

        public let output: String
        public let action: Action
    }

    /// What ``prune()`` removed.
    public struct PruneResult: Sendable {
        /// What was done to each recorded output whose input is gone, in path order.
        public let outputs: [Pruned]
        /// The folders removed (created by blurfarm, left empty), absolute paths, innermost first.
        public let folders: [String]
    }

    /// Why pruning removes nothing unless forced (`--force-prune`): what a missing mount, an
    /// emptied folder or a mistyped glob looks like (docs/scheduling.md).
    public enum PruneRefusal: Sendable, Equatable, CustomStringConvertible {
        /// An input glob's fixed folder is gone, and recorded outputs of inputs it held would be
        /// removed.
        case folderMissing(folder: String, glob: String, outputs: Int)
        /// An input glob matches no file now, and recorded outputs of inputs it matched would be
        /// removed.
        case globEmpty(glob: String, outputs: Int)
        /// More than ``pruneShareLimit`` of the job's recorded outputs would be removed at once.
        case tooMany(outputs: Int, recorded: Int)

        public var description: String {
            switch self {
            case .folderMissing(let folder, let glob, let outputs):
                "input folder '\(folder)' of '\(glob)' is missing (\(counted(outputs, "recorded output")) would be removed)"
            case .globEmpty(let glob, let outputs):
                "input glob '\(glob)' matches no file (\(counted(outputs, "recorded output")) would be removed)"
            case .tooMany(let outputs, let recorded):
                "it would remove \(outputs) of the \(counted(recorded, "recorded output")), more than half"
            }
        }
    }

    /// The share of a job's recorded outputs that one prune may remove without `--force-prune`:
    /// half. A policy, as rsync's `--max-delete`: inputs that are mostly gone at once are more
    /// likely a fault (a folder not mounted, a glob edited wrongly) than a clean-up.
    public static let pruneShareLimit = 0.5

    /// The records ``prune()`` acts on: not an output the current plan writes, input gone.
    private func orphans() -> [OutputRecord] {
        Self.orphans(of: records.all, planned: plannedOutputs.map(Self.absolute))
    }

    /// Of `records`, those whose output is not in `planned` (absolute paths) and whose input is gone.
    private static func orphans(of records: [OutputRecord], planned: [String]) -> [OutputRecord] {
        let planned = Set(planned)
        return records.filter { !planned.contains($0.output) && Syscalls.status($0.input) == nil }
    }

    /// Whether something (a file, a folder, a link, even dangling) is at `path`.
    private static func exists(_ path: String) -> Bool {
        ((try? Syscalls.identity(of: path)) ?? nil) != nil
    }

    /// Why ``prune()`` should not run without being forced, or nil when it may: when an input
    /// glob whose fixed folder is missing, or that matches no file, matched the inputs of
    /// outputs that would be removed; or when more than ``pruneShareLimit`` of the recorded
    /// outputs would be removed. Outputs already gone do not count (only their records would go).
    public func pruneRefusal() -> PruneRefusal? {
        let removable = orphans().filter { Self.exists($0.output) }
        if removable.isEmpty { return nil }
        for (glob, folder, shownFolder, matches) in inputGlobs where !matches {
            let matched = removable.filter { record in
                let relative: String
                if record.input == folder {
                    relative = glob.fixedPrefix
                } else if record.input.hasPrefix(folder == "/" ? "/" : folder + "/") {
                    let rest = record.input.dropFirst(folder == "/" ? 1 : folder.count + 1)
                    relative = glob.fixedPrefix.isEmpty ? String(rest) : glob.fixedPrefix + "/" + rest
                } else {
                    return false
                }
                return glob.matches(relative)
            }
            if matched.isEmpty { continue }
            if matched.allSatisfy({ $0.input != folder }), !Syscalls.isFolder(folder) {
                return .folderMissing(folder: shownFolder, glob: glob.text, outputs: matched.count)
            }
            return .globEmpty(glob: glob.text, outputs: matched.count)
        }
        let recorded = records.all.count
        if Double(removable.count) > Double(recorded) * Self.pruneShareLimit {
            return .tooMany(outputs: removable.count, recorded: recorded)
        }
        return nil
    }

    /// Removes the outputs this job recorded whose input no longer exists, and their records;
    /// then every folder blurfarm created that is empty now (each checked to be the folder
    /// created: same device and inode), and their records. Only recorded outputs are
    /// touched, never one the current plan still writes; a file that was changed since it was
    /// written is left in place (its record is dropped); a folder that holds anything, or that
    /// blurfarm did not create, is never removed. Check ``pruneRefusal()`` first.
    /// - Throws: ``StateError`` when a file, a folder or the records cannot be removed.
    public func prune() throws(StateError) -> PruneResult {
        // Failures remembered of inputs that are gone: nothing left to skip.
        for failure in records.failures where Syscalls.status(failure.input) == nil {
            try records.remove(failure: failure.input)
        }
        var outputs: [Pruned] = []
        for record in orphans() {
            let action: Pruned.Action
            if !Self.exists(record.output) {
                action = .alreadyGone
            } else if Self.isUnchanged(record.output, as: record.outputFile) {
                do throws(SystemCallError) {
                    try Syscalls.removeFile(record.output)
                } catch {
                    throw StateError(path: record.output, message: "cannot remove: \(error.reason)")
                }
                action = .removed
            } else {
                action = .keptChanged
            }
            try records.remove(output: record.output)
            outputs.append(Pruned(output: record.output, action: action))
        }
        // Innermost first, so that a folder emptied of folders goes too.
        var folders: [String] = []
        for created in records.folders.sorted(by: { $0.path.count > $1.path.count }) {
            let outcome = try created.removeIfEmpty()
            if outcome == .kept { continue }
            try records.remove(folder: created.path)
            if outcome == .removed { folders.append(created.path) }
        }
        return PruneResult(outputs: outputs, folders: folders)
    }

    /// `path` made absolute against the working directory, its folder resolved as the kernel
    /// resolves it (links, `.`, `..`): records name files, not spellings, so the same manifest
    /// reached through a linked folder finds its records.
    static func absolute(_ path: String) -> String {
        RealPath.resolveFolder(of: path)
    }
}

/// What the up-to-date check says of one output (``IncrementalRun``), as `check --status`
/// shows it; the raw value is the JSON's (docs/json.md).
public enum OutputState: String, Sendable, Codable, CaseIterable, CustomStringConvertible {
    /// The recorded output is there as written, from the same input bytes with the same recipe.
    case upToDate
    /// The input's bytes are not the recorded ones (or it cannot be read).
    case inputChanged
    /// The variant's recipe (its settings, the versions, a plugin) is not the recorded one.
    case recipeChanged
    /// The file at the output's path is not the one recorded.
    case outputChanged
    /// A file is at the output's path but no record says blurfarm wrote it.
    case notRecorded
    /// No file at the output's path.
    case missing
    /// A recorded output whose input is gone: `run --prune` removes it.
    case wouldBePruned
    /// The input failed to decode earlier, through its own fault, and has not changed since:
    /// `run` skips it (`--retry-failed` tries it again).
    case failedEarlier

    /// As `check --status` prints it: `up to date`, `stale (input changed)`, `missing`...
    public var description: String {
        switch self {
        case .upToDate: "up to date"
        case .inputChanged: "stale (input changed)"
        case .recipeChanged: "stale (recipe changed)"
        case .outputChanged: "stale (output changed)"
        case .notRecorded: "stale (not recorded)"
        case .missing: "missing"
        case .wouldBePruned: "would be pruned"
        case .failedEarlier: "failed earlier"
        }
    }
}

/// One line of `check --status`: an output and its state.
public struct OutputStatus: Sendable, Codable {
    /// The input: relative to the manifest's folder for a planned output, the recorded
    /// absolute path for one that would be pruned.
    public let input: String
    /// The output's path: as planned, or the recorded absolute path.
    public let output: String
    /// The variant; nil for an output that would be pruned (the records do not keep it).
    public let variant: String?
    public let state: OutputState
    /// Why the input failed, for `failedEarlier`.
    public let reason: String?

    public init(input: String, output: String, variant: String?, state: OutputState, reason: String? = nil) {
        self.input = input
        self.output = output
        self.variant = variant
        self.state = state
        self.reason = reason
    }
}

/// An input that could not be decoded, with the variants it cost: the one line a run prints
/// for it (`in/bad.jpg: <reason> (variants thumb, blur not written)`).
public struct FailedInput: Sendable, CustomStringConvertible {
    /// Why, naming the file.
    public let error: ImageIOError
    /// The variants not written because of it, in plan order.
    public let variants: [String]
    /// Whether the failure was remembered (later runs skip the input until it changes).
    public let remembered: Bool

    public var description: String {
        let names = variants.joined(separator: ", ")
        return "\(error) (\(variants.count == 1 ? "variant" : "variants") \(names) not written)"
    }
}

extension ImageIOError {
    /// Whether the input itself is at fault (its bytes are corrupt, not an image, or too many
    /// pixels): the failures a run remembers. A missing or unreadable file, or anything else,
    /// may go away without the file changing.
    public var isTheInputsFault: Bool {
        switch code {
        case .notAnImage, .overPixelLimit, .decodeFailed: true
        default: false
        }
    }
}
