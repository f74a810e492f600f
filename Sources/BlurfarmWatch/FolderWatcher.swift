import BlurfarmSystem
import BlurfarmCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Watches folder trees with inotify for files that are written, moved in, moved away or
/// removed (`blurfarm run --watch`). A folder that appears in a watched tree is watched as it
/// appears, with the folders already in it. A watched tree's folder (as given to
/// ``watchTree(_:hidden:)``) that is removed, renamed away or unmounted, or whose path comes to
/// name another folder (a parent renamed, a file system mounted over it), is found out (at once
/// from inotify's events on it, within ``identityCheckInterval`` otherwise) and watched again
/// as soon as a folder stands at its path; one that stays away longer than `returnWait` is a
/// ``Failure``. Not thread-safe: one owner reads its changes.
public final class FolderWatcher {
    /// A folder that could not be watched: which, the system call and why; or a watched folder
    /// that went away and did not come back in time.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// The folder, as given.
        public let folder: String
        /// The failed call and its errno (`inotify_add_watch`; `stat` for a folder that did not
        /// come back).
        package let cause: SystemCallError
        /// For a watched folder that went away, how long it was waited for; nil otherwise.
        public var waited: Duration? = nil

        /// One line naming the folder, escaped.
        public var description: String {
            let shown = ShownName.of(folder)
            if let waited {
                return "the watched folder '\(shown)' went away (removed, renamed or unmounted) and no folder came back "
                    + "at its path within \(waited.components.seconds) seconds: "
                    + "\(cause.reason)"
            }
            let hint = cause.errno == ENOSPC ? " (the system's limit of watched folders, fs.inotify.max_user_watches)" : ""
            return "cannot watch the folder '\(shown)': \(cause.reason)\(hint)"
        }
    }

    /// Something that happened in a watched folder.
    public struct Change: Sendable, Hashable {
        /// The path of the file or folder concerned: the watched folder's path as given, `/`,
        /// the name (bytes that are not UTF-8 as ``PathEncoding`` carries them).
        public let path: String
        /// Whether it is a folder.
        public let isFolder: Bool
        /// Whether a file is being written: it was made (a regular file, not a link) or written
        /// to, and not closed yet (`IN_CREATE`, `IN_MODIFY`); more may come. False for a file closed
        /// after writing (`IN_CLOSE_WRITE`), moved in or away, or removed: it is complete, or gone.
        public var isBeingWritten: Bool = false
    }

    /// What ``changes(waitingAtMost:)`` found.
    public struct Batch: Sendable {
        /// The changes, in the order they happened.
        public var changes: [Change] = []
        /// Whether the kernel dropped events (too many at once): anything may have changed.
        public var overflowed = false
        /// The watched trees' folders (as given) found gone or replaced: nothing in them is seen
        /// until they are watched again (``lostFolders``).
        public var lost: [String] = []
        /// The watched trees' folders watched again: the folder that now stands at the path
        /// of one that went away. Anything in them may have changed meanwhile.
        public var watchedAgain: [String] = []
    }

    /// How often the watched trees' folders are checked to still be the folders at their paths
    /// when inotify says nothing about them (a parent renamed or replaced, a file system
    /// mounted over one: inotify tells the watched folder nothing of these).
    public static let identityCheckInterval: Duration = .seconds(1)

    /// What a watched folder reports: a file written (and closed), moved in or away, removed;
    /// a folder made, moved or removed; the folder itself removed or moved (`IN_IGNORED` and
    /// `IN_UNMOUNT` come whatever is asked).
    static let events = UInt32(
        IN_CLOSE_WRITE | IN_MODIFY | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF)

    /// A watched folder: its path, whether its tree's hidden folders are watched, and which
    /// folder was at that path when the watch began.
    private struct Watched {
        let path: String
        let hidden: Bool
        let identity: Syscalls.FolderIdentity?
    }

    /// A tree's folder as given to ``watchTree(_:hidden:)``: its watch, which folder it
    /// watches, and since when it has been away (nil while it is watched).
    private struct Tree {
        let path: String
        var hidden: Bool
        var watch: Int32
        var identity: Syscalls.FolderIdentity?
        var lostSince: ContinuousClock.Instant?
    }

    private let descriptor: Int32
    /// How long a tree's folder that went away is waited for.
    private let returnWait: Duration
    /// Each watch's folder; hidden folders only when `hidden` was asked for its tree.
    private var folders: [Int32: Watched] = [:]
    private var trees: [Tree] = []
    private var lastIdentityCheck = ContinuousClock.now

    /// An inotify instance with nothing watched yet; a watched tree's folder that goes away is
    /// waited for `returnWait` before ``changes(waitingAtMost:)`` fails.
    public init(returnWait: Duration) throws(Failure) {
        self.returnWait = returnWait
        do {
            descriptor = try Syscalls.inotifyStart()
        } catch {
            throw Failure(folder: "", cause: error)
        }
    }

    deinit { Syscalls.close(descriptor) }

    /// The watched trees' folders (as given) that are away now: removed, renamed or replaced,
    /// and no folder watched at their path yet.
    public var lostFolders: [String] { trees.filter { $0.lostSince != nil }.map(\.path) }

    /// Watches the folder `path` and every folder below it (hidden ones, whose names start
    /// with `.`, only when `hidden`), and keeps watching the folder at that path if it is
    /// replaced.
    /// - Throws: ``Failure`` for a folder that cannot be watched (missing, unreadable, too
    ///   many watches); a folder below it that vanishes meanwhile is skipped.
    public func watchTree(_ path: String, hidden: Bool) throws(Failure) {
        let watch = try watchFolders(path, hidden: hidden)
        if let k = trees.firstIndex(where: { $0.path == path }) {
            trees[k].hidden = trees[k].hidden || hidden
        } else {
            trees.append(Tree(path: path, hidden: hidden, watch: watch, identity: Syscalls.folderIdentity(path)))
        }
    }

    /// Watches the folder `path` and the folders below it; returns the watch of `path`.
    @discardableResult
    private func watchFolders(_ path: String, hidden: Bool) throws(Failure) -> Int32 {
        var first: Int32 = -1
        var pending = [path]
        while let folder = pending.popLast() {
            let watch: Int32
            do {
                watch = try Syscalls.inotifyWatch(descriptor, folder, mask: Self.events)
            } catch where folder != path && (error.errno == ENOENT || error.errno == ENOTDIR) {
                continue
            } catch {
                throw Failure(folder: folder, cause: error)
            }
            if folder == path { first = watch }
            folders[watch] = Watched(path: folder, hidden: hidden, identity: Syscalls.folderIdentity(folder))
            guard let entries = try? Syscalls.entries(ofFolder: PathEncoding.bytes(folder)) else { continue }
            for entry in entries where entry.isFolder && (hidden || entry.name.first != UInt8(ascii: ".")) {
                pending.append(folder + "/" + PathEncoding.decode(entry.name).text)
            }
        }
        return first
    }

    /// The changes that happen within `milliseconds` (none when nothing did; it returns as soon
    /// as something did). A folder that appears is watched from then on, with the folders in
    /// it (one that is gone again is skipped; a failure to watch one is thrown, as the watch
    /// can no longer see everything it promised). A tree's folder that went away is in the
    /// batch's `lost`, and in its `watchedAgain` once a folder at its path is watched.
    /// - Throws: ``Failure`` when a folder cannot be watched, or a tree's folder has been away
    ///   longer than `returnWait` (its `waited` set).
    public func changes(waitingAtMost milliseconds: Int32) throws(Failure) -> Batch {
        var batch = Batch()
        let events: [Syscalls.InotifyEvent]
        do {
            events = try Syscalls.waitReadable(descriptor, milliseconds: milliseconds) ? Syscalls.inotifyEvents(descriptor) : []
        } catch {
            throw Failure(folder: "", cause: error)
        }
        var newFolders: [(String, Bool)] = []
        // A folder removed, moved or unmounted: which folders stand where is checked below.
        var moved = false
        for event in events {
            if event.mask & UInt32(IN_Q_OVERFLOW) != 0 { batch.overflowed = true }
            if event.mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT | IN_IGNORED) != 0 { moved = true }
            if event.mask & UInt32(IN_IGNORED) != 0 { folders[event.watch] = nil }
            guard let folder = folders[event.watch], !event.name.isEmpty else { continue }
            let path = folder.path + "/" + PathEncoding.decode(event.name).text
            let isFolder = event.mask & UInt32(IN_ISDIR) != 0
            let writing = event.mask & UInt32(IN_MODIFY) != 0
                || (event.mask & UInt32(IN_CREATE) != 0 && !isFolder && Syscalls.isFileBeingMade(path))
            batch.changes.append(Change(path: path, isFolder: isFolder, isBeingWritten: writing))
            if isFolder, event.mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0,
                folder.hidden || event.name.first != UInt8(ascii: ".")
            {
                newFolders.append((path, folder.hidden))
            }
        }
        for (path, hidden) in newFolders {
            do {
                try watchFolders(path, hidden: hidden)
            } catch where error.cause.errno == ENOENT || error.cause.errno == ENOTDIR {
                continue
            }
        }
        if moved { try checkFolders(into: &batch) }
        if moved || !lostFolders.isEmpty || ContinuousClock.now - lastIdentityCheck >= Self.identityCheckInterval {
            try checkTrees(into: &batch)
        }
        return batch
    }

    /// Stops the watches whose folder is no longer the one at their path (moved away, removed,
    /// unmounted); watches the folder that stands there instead, if any, as a change (outside
    /// a tree's folder that went away, which ``checkTrees(into:)`` handles).
    private func checkFolders(into batch: inout Batch) throws(Failure) {
        // Inside a tree whose own folder changed, everything is watched again with that folder.
        let changedTrees = trees.filter { $0.lostSince == nil && Syscalls.folderIdentity($0.path) != $0.identity }.map(\.path)
        var replaced: [(String, Bool)] = []
        for (watch, folder) in folders.sorted(by: { $0.value.path < $1.value.path }) {
            let now = Syscalls.folderIdentity(folder.path)
            guard now != folder.identity else { continue }
            Syscalls.inotifyUnwatch(descriptor, watch)
            folders[watch] = nil
            if now != nil, !changedTrees.contains(where: { Self.isInside(folder.path, $0) }) {
                replaced.append((folder.path, folder.hidden))
            }
        }
        for (path, hidden) in replaced {
            do {
                try watchFolders(path, hidden: hidden)
                batch.changes.append(Change(path: path, isFolder: true))
            } catch where error.cause.errno == ENOENT || error.cause.errno == ENOTDIR {
                continue
            }
        }
    }

    /// Checks that each tree's folder is still the folder at its path: one that is not is lost
    /// (its watches, and those of the trees inside it, stopped), and watched again as soon
    /// as a folder stands there.
    /// - Throws: ``Failure`` when one has been away longer than `returnWait`, or cannot be
    ///   watched again (unreadable, too many watches).
    private func checkTrees(into batch: inout Batch) throws(Failure) {
        let now = ContinuousClock.now
        lastIdentityCheck = now
        for k in trees.indices where trees[k].lostSince == nil {
            let tree = trees[k].path
            // Another folder (or none) at its path, or its own watch gone (removed, unmounted).
            guard Syscalls.folderIdentity(tree) != trees[k].identity || folders[trees[k].watch] == nil else { continue }
            // This tree and those inside it (their paths now lead through another folder).
            for j in trees.indices where trees[j].lostSince == nil && Self.isInside(trees[j].path, tree) {
                trees[j].lostSince = now
                batch.lost.append(trees[j].path)
            }
            for (watch, folder) in folders where Self.isInside(folder.path, tree) {
                Syscalls.inotifyUnwatch(descriptor, watch)
                folders[watch] = nil
            }
        }
        for k in trees.indices {
            guard let since = trees[k].lostSince else { continue }
            if Syscalls.folderIdentity(trees[k].path) != nil {
                do {
                    trees[k].watch = try watchFolders(trees[k].path, hidden: trees[k].hidden)
                    trees[k].identity = Syscalls.folderIdentity(trees[k].path)
                    trees[k].lostSince = nil
                    batch.watchedAgain.append(trees[k].path)
                    continue
                } catch where error.cause.errno == ENOENT || error.cause.errno == ENOTDIR {
                    // Gone again already: waited for as before.
                }
            }
            if now - since > returnWait {
                // Nothing there, or something that is not a folder.
                let errno = Syscalls.status(trees[k].path) == nil ? ENOENT : ENOTDIR
                var failure = Failure(folder: trees[k].path, cause: SystemCallError(call: "stat", errno: errno))
                failure.waited = returnWait
                throw failure
            }
        }
    }

    /// Whether `path` is the folder `folder` or below it (both as given, compared as text).
    public static func isInside(_ path: String, _ folder: String) -> Bool {
        path == folder || path.hasPrefix(folder.hasSuffix("/") ? folder : folder + "/")
    }
}
