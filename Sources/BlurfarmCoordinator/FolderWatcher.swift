import BlurfarmCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Watches folder trees with inotify for files that are written, moved in, moved away or
/// removed (`blurfarm run --watch`). A folder that appears in a watched tree is watched as it
/// appears, with the folders already in it. Not thread-safe: one owner reads its changes.
public final class FolderWatcher {
    /// A folder that could not be watched: which, the system call and why.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// The folder, as given.
        public let folder: String
        /// The failed call (`inotify_add_watch`).
        public let call: String
        /// The errno.
        public let errno: Int32

        /// One line naming the folder, escaped.
        public var description: String {
            let hint = errno == ENOSPC ? " (the system's limit of watched folders, fs.inotify.max_user_watches)" : ""
            return "cannot watch the folder '\(ShownName.of(folder))': \(SystemCallError(call: call, errno: errno).reason)\(hint)"
        }
    }

    /// Something that happened in a watched folder.
    public struct Change: Sendable, Hashable {
        /// The path of the file or folder concerned: the watched folder's path as given, `/`,
        /// the name (bytes that are not UTF-8 as ``PathEncoding`` carries them).
        public let path: String
        /// Whether it is a folder.
        public let isFolder: Bool
        /// Whether a file is being written: it was made (a regular file) or written to, and
        /// not closed yet (`IN_CREATE`, `IN_MODIFY`); more may come. False for a file closed
        /// after writing (`IN_CLOSE_WRITE`), moved in or away, or removed: it is complete, or gone.
        public var isBeingWritten: Bool = false
    }

    /// What a watched folder reports: a file written (and closed), moved in or away, removed;
    /// a folder made, moved or removed.
    static let events = UInt32(IN_CLOSE_WRITE | IN_MODIFY | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_DELETE_SELF)

    private let descriptor: Int32
    /// Each watch's folder path; hidden folders only when `hidden` was asked for its tree.
    private var folders: [Int32: (path: String, hidden: Bool)] = [:]

    /// An inotify instance with nothing watched yet.
    public init() throws(Failure) {
        do {
            descriptor = try Syscalls.inotifyStart()
        } catch {
            throw Failure(folder: "", call: error.call, errno: error.errno)
        }
    }

    deinit { Syscalls.close(descriptor) }

    /// Watches the folder `path` and every folder below it (hidden ones, whose names start
    /// with `.`, only when `hidden`).
    /// - Throws: ``Failure`` for a folder that cannot be watched (missing, unreadable, too
    ///   many watches); a folder below it that vanishes meanwhile is skipped.
    public func watchTree(_ path: String, hidden: Bool) throws(Failure) {
        var pending = [path]
        while let folder = pending.popLast() {
            let watch: Int32
            do {
                watch = try Syscalls.inotifyWatch(descriptor, folder, mask: Self.events)
            } catch where folder != path && (error.errno == ENOENT || error.errno == ENOTDIR) {
                continue
            } catch {
                throw Failure(folder: folder, call: error.call, errno: error.errno)
            }
            folders[watch] = (folder, hidden)
            guard let entries = try? Syscalls.entries(ofFolder: PathEncoding.bytes(folder)) else { continue }
            for entry in entries where entry.isFolder && (hidden || entry.name.first != UInt8(ascii: ".")) {
                pending.append(folder + "/" + PathEncoding.decode(entry.name).text)
            }
        }
    }

    /// The changes that happen within `milliseconds` (none when nothing did; it returns as soon
    /// as something did). A folder that appears is watched from then on, with the folders in
    /// it (one that is gone again is skipped; a failure to watch one is thrown, as the watch
    /// can no longer see everything it promised). `overflowed` is true when
    /// the kernel dropped events (too many at once): anything may have changed.
    public func changes(waitingAtMost milliseconds: Int32) throws(Failure) -> (changes: [Change], overflowed: Bool) {
        let events: [Syscalls.InotifyEvent]
        do {
            guard try Syscalls.waitReadable(descriptor, milliseconds: milliseconds) else { return ([], false) }
            events = try Syscalls.inotifyEvents(descriptor)
        } catch {
            throw Failure(folder: "", call: error.call, errno: error.errno)
        }
        var changes: [Change] = []
        var overflowed = false
        var newFolders: [(String, Bool)] = []
        for event in events {
            if event.mask & UInt32(IN_Q_OVERFLOW) != 0 { overflowed = true }
            if event.mask & UInt32(IN_IGNORED) != 0 { folders[event.watch] = nil }
            guard let folder = folders[event.watch], !event.name.isEmpty else { continue }
            let path = folder.path + "/" + PathEncoding.decode(event.name).text
            let isFolder = event.mask & UInt32(IN_ISDIR) != 0
            let writing = event.mask & UInt32(IN_MODIFY) != 0
                || (event.mask & UInt32(IN_CREATE) != 0 && !isFolder && Syscalls.isRegularFile(path))
            changes.append(Change(path: path, isFolder: isFolder, isBeingWritten: writing))
            if isFolder, event.mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0,
                folder.hidden || event.name.first != UInt8(ascii: ".")
            {
                newFolders.append((path, folder.hidden))
            }
        }
        for (path, hidden) in newFolders {
            do {
                try watchTree(path, hidden: hidden)
            } catch where error.errno == ENOENT || error.errno == ENOTDIR {
                continue
            }
        }
        return (changes, overflowed)
    }
}
