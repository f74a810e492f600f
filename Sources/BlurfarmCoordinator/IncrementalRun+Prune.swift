import BlurfarmState
import BlurfarmSystem
import BlurfarmCore

extension IncrementalRun {
    /// What ``prune(_:)`` did to one recorded output.
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

    /// What ``prune(_:)`` removed.
    public struct PruneResult: Sendable {
        /// What was done to each recorded output the plan no longer writes, in path order.
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

    /// The records ``prune(_:)`` acts on, as the records are now: each output the current plan
    /// does not write (``orphans(in:kept:)``). Found once for ``pruneRefusal(_:)`` and
    /// ``prune(_:)`` (twice, they were a third of a no-change `run --prune` at 100,000 inputs).
    /// None without walking the recorded paths when every output recorded as the check began
    /// was a planned one (``recordedBefore``): a no-change run's `--prune` and output map.
    public func orphans() -> [OutputRecord] {
        if recordedBefore == recordedPlanned { return [] }
        return Self.orphans(in: records, kept: plannedPaths)
    }

    /// The records in `records` whose output is not in `kept` (``PlannedPaths/holds(_:)``):
    /// its input is gone, or left out of the inputs now; its variant or size was removed or
    /// renamed, or its path template changed; or it is a size now larger than its input
    /// (whose file, made from a wider input or enlarged by an older blurfarm, would tell a
    /// `srcset` a width it does not have). Never a file the plan reads (an old output folder
    /// now among the inputs): it is no output any more. Paths are compared by their bytes
    /// (`é`, and `e` with a combining accent, are two files). The recorded paths are read one
    /// after another and only the orphans' records are read, sorted by their paths' bytes.
    static func orphans(in records: OutputRecords, kept: PlannedPaths) -> [OutputRecord] {
        var orphaned: [String] = []
        records.forEachOutput { if !kept.holds($0) { orphaned.append($0) } }
        return records.records(at: orphaned).sorted { RealPath.Identity.Bytes($0.output) < .init($1.output) }
    }

    /// Takes the recorded output at `path` (as planned) out of what the job vouches for: its
    /// file removed when it is as blurfarm wrote it (a file changed since is left, only its
    /// record goes), its record removed. For outputs whose regions could not be had this run
    /// (``JobPlan/regionFailed``): a photo redacted with other boxes than the ones it has now
    /// is not left published as current. Nil when the job recorded nothing there.
    /// - Throws: ``StateError`` when the file or the record cannot be removed.
    public func withdraw(_ path: String) throws(StateError) -> Pruned? {
        let output = absolute(path)
        guard let record = records.record(for: output) else { return nil }
        let action: Pruned.Action
        if !Self.exists(output) {
            action = .alreadyGone
        } else if Self.isUnchanged(output, as: record.outputFile) {
            do throws(SystemCallError) {
                try Syscalls.removeFile(output)
            } catch {
                throw StateError(path: output, message: "cannot remove: \(error.reason)")
            }
            action = .removed
        } else {
            action = .keptChanged
        }
        try records.remove(output: output)
        return Pruned(output: output, action: action)
    }

    /// Why ``prune(_:)`` should not remove `orphans` (``orphans()``) without being forced, or
    /// nil when it may: when an input
    /// glob whose fixed folder is missing, or that matches no file, matched the inputs of
    /// outputs that would be removed; or when more than ``pruneShareLimit`` of the recorded
    /// outputs would be removed. Outputs already gone do not count (only their records would go).
    public func pruneRefusal(_ orphans: [OutputRecord]) -> PruneRefusal? {
        let removable = orphans.filter { Self.exists($0.output) }
        if removable.isEmpty { return nil }
        for (glob, folder, shownFolder, matches) in inputGlobs where !matches {
            let matched = removable.filter { record in
                let relative: String
                if record.input == folder {
                    relative = glob.fixedPrefix
                } else if record.input.hasPrefix(folder == "/" ? "/" : folder + "/") {
                    let rest = record.input.dropFirst(folder == "/" ? 1 : folder.count + 1)
                    relative = glob.belowFixedPrefix(String(rest))
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
        let recorded = records.count
        if Double(removable.count) > Double(recorded) * Self.pruneShareLimit {
            return .tooMany(outputs: removable.count, recorded: recorded)
        }
        return nil
    }

    /// Removes `orphans` (``orphans()``), the outputs this job recorded that the current plan
    /// does not write (``orphans(in:kept:)``:
    /// their input gone or left out, their variant, size or path changed, a size now larger
    /// than their input), and their records;
    /// then every folder blurfarm created that is empty now (each checked to be the folder
    /// created: same device and inode), and their records. Only recorded outputs are
    /// touched, never one the current plan still writes; a file that was changed since it was
    /// written is left in place (its record is dropped); a folder that holds anything, or that
    /// blurfarm did not create, is never removed. Check ``pruneRefusal(_:)`` first.
    /// - Throws: ``StateError`` when a file, a folder or the records cannot be removed.
    public func prune(_ orphans: [OutputRecord]) throws(StateError) -> PruneResult {
        // Failures remembered of inputs that are gone: nothing left to skip.
        for failure in records.failures where Syscalls.status(failure.input) == nil {
            try records.remove(failure: failure.input)
        }
        var outputs: [Pruned] = []
        for record in orphans {
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
}
