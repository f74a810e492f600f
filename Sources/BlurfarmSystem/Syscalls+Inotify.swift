// The inotify system calls of `FolderWatcher` (`run --watch`), retried on EINTR, failing with
// the errno; paths as the bytes they stand for (`PathEncoding`).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension Syscalls {
    /// One inotify event: the watch it came from, what happened, and the name in the watched
    /// folder it concerns (as bytes; empty for the folder itself).
    package struct InotifyEvent {
        package let watch: Int32
        package let mask: UInt32
        package let name: [UInt8]
    }

    /// A new inotify instance, non-blocking and closed on exec.
    package static func inotifyStart() throws(SystemCallError) -> Int32 {
        try retrying("inotify_init1") { inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC)) }
    }

    /// Watches the folder `path` for `mask`; returns the watch descriptor (the same one when
    /// the folder is watched already). Links are not followed below the first folder.
    package static func inotifyWatch(_ fd: Int32, _ path: String, mask: UInt32) throws(SystemCallError) -> Int32 {
        try retrying("inotify_add_watch") { PathEncoding.withCString(path) { inotify_add_watch(fd, $0, mask | UInt32(IN_ONLYDIR)) } }
    }

    /// Stops the watch `watch` of the inotify instance `fd`, ignoring failure (a watch whose
    /// folder is gone is stopped already).
    package static func inotifyUnwatch(_ fd: Int32, _ watch: Int32) { _ = inotify_rm_watch(fd, watch) }

    /// The device and inode of the folder `path` (following links, as `inotify_add_watch`
    /// does): which folder stands at that path now; nil when none does (missing, or not a folder).
    package static func folderIdentity(_ path: String) -> FolderIdentity? {
        guard let info = status(path), info.st_mode & S_IFMT == S_IFDIR else { return nil }
        return FolderIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    /// Which folder: its device and inode.
    package struct FolderIdentity: Equatable {
        package let device: UInt64
        package let inode: UInt64
    }

    /// Whether `path` (not following a link) is a regular file with one name: one that was just
    /// made by opening it for writing. A hard link made to a file (two names) is complete;
    /// so is a symbolic link.
    package static func isFileBeingMade(_ path: String) -> Bool {
        var info = stat()
        guard (try? retrying("lstat", { PathEncoding.withCString(path) { lstat($0, &info) } })) != nil else { return false }
        return info.st_mode & S_IFMT == S_IFREG && info.st_nlink == 1
    }

    /// Waits until `fd` is readable or `milliseconds` pass: whether it is readable.
    package static func waitReadable(_ fd: Int32, milliseconds: Int32) throws(SystemCallError) -> Bool {
        try !pollReadable([fd], milliseconds: milliseconds).isEmpty
    }

    /// The events waiting on the inotify descriptor `fd` (none when there are none yet).
    package static func inotifyEvents(_ fd: Int32) throws(SystemCallError) -> [InotifyEvent] {
        // Room for many events at once: each is 16 bytes and its name (at most NAME_MAX + 1).
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let count: Int
        do {
            count = try retrying("read") { buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) } }
        } catch where error.errno == EAGAIN {
            return []
        }
        var events: [InotifyEvent] = []
        var offset = 0
        buffer.withUnsafeBytes { raw in
            // struct inotify_event { int wd; uint32_t mask, cookie, len; char name[len]; }
            while offset + 16 <= count {
                let watch = raw.loadUnaligned(fromByteOffset: offset, as: Int32.self)
                let mask = raw.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                let length = Int(raw.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                let name = raw[(offset + 16)..<min(offset + 16 + length, count)].prefix { $0 != 0 }
                events.append(InotifyEvent(watch: watch, mask: mask, name: Array(name)))
                offset += 16 + length
            }
        }
        return events
    }

}
