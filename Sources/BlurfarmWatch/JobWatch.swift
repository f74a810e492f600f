import BlurfarmCoordinator
import BlurfarmCore
import BlurfarmManifest
import BlurfarmSystem

/// `blurfarm run --watch`: the ordinary run, then the jobs' input folders watched with
/// inotify (``FolderWatcher``), and a job run again, with the same records, lock, atomic
/// writes and up-to-date checks, once the changes to its inputs have been quiet for
/// ``quietPeriod`` and no file of them is still being written. An input folder that is
/// replaced (removed and made again, renamed over, a parent renamed, remounted) is watched again
/// at its path, and its job run again; one that does not come back within
/// ``folderReturnWait`` ends the watch. Ends when `stop` is requested (SIGTERM, SIGINT).
public struct JobWatch {
    /// How long a job's inputs must be quiet (no file a glob matches written to, closed, moved
    /// in or away, or removed; no folder made or removed) before the job runs again: a file
    /// copied in over several seconds is rendered once, after its last write, and a batch of
    /// files copied together is one run. Documented in docs/commands.md.
    public static let quietPeriod: Duration = .seconds(1)

    /// How long a file that is written to and not closed yet (no `IN_CLOSE_WRITE`) holds its
    /// job back after its last write: a slow writer's file is decoded once it is closed, not
    /// half-written between two writes; a file held open and still for longer than this (a
    /// writer that hangs) is taken as it is. Documented in docs/commands.md.
    public static let unclosedFileWait: Duration = .seconds(30)

    /// How long an input folder that went away (removed, renamed, unmounted) is waited for, a
    /// folder at its path watched as soon as there is one: a restore or a deploy that makes it
    /// again takes moments; a folder still missing after this ends the watch with status 1.
    /// Documented in docs/commands.md.
    public static let folderReturnWait: Duration = .seconds(10)

    /// How long the watch waits for changes before it looks at the stop request again, in
    /// milliseconds: SIGTERM ends an idle watch within this.
    public static let stopCheckInterval: Int32 = 100

    /// Set by SIGTERM or SIGINT.
    let stop: StopRequest
    /// Told a warning, in words, when a watched folder was replaced and is watched again at its path.
    let warn: (String) -> Void

    public init(stop: StopRequest, warn: @escaping (String) -> Void) {
        self.stop = stop
        self.warn = warn
    }

