import BlurfarmState
import BlurfarmSystem
import Foundation

extension JobStateFolder {
    /// The folders of the job's shards: `shards/` in the job's folder.
    var shardsPath: String { (path as NSString).appendingPathComponent("shards") }

    /// Creates the folder `path` (and its parents) for files of blurfarm's own, checked as the
    /// state folder's are (``openFolder(_:)``): not a symbolic link, the running user's, not
    /// writable by others. `slurm submit`'s run folder, whose scripts Slurm runs.
    /// - Throws: ``StateError`` naming the folder.
    public static func makeFolder(_ path: String) throws(StateError) {
        close(try openFolder(path))
    }

    /// The lock a run of `shard` of this job takes: the shard's own; the job's for nil.
    public func lockPath(shard: JobShard?) -> String {
        shard.map { self.shard($0).lockPath } ?? lockPath
    }

    /// The folders of this job's shards (`shards/<I>-of-<N>/`) there are, in name order.
    var shardFolders: [JobStateFolder] {
        ((try? FileManager.default.contentsOfDirectory(atPath: shardsPath)) ?? []).sorted()
            .filter { $0.wholeMatch(of: /[0-9]+-of-[0-9]+/) != nil }
            .map { JobStateFolder(path: (shardsPath as NSString).appendingPathComponent($0)) }
    }

    /// The folder of `shard` of this job, `shards/<I>-of-<N>/`: its own lock and records, so
    /// that shards running at once on several hosts never take the job's lock nor write one file.
    public func shard(_ shard: JobShard) -> JobStateFolder {
        JobStateFolder(path: (shardsPath as NSString).appendingPathComponent("\(shard.index)-of-\(shard.count)"))
    }
}

/// The records of a job's shards (`run --shard`) and how they meet the job's own.
///
/// A shard records into its own folder (``JobStateFolder/shard(_:)``), under its own lock; when
/// it opens its records (``open(_:of:plan:)``) it first brings them up to date with the job's
/// for its outputs, so that what a plain run wrote is up to date for the shard too. A plain run
/// (and `slurm finish`), holding the job's lock, merges the records of every shard not running
/// into the job's and removes them (``openMerging(_:)``), so that it sees what the shards wrote.
/// Between two copies of one output's record the later written wins; a remembered failure of
/// an input goes when an output of that input was written after it.
public enum ShardRecords {
    /// The records a run of `plan` keeps for the job in `job`: for a shard (`plan` its part),
    /// the shard's (``open(_:of:plan:)``); for the whole job (nil), the job's with its shards'
    /// merged into them (``openMerging(_:)``). Hold the lock of ``JobStateFolder/lockPath(shard:)``.
    /// - Throws: ``StateError`` when a records file cannot be read or written.
    public static func records(_ job: JobStateFolder, shard: JobShard?, plan: JobPlan) throws(StateError) -> OutputRecords {
        guard let shard else { return try openMerging(job) }
        return try open(shard, of: job, plan: plan)
    }

    /// The records of `shard` of the job whose folder is `job`, brought up to date with the
    /// job's records for the outputs and inputs of `plan` (the shard's part). Hold the shard's
    /// lock (its folder's ``JobStateFolder/lockPath``).
    /// - Throws: ``StateError`` when either records file cannot be read or written.
    public static func open(_ shard: JobShard, of job: JobStateFolder, plan: JobPlan) throws(StateError) -> OutputRecords {
        let records = try OutputRecords(folder: job.shard(shard).path)
        let jobs = try OutputRecords.read(folder: job.path)
        try bringUp(
            records, to: jobs, outputs: Set(plan.inputs.flatMap(\.outputs).map { .init(IncrementalRun.absolute($0.path)) }),
            inputs: Set(plan.inputs.map { .init(IncrementalRun.absolute($0.path)) }))
        return records
    }

    /// The job's records (in `job`), with the records of every shard of the job that is not
    /// running merged into them; each merged shard's records file is removed. Hold the job's lock.
    /// - Throws: ``StateError`` when a records file cannot be read or written, or a shard's lock taken.
    public static func openMerging(_ job: JobStateFolder) throws(StateError) -> OutputRecords {
        let records = try OutputRecords(folder: job.path)
        try merge(job, into: records)
        return records
    }

