import BlurfarmCore
import BlurfarmSystem

/// A block of memory shared between processes: a memfd mapped `MAP_SHARED`, wrapped as the
/// ``PixelStorage`` pixel buffers use.
///
/// The coordinator creates segments with ``create(byteCount:name:)``; a worker maps one with
/// ``open(path:)`` (``SharedSegmentTable`` does it by segment id). The descriptor stays open
/// as long as the storage lives; when the last reference to ``storage`` goes, the memory is
/// unmapped and the descriptor closed.
public struct SharedSegment: Sendable {
    /// The mapped memory, `byteCount` bytes, aligned to a page.
    public private(set) var storage: PixelStorage
    /// The segment's file descriptor in this process; valid while ``storage`` lives.
    public let fileDescriptor: Int32
    /// The file behind the descriptor (device and inode, as `fstat` says), which a task names
    /// beside ``id`` (docs/protocol.md, "Shared segments").
    public let identity: FileIdentity

    /// Size of the segment in bytes.
    public var byteCount: Int { storage.byteCount }

    /// Whether this value holds the only reference to the segment's memory: nothing else (no
    /// copy of the segment, no pixel buffer over it) uses it, so it can be lent out again.
    public mutating func isOnlyReference() -> Bool { isKnownUniquelyReferenced(&storage) }

    /// The id a task names this segment by when the segment's creator sends it to workers:
    /// the creator's descriptor number (see docs/protocol.md, "Shared segments").
    public var id: UInt32 { UInt32(fileDescriptor) }

    /// A new zeroed segment of `byteCount` bytes (at least 1), made with `memfd_create` (closed on
    /// exec), `ftruncate` and `mmap(MAP_SHARED)`. `name` shows in `/proc/<pid>/fd` listings.
    ///
    /// - Throws: ``SharedMemoryError`` naming the call that failed.
    public static func create(byteCount: Int, name: String = "blurfarm-pixels") throws(SharedMemoryError) -> SharedSegment {
        precondition(byteCount > 0, "a shared segment holds at least one byte")
        let fd = try Syscalls.memfdCreate(name: name)
        do {
            try Syscalls.setSize(fd, byteCount)
            return try map(fd, size: byteCount)
        } catch {
            Syscalls.close(fd)
            throw error
        }
    }

    /// Maps the whole file at `path` (e.g. `/proc/<pid>/fd/<n>`, another process's memfd)
    /// read/write and shared; its size is the file's.
    ///
    /// - Throws: ``SharedMemoryError`` naming the call that failed (an empty file fails in `mmap`).
    public static func open(path: String) throws(SharedMemoryError) -> SharedSegment {
        let fd = try Syscalls.openReadWrite(path)
        do {
            let (size, _) = try Syscalls.sizeAndIdentity(fd)
            return try map(fd, size: size)
        } catch {
            Syscalls.close(fd)
            throw error
        }
    }

    /// Maps `fd` (which the segment then owns) whose size is `size` bytes.
    static func map(_ fd: Int32, size: Int) throws(SharedMemoryError) -> SharedSegment {
        let identity = try Syscalls.sizeAndIdentity(fd).identity
        let pointer = try Syscalls.mmapShared(fd, size: size)
        let storage = PixelStorage(adopting: pointer, byteCount: size) { pointer, size in
            Syscalls.release(pointer, size: size, fd: fd)
        }
        return SharedSegment(storage: storage, fileDescriptor: fd, identity: identity)
    }
}