    /// Runs every job of `plans` once with `runJob` (its index, its plan), then each again
    /// (planned anew by `replan`, which returns nil for a plan refused now) as its inputs
    /// change, until `stop` is requested. A glob that matches no file is a warning here: the
    /// files may be on their way.
    /// - Throws: ``FolderWatcher/Failure`` when a folder cannot be watched, or an input folder
    ///   went away and did not come back in time.
    public func run(_ plans: [JobPlan], runJob: (Int, JobPlan) -> Void, replan: (JobPlan) -> JobPlan?)
        throws(FolderWatcher.Failure)
    {
        let folders = plans.map { Self.watchedFolders($0) }
        // Watched before the first run, so that nothing that arrives during it is missed.
        let watcher = try FolderWatcher(returnWait: Self.folderReturnWait)
        for (folder, hidden) in folders.joined() { try watcher.watchTree(folder, hidden: hidden) }
        for (index, plan) in plans.enumerated() {
            var plan = plan
            plan.unmatchedGlobs = plan.unmatchedGlobs.map { diagnostic in
                var warning = diagnostic
                if warning.severity == .error { warning.severity = .warning }
                return warning
            }
            runJob(index, plan)
        }
        let globs = plans.map { plan in
            (inputs: plan.job.inputs.compactMap { try? GlobPattern($0) }, exclude: plan.job.exclude.compactMap { try? GlobPattern($0) })
        }
        // Each job's region files (`regions: {from: …}`) as its last plan looked for them: one
        // changed, made or removed runs the job again, as an input does.
        // (Paths as the planner makes them from the job's folder, as the watcher's are.)
        var regionFiles = plans.map { Set($0.regionFiles) }
        var waiting: Set<Int> = []
        var lastChange = ContinuousClock.now
        // Each job's input files written to and not closed yet, with the time of their last write.
        var beingWritten = [[String: ContinuousClock.Instant]](repeating: [:], count: plans.count)
        while stop.signalNumber == nil {
            let found = try watcher.changes(waitingAtMost: Self.stopCheckInterval)
            for change in found.changes {
                for (index, plan) in plans.enumerated() {
                    // As relative globs see it, and as absolute ones do.
                    let spellings = [Self.relative(change.path, to: plan.folder)].compactMap { $0 }
                        + (change.path.hasPrefix("/") ? [change.path] : [])
                    guard !spellings.isEmpty else { continue }
                    let matched = spellings.contains { path in
                        globs[index].inputs.contains { $0.matches(path) } && !globs[index].exclude.contains { $0.matches(path) }
                    } || regionFiles[index].contains(change.path)
                    if change.isFolder || matched {
                        waiting.insert(index)
                        lastChange = .now
                    }
                    if matched, !change.isFolder { beingWritten[index][change.path] = change.isBeingWritten ? .now : nil }
                }
            }
            if found.overflowed {
                waiting.formUnion(plans.indices)
                lastChange = .now
            }
            // A folder away: its files' writes will never be seen closing. One watched again:
            // everything in it may have changed, so its jobs look (planned afresh, as ever).
            for folder in found.lost + found.watchedAgain {
                for index in plans.indices {
                    beingWritten[index] = beingWritten[index].filter { !FolderWatcher.isInside($0.key, folder) }
                }
            }
            for folder in found.watchedAgain {
                warn(
                    "the watched folder '\(ShownName.of(folder))' was replaced (removed, renamed or remounted): "
                        + "watching the folder now at its path, and looking for what changed")
                for index in plans.indices where folders[index].contains(where: { $0.folder == folder }) {
                    waiting.insert(index)
                    lastChange = .now
                }
            }
            guard !waiting.isEmpty, ContinuousClock.now - lastChange >= Self.quietPeriod else { continue }
            let lost = watcher.lostFolders
            for index in waiting.sorted() where stop.signalNumber == nil {
                // Held while a file is still being written, or a folder of the job is away
                // (its run would see its inputs gone).
                if beingWritten[index].values.contains(where: { ContinuousClock.now - $0 < Self.unclosedFileWait }) { continue }
                if folders[index].contains(where: { lost.contains($0.folder) }) { continue }
                waiting.remove(index)
                beingWritten[index] = [:]
                guard var plan = replan(plans[index]) else { continue }
                regionFiles[index] = Set(plan.regionFiles)
                plan.unmatchedGlobs = []  // said once, at the start
                runJob(index, plan)
            }
        }
    }

    /// The folders to watch for `plan`: each input glob's fixed folder, with the folders below
    /// it; hidden ones too when the glob names a hidden name below its fixed folder, or a
    /// variant's region files are in a hidden folder beside their input (`from:
    /// .faces/{stem}.json`: a region file arriving there must run the job, or the photo stays
    /// published unredacted).
    static func watchedFolders(_ plan: JobPlan) -> [(folder: String, hidden: Bool)] {
        var folders: [(folder: String, hidden: Bool)] = []
        let hiddenRegionFiles = plan.job.outputs.contains { variant in
            guard let text = variant.regionFile?.path.text else { return false }
            return text.hasPrefix(".") || text.contains("/.")
        }
        for glob in plan.job.inputs.compactMap({ try? GlobPattern($0) }) {
            let folder = glob.fixedPrefix.isEmpty ? plan.folder : JobPlanner.join(plan.folder, glob.fixedPrefix)
            let below = glob.text.dropFirst(glob.fixedPrefix.count)
            let hidden = below.hasPrefix(".") || below.contains("/.") || hiddenRegionFiles
            if let k = folders.firstIndex(where: { $0.folder == folder }) {
                folders[k].hidden = folders[k].hidden || hidden
            } else {
                folders.append((folder, hidden))
            }
        }
        return folders
    }

    /// `path` relative to the job's folder `base` (as the globs see it), nil when outside it.
    static func relative(_ path: String, to base: String) -> String? {
        if base == "." { return path.hasPrefix("/") ? nil : path }
        return path.hasPrefix(base + "/") ? String(path.dropFirst(base.count + 1)) : nil
    }
}