    /// Merges the records of every shard of the job in `job` that is not running (its lock is
    /// free) into `records` (the job's), removing each shard's records once merged. Returns the
    /// shards' folders skipped because they are running.
    /// - Throws: ``StateError`` when a records file cannot be read or written, or a shard's lock taken.
    @discardableResult
    public static func merge(_ job: JobStateFolder, into records: OutputRecords) throws(StateError) -> [String] {
        var running: [String] = []
        for shard in job.shardFolders where OutputRecords.exist(in: shard.path) {
            switch try JobLock.acquire(shard.lockPath, wait: false) {
            case .busy:
                running.append(shard.path)
            case .acquired(let lock):
                try withExtendedLifetime(lock) { () throws(StateError) in
                    try bringUp(records, to: OutputRecords.read(folder: shard.path), outputs: nil, inputs: nil)
                    try OutputRecords.removeFiles(in: shard.path)
                }
            }
        }
        return running
    }

    /// Whether a shard of the job in `job` holds records not merged into the job's yet.
    public static func waiting(_ job: JobStateFolder) -> Bool {
        job.shardFolders.contains { OutputRecords.exist(in: $0.path) }
    }

    /// The records of the job in `job` with those of its shards merged into them, as the next
    /// plain run will see them, read without changing anything (`slurm status`).
    /// - Throws: ``StateError`` when a records file cannot be read.
    public static func read(_ job: JobStateFolder) throws(StateError) -> OutputRecords.Contents {
        var contents = try OutputRecords.read(folder: job.path)
        for shardFolder in job.shardFolders {
            let shard = try OutputRecords.read(folder: shardFolder.path)
            let changes = Changes(from: shard, over: contents, outputs: nil, inputs: nil)
            for record in changes.records { contents.records[.init(record.output)] = record }
            for failure in changes.failures { contents.failures[.init(failure.input)] = failure }
            for input in changes.forgottenFailures { contents.failures[input] = nil }
            for folder in changes.folders { contents.folders[.init(folder.path)] = folder }
        }
        return contents
    }

    /// Brings `records` up to date with `other` (``Changes``), for the outputs in `outputs` and
    /// the inputs in `inputs` (every one when nil), each path by its bytes.
    static func bringUp(
        _ records: OutputRecords, to other: OutputRecords.Contents, outputs: Set<RealPath.Identity.Bytes>?,
        inputs: Set<RealPath.Identity.Bytes>?
    ) throws(StateError) {
        let mine = OutputRecords.Contents(records: records.all, folders: records.folders, failures: records.failures)
        let changes = Changes(from: other, over: mine, outputs: outputs, inputs: inputs)
        try records.add(
            records: changes.records, failures: changes.failures, forgettingFailures: changes.forgottenFailures.map(\.text),
            folders: changes.folders)
    }

    /// What bringing records `mine` up to date with `other` changes, for the outputs in
    /// `outputs` and the inputs in `inputs` (every one when nil): a record of `other` written
    /// later than the one in `mine` (or with none there) is taken, a failure remembered later
    /// likewise; a failure in `mine` is forgotten when `other` wrote an output of that input
    /// after it failed; the folders `other` created that `mine` lacks are taken. Paths are
    /// compared by their bytes, and taken in their order.
    struct Changes {
        var records: [OutputRecord] = []
        var failures: [InputFailure] = []
        var forgottenFailures: [RealPath.Identity.Bytes] = []
        var folders: [CreatedFolder] = []

        init(
            from other: OutputRecords.Contents, over mine: OutputRecords.Contents, outputs: Set<RealPath.Identity.Bytes>?,
            inputs: Set<RealPath.Identity.Bytes>?
        ) {
            for (path, record) in other.records.sorted(by: { $0.key < $1.key }) where outputs?.contains(path) ?? true {
                if let kept = mine.records[path], kept.written >= record.written { continue }
                records.append(record)
            }
            for (input, failure) in other.failures.sorted(by: { $0.key < $1.key }) where inputs?.contains(input) ?? true {
                if let kept = mine.failures[input], kept.failed >= failure.failed { continue }
                failures.append(failure)
            }
            var lastWritten: [RealPath.Identity.Bytes: Date] = [:]
            for record in other.records.values {
                let input = RealPath.Identity.Bytes(record.input)
                lastWritten[input] = max(lastWritten[input] ?? .distantPast, record.written)
            }
            let taken = Set(failures.map { RealPath.Identity.Bytes($0.input) })
            for (input, failure) in mine.failures.sorted(by: { $0.key < $1.key }) where inputs?.contains(input) ?? true {
                if let written = lastWritten[input], written > failure.failed, !taken.contains(input) {
                    forgottenFailures.append(input)
                }
            }
            folders = other.folders.sorted(by: { $0.key < $1.key }).filter { mine.folders[$0.key] == nil }.map(\.value)
        }
    }
}
