import BlurfarmSystem
import BlurfarmCore
import CXXHash
import Foundation

/// What `stat` says of a file, for the fast path of the up-to-date check: a file whose stamp
/// is the recorded one is taken to have the recorded contents; any difference (size, times,
/// inode) means its bytes are hashed again. The change time cannot be set by a user, so a file
/// rewritten and given its old modification time back still differs.
public struct FileStamp: Codable, Hashable, Sendable {
    /// Size in bytes.
    public var size: Int64
    /// Modification time, nanoseconds since 1970.
    public var modified: Int64
    /// Status change time, nanoseconds since 1970.
    public var changed: Int64
    /// Inode number and device.
    public var inode: UInt64
    public var device: UInt64

    public init(size: Int64, modified: Int64, changed: Int64, inode: UInt64, device: UInt64) {
        self.size = size
        self.modified = modified
        self.changed = changed
        self.inode = inode
        self.device = device
    }

    /// The stamp of the file at `path` (following links), or nil when it is not a regular file
    /// or cannot be read.
    public static func of(_ path: String) -> FileStamp? {
        guard let info = Syscalls.status(path), (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return FileStamp(info)
    }

    /// The stamp of whatever is at `path` (following links: a file, a folder…), or nil when
    /// nothing is there.
    static func ofEntry(_ path: String) -> FileStamp? { Syscalls.status(path).map(FileStamp.init) }

    /// The stamp `stat` gave.
    package init(_ info: stat) {
        self.init(
            size: Int64(info.st_size),
            modified: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec),
            changed: Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec),
            inode: UInt64(info.st_ino), device: UInt64(info.st_dev))
    }
}

/// What a plan saw of a file as it planned it, for the up-to-date check that follows at once:
/// the digest of the file's stamp when it was a regular file, or that nothing was there. The
/// check compares it with a record's stamp before it asks `stat` again, so a no-change run
/// states each file once (issue 47: it stated each twice, once to plan and once to check), and
/// takes a file the plan found absent for missing, so a first run's outputs are stated once at
/// most, not three times (the plan's `stat`, the check's `stat` and `lstat`), and not at all
/// where the plan found their folder not there. The digest is keyed by
/// this process's hashing seed: it is only compared with digests this process makes.
public struct SeenStamp: Hashable, Sendable {
    private let digest: UInt64

    /// Not seen, or not a regular file (a folder, a link that leads nowhere): the check asks
    /// `stat`.
    public static let unseen = SeenStamp(digest: 0)

    /// Nothing there: no file, folder or link, not even one that leads nowhere (its folder is
    /// not there, or `lstat` said so). The check takes the file for missing without asking.
    public static let absent = SeenStamp(digest: 1)

    private init(digest: UInt64) { self.digest = digest }

    /// A file with `stamp`.
    public init(_ stamp: FileStamp) {
        var hasher = Hasher()
        hasher.combine(stamp)
        let digest = UInt64(bitPattern: Int64(hasher.finalize()))
        // Clear of the two digests above.
        self.digest = digest < 2 ? digest + 2 : digest
    }

    /// What `stat` said: a regular file's stamp, or unseen.
    package init(_ info: stat) {
        self = info.st_mode & S_IFMT == S_IFREG ? SeenStamp(FileStamp(info)) : .unseen
    }

    /// Whether a regular file was seen.
    public var isFile: Bool { digest > 1 }

    /// Whether nothing was there (``absent``).
    public var isAbsent: Bool { digest == 1 }

    /// The digest as it is held, for a plan that packs its outputs (``init(packed:)`` reads it back).
    package var packed: UInt64 { digest }

    /// The stamp seen whose ``packed`` digest is `packed`.
    package init(packed: UInt64) { digest = packed }

    /// Whether the file seen had `stamp`; nil when none was seen.
    public func matches(_ stamp: FileStamp) -> Bool? { isFile ? SeenStamp(stamp) == self : nil }
}

/// A file's contents as the records know them: its stamp before hashing and the XXH3-128 hash
/// of its bytes (libxxhash), as 32 hexadecimal digits.
public struct FileFingerprint: Codable, Hashable, Sendable {
    public var stamp: FileStamp
    public var hash: String

