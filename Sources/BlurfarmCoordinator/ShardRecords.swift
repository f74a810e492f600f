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
    /// job's records for the outputs and inputs of `plan` (the shard's part), in one
    /// transaction. The job's index is looked up ``OutputRecords/lookUpChunk`` of the plan's
    /// inputs at a time, as a run looks its records up: a shard reads in proportion to its
    /// part, not to the job (job records of an earlier format are read whole, ``readable(_:)``).
    /// Hold the shard's lock (its folder's ``JobStateFolder/lockPath``).
    /// - Throws: ``StateError`` when either records file cannot be read or written.
    public static func open(_ shard: JobShard, of job: JobStateFolder, plan: JobPlan) throws(StateError) -> OutputRecords {
        try open(shard, of: job, plan: plan, batch: OutputRecords.lookUpChunk)
    }

    /// ``open(_:of:plan:)``, looking up `batch` inputs together.
    static func open(_ shard: JobShard, of job: JobStateFolder, plan: JobPlan, batch: Int) throws(StateError) -> OutputRecords {
        let records = try OutputRecords(folder: job.shard(shard).path)
        /// Whether a record is of an output that `inputs` write, under the input that writes it
        /// (a record under another input is not that output's to the run: not taken).
        func writtenBy(_ inputs: some Sequence<PlannedInput>) -> (OutputRecord) -> Bool {
            var writer: [RealPath.Identity.Bytes: RealPath.Identity.Bytes] = [:]
            for input in inputs {
                let path = RealPath.Identity.Bytes(IncrementalRun.absolute(input.path))
                for output in input.outputs { writer[.init(IncrementalRun.absolute(output.path))] = path }
            }
            return { writer[.init($0.output)] == .init($0.input) }
        }
        let index = try readable(job.path)
        let jobs = try index.foldersAndFailures()
        var first = 0
        let next = { () throws(StateError) -> OutputRecords.Overlay? in
            guard first < plan.inputs.count else { return nil }
            let inputs = Array(plan.inputs[first..<min(first + batch, plan.inputs.count)])
            first += inputs.count
            let found = try index.lookUp(recordsOf: inputs.map { IncrementalRun.absolute($0.path) }, failures: false)
            return OutputRecords.Overlay(records: Array(found.records.values), takes: writtenBy(inputs))
        }
        // The plan's inputs among those with a failure remembered (few), for the failures.
        let failed = Set(try records.foldersAndFailures().failures.keys).union(jobs.failures.keys)
        var plannedFailed: Set<RealPath.Identity.Bytes> = []
        for input in failed.isEmpty ? [] : plan.inputs {
            let path = RealPath.Identity.Bytes(IncrementalRun.absolute(input.path))
            if failed.contains(path) { plannedFailed.insert(path) }
        }
        try records.layOver(
            next, failures: jobs.failures.values.filter { plannedFailed.contains(.init($0.input)) },
            folders: Array(jobs.folders.values), forgetting: plannedFailed.contains)
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
    /// shards' folders skipped because they are running. Each shard's records are laid over the
    /// job's in one transaction, ``mergePage`` of them at a time in their inputs' order, each
    /// looked up in the job's by its output's path: memory holds a page, whatever the job's size.
    /// - Throws: ``StateError`` when a records file cannot be read or written, or a shard's lock
    ///   taken; the shard's records then stay, none of them merged.
    @discardableResult
    public static func merge(_ job: JobStateFolder, into records: OutputRecords, page: Int = mergePage) throws(StateError) -> [String] {
        var running: [String] = []
        for shard in job.shardFolders where OutputRecords.exist(in: shard.path) {
            switch try JobLock.acquire(shard.lockPath, wait: false) {
            case .busy:
                running.append(shard.path)
            case .acquired(let lock):
                try withExtendedLifetime(lock) { () throws(StateError) in
                    try layOver(shard, on: records, page: page)
                    try OutputRecords.removeFiles(in: shard.path)
                }
            }
        }
        return running
    }

    /// A shard's records read a page at a time when merged (``merge(_:into:page:)``) or laid
    /// over the job's to be read (``overlaid(_:)``): 4,096 records, a few MB, one statement each.
    public static let mergePage = 4096

    /// Lays the records of the shard in `shard` (migrated first, if an earlier blurfarm wrote
    /// them) over `records`, closing them before they are removed; then the inputs' sizes it
    /// kept (``InputSizes``), ``OutputRecords/sizesPage`` at a time, each replacing the job's
    /// (read later, or of an input the job had none of). The sizes are a cache: a merge
    /// killed between the two transactions costs the next plan those headers.
    private static func layOver(_ shard: JobStateFolder, on records: OutputRecords, page: Int) throws(StateError) {
        let source = try OutputRecords(folder: shard.path)
        try layOver(source, on: records, page: page)
        var last: String?
        var ended = false
        try records.keepSizes { () throws(StateError) -> [KeptSize]? in
            guard !ended else { return nil }
            let sizes = try source.sizesPage(after: last, limit: OutputRecords.sizesPage)
            ended = sizes.count < OutputRecords.sizesPage
            last = sizes.last?.input
            return sizes
        }
    }

    /// Lays every record of `source` over `records` (``OutputRecords/layOver(_:failures:folders:forgetting:)``),
    /// `page` of them at a time in their inputs' order.
    private static func layOver(_ source: OutputRecords, on records: OutputRecords, page size: Int) throws(StateError) {
        let remembered = try source.foldersAndFailures()
        var last: (input: String, output: String)?
        var ended = false
        try records.layOver(
            { () throws(StateError) -> OutputRecords.Overlay? in
                guard !ended else { return nil }
                let page = try source.page(after: last, limit: size)
                ended = page.count < size
                guard let end = page.last else { return nil }
                last = (end.input, end.output)
                return OutputRecords.Overlay(records: page)
            }, failures: Array(remembered.failures.values), folders: Array(remembered.folders.values), forgetting: { _ in true })
    }

    /// The records in `folder` to be read, changing nothing: its index, or, where an earlier
    /// blurfarm kept them (a `records.jsonl`, an index not yet migrated), all of them read and
    /// put in a temporary index (``OutputRecords/temporary()``), as the next run will see them.
    private static func readable(_ folder: String) throws(StateError) -> OutputRecords {
        if let index = try OutputRecords.reading(folder: folder) { return index }
        let whole = try OutputRecords.read(folder: folder)
        let index = try OutputRecords.temporary()
        var records: [OutputRecord]? = Array(whole.records.values)
        try index.layOver(
            { () throws(StateError) -> OutputRecords.Overlay? in
                defer { records = nil }
                return records.map { OutputRecords.Overlay(records: $0) }
            }, failures: Array(whole.failures.values), folders: Array(whole.folders.values), forgetting: { _ in true })
        return index
    }

    /// The records of the job in `job` with those of its shards laid over them, as the next
    /// plain run will see them (``merge(_:into:page:)``'s rule), read without changing anything
    /// (`slurm status`, `check --status` while shards' records wait): in a temporary index
    /// (``OutputRecords/temporary()``), each folder's records laid over it ``mergePage`` at a
    /// time, so that memory holds a page, whatever the job's size.
    /// - Throws: ``StateError`` when a records file cannot be read.
    public static func overlaid(_ job: JobStateFolder) throws(StateError) -> OutputRecords {
        try overlaid(job, page: mergePage)
    }

    /// ``overlaid(_:)``, `page` records at a time.
    static func overlaid(_ job: JobStateFolder, page: Int) throws(StateError) -> OutputRecords {
        let records = try OutputRecords.temporary()
        for folder in [job] + job.shardFolders where OutputRecords.exist(in: folder.path) {
            try layOver(try readable(folder.path), on: records, page: page)
        }
        return records
    }

    /// Whether a shard of the job in `job` holds records not merged into the job's yet.
    public static func waiting(_ job: JobStateFolder) -> Bool {
        job.shardFolders.contains { OutputRecords.exist(in: $0.path) }
    }
}
