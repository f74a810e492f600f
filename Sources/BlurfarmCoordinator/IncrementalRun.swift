import Foundation

/// The up-to-date side of a run: before the runner sees the plan, ``init(plan:records:versions:force:)``
/// takes out every output that is up to date (reported `skipped`, its input not decoded for it);
/// while the runner works, ``recordWritten(_:)`` records each output it wrote; after, ``prune()``
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
    public func recordWritten(_ report: OutputReport) throws(StateError) {
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

    /// Removes the outputs this job recorded whose input no longer exists, and their records.
    /// Only recorded outputs are touched, never one the current plan still writes; a file that
    /// was changed since it was written is left in place (its record is dropped).
    /// - Throws: ``StateError`` when a file or the records cannot be removed.
    public func prune() throws(StateError) -> [Pruned] {
        let planned = Set(plannedOutputs.map(Self.absolute))
        var result: [Pruned] = []
        for record in records.all where !planned.contains(record.output) {
            guard !FileManager.default.fileExists(atPath: record.input) else { continue }
            let action: Pruned.Action
            if FileStamp.of(record.output) == nil && !FileManager.default.fileExists(atPath: record.output) {
                action = .alreadyGone
            } else if Self.isUnchanged(record.output, as: record.outputFile) {
                guard unlink(record.output) == 0 else {
                    throw StateError(path: record.output, message: "cannot remove: \(String(cString: strerror(errno)))")
                }
                action = .removed
            } else {
                action = .keptChanged
            }
            try records.remove(output: record.output)
            result.append(Pruned(output: record.output, action: action))
        }
        return result
    }

    /// `path` made absolute against the working directory, its folder resolved as the kernel
    /// resolves it (links, `.`, `..`): records name files, not spellings, so the same manifest
    /// reached through a linked folder finds its records.
    static func absolute(_ path: String) -> String {
        RealPath.resolveFolder(of: path)
    }
}