    public init(stamp: FileStamp, hash: String) {
        self.stamp = stamp
        self.hash = hash
    }

    /// Stats and hashes the file at `path`. The stamp is taken first: a file that changes while
    /// it is hashed has a newer stamp, so the next check hashes it again.
    public static func take(_ path: String) throws(StateError) -> FileFingerprint {
        guard let stamp = FileStamp.of(path) else { throw StateError(path: path, message: "not a readable file") }
        let hash = try ContentHash.ofFile(path)
        // Replaced or rewritten while it was hashed, the hash would be of other bytes than the stamp's.
        guard FileStamp.of(path) == stamp else { throw StateError(path: path, message: "changed while it was hashed") }
        return FileFingerprint(stamp: stamp, hash: hash)
    }
}

/// XXH3-128 of a file's bytes (libxxhash), read in chunks.
public enum ContentHash {
    /// Bytes read at a time: small enough to come from the heap and be reused from file to file
    /// (a megabyte, 64-byte aligned, fragmented the heap: 160 MB for 480 files).
    package static let chunkSize = 1 << 16

    /// The hash of the file at `path`, as 32 lower-case hexadecimal digits (high half first,
    /// xxHash's canonical order).
    public static func ofFile(_ path: String) throws(StateError) -> String {
        let fd: Int32
        do {
            fd = try Syscalls.openForReading(path)
        } catch {
            throw StateError(path: path, message: "cannot open: \(error.reason)")
        }
        defer { Syscalls.close(fd) }
        if let info = try? Syscalls.status(of: fd), info.st_mode & S_IFMT != S_IFREG {
            throw StateError(path: path, message: "is \(fileKindName(info.st_mode)), not a regular file")
        }
        guard let hasher = Hasher() else { throw StateError(path: path, message: "cannot allocate a hash state") }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n: Int
            do {
                n = try Syscalls.read(fd, into: UnsafeMutableRawBufferPointer(start: buffer, count: chunkSize))
            } catch {
                throw StateError(path: path, message: "cannot read: \(error.reason)")
            }
            if n == 0 { break }
            hasher.update(UnsafeRawBufferPointer(start: buffer, count: n))
        }
        return hasher.digest()
    }

    /// XXH3-128 of bytes given a part at a time (a file's chunks, the output map's entries),
    /// as ``ofFile(_:)`` gives it: the same hash as of the parts together.
    package final class Hasher {
        private let state: OpaquePointer

        /// Nil when its state cannot be allocated.
        package init?() {
            guard let state = XXH3_createState() else { return nil }
            self.state = state
            XXH3_128bits_reset(state)
        }

        deinit { XXH3_freeState(state) }

        package func update(_ bytes: UnsafeRawBufferPointer) {
            #if arch(x86_64)
            // The library's AVX2 or AVX-512 code, chosen at run time (its plain functions are
            // built for the x86-64 baseline): the same hash.
            XXH3_128bits_update_dispatch(state, bytes.baseAddress, bytes.count)
            #else
            XXH3_128bits_update(state, bytes.baseAddress, bytes.count)
            #endif
        }

        package func update(_ bytes: [UInt8]) { bytes.withUnsafeBytes { update($0) } }

        /// The hash of the bytes so far, as 32 lower-case hexadecimal digits.
        package func digest() -> String { ContentHash.hex(XXH3_128bits_digest(state)) }
    }

    /// The hash of `text`'s UTF-8 bytes, as 32 hexadecimal digits.
    public static func of(_ text: String) -> String {
        var copy = text
        return copy.withUTF8 { bytes in hex(XXH3_128bits(bytes.baseAddress, bytes.count)) }
    }

    private static func hex(_ h: XXH128_hash_t) -> String {
        func digits(_ v: UInt64) -> String {
            let s = String(v, radix: 16)
            return String(repeating: "0", count: 16 - s.count) + s
        }
        return digits(h.high64) + digits(h.low64)
    }
}
