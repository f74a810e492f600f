import BlurfarmCore
import BlurfarmManifest
import Foundation

/// The up-to-date side of a run: before the runner sees the plan, ``init(plan:records:versions:force:)``
/// takes out every output that is up to date (reported `skipped`, its input not decoded for it);
/// while the runner works, ``recordWritten(_:)`` records each output it wrote; after,
/// ``pruneRefusal()`` says whether pruning looks like a missing input folder, and ``prune()``
/// removes the recorded outputs whose input is gone.
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

    /// The job's input globs with their fixed folder (absolute, and as shown), and whether
    /// each matches a file now: what ``pruneRefusal()`` checks.
    private let inputGlobs: [(glob: GlobPattern, folder: String, shownFolder: String, matches: Bool)]

    /// Splits `plan` against `records`. With `force` nothing is up to date (every output runs
    /// and is recorded again). Inputs whose outputs run are hashed here, before they are decoded,
    /// so that a record never claims newer bytes than were read. An input that cannot be read
    /// stays in the plan: the runner reports it.
    /// `plugins`: the content hash of each plugin filter's library, by filter name (part of
    /// the recipe).
    public init(
        plan full: JobPlan, records: OutputRecords, versions: String, plugins: [String: String] = [:], force: Bool
    ) {
        self.records = records
        var skipped: [OutputReport] = []
        var pending: [String: Pending] = [:]
        var inputs: [PlannedInput] = []
        var planned: [String] = []
        for input in full.inputs {
            let inputPath = Self.absolute(input.path)
            var fingerprint: FileFingerprint?
            var fingerprintTried = false
            /// The input's fingerprint, trusting a record's hash when the stamp is the recorded one.
            func inputFile(trusting record: OutputRecord?) -> FileFingerprint? {
                if let record, let stamp = FileStamp.of(inputPath), stamp == record.inputFile.stamp {
                    return record.inputFile
                }
                if !fingerprintTried {
                    fingerprintTried = true
                    fingerprint = try? FileFingerprint.take(inputPath)
                }
                return fingerprint
            }
            var remaining: [PlannedOutput] = []
            for output in input.outputs {
                let outputPath = Self.absolute(output.path)
                planned.append(output.path)
                let recipe = OutputRecipe.of(output, versions: versions, plugins: plugins)
                let record = records.record(for: outputPath)
                let current = inputFile(trusting: record)
                if !force, let record, record.input == inputPath, record.recipe == recipe, let current,
                    current.hash == record.inputFile.hash, Self.isUnchanged(outputPath, as: record.outputFile)
                {
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
                        input: input.relativePath, output: output.path, variant: output.variant.name,
                        status: .skipped, tiles: 0, pixels: 0, decodeSeconds: 0, filterSeconds: 0, encodeSeconds: 0,
                        error: nil))
                    continue
                }
                remaining.append(output)
                // The hash of the bytes as they are now, never a record's (the input may have changed).
                if !fingerprintTried {
                    fingerprintTried = true
                    fingerprint = try? FileFingerprint.take(inputPath)
                }
                if let fingerprint {
                    pending[output.path] = Pending(input: inputPath, inputFile: fingerprint, recipe: recipe)
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
    /// its status.
    public func recordWritten(_ report: OutputReport) throws(StateError) {
        for folder in report.createdFolders { try records.add(folder) }
        guard report.status == .written, let pending = pending[report.output] else { return }
        let output = Self.absolute(report.output)
        let file = try FileFingerprint.take(output)
        try records.add(OutputRecord(
            output: output, input: pending.input, recipe: pending.recipe, inputFile: pending.inputFile,
            outputFile: file, written: Date()))
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
        let planned = Set(plannedOutputs.map(Self.absolute))
        return records.all.filter { !planned.contains($0.output) && Syscalls.status($0.input) == nil }
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
