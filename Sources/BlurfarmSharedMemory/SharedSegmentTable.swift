import BlurfarmCore
import BlurfarmSystem
import Synchronization

/// A worker's mappings of the segments its coordinator shares, by segment id.
///
/// A segment id is the coordinator's descriptor number; the worker opens
/// `/proc/<coordinator pid>/fd/<id>` (docs/protocol.md, "Shared segments"). The coordinator
/// may close a segment and reuse its number for a new one, so every lookup opens the path
/// again and compares the file's identity (device, inode) with the mapping it has: the same
/// file reuses the mapping, another file replaces it. A mapped file cannot be freed, so its
/// inode cannot be reused while the mapping is kept: the comparison is exact.
public final class SharedSegmentTable: Sendable {
    /// The process whose descriptors the segment ids are.
    public let ownerPID: Int32
    /// Mappings kept at most; the least recently used goes first. A policy: it bounds the
    /// memory a worker keeps alive after the coordinator has dropped a segment.
    public let capacity: Int

    private struct Entry {
        var segment: SharedSegment
        var lastUse: Int
    }

    private struct State {
        var entries: [UInt32: Entry] = [:]
        var clock = 0
    }

    private let state = Mutex(State())

    /// A table for the segments of process `ownerPID`, keeping up to `capacity` mappings.
    public init(ownerPID: Int32, capacity: Int = 16) {
        precondition(capacity >= 1)
        self.ownerPID = ownerPID
        self.capacity = capacity
    }

    /// The path a segment id names: `/proc/<ownerPID>/fd/<id>`.
    public func path(of id: UInt32) -> String { "/proc/\(ownerPID)/fd/\(id)" }

    /// The segment `id` of the owner, mapped (or the mapping already held for that same file).
    ///
    /// - Throws: ``SharedMemoryError`` naming the call that failed (e.g. `open` with ENOENT
    ///   when the owner has no such descriptor).
    public func segment(_ id: UInt32) throws(SharedMemoryError) -> SharedSegment {
        let path = path(of: id)
        let fd = try Syscalls.openReadWrite(path)
        let size: Int, identity: FileIdentity
        do {
            (size, identity) = try Syscalls.sizeAndIdentity(fd)
        } catch {
            Syscalls.close(fd)
            throw error
        }
        if let kept = use(id, identity: identity, size: size) {
            Syscalls.close(fd)
            return kept
        }
        let segment: SharedSegment
        do {
            segment = try SharedSegment.map(fd, size: size)
        } catch {
            Syscalls.close(fd)
            throw error
        }
        state.withLock { state in
            state.clock += 1
            state.entries[id] = Entry(segment: segment, lastUse: state.clock)
            while state.entries.count > capacity,
                let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse })?.key
            {
                state.entries[oldest] = nil
            }
        }
        return segment
    }

    /// The kept mapping of `id` when it is of the same file and size, marked as used.
    private func use(_ id: UInt32, identity: FileIdentity, size: Int) -> SharedSegment? {
        state.withLock { state in
            guard var entry = state.entries[id], entry.segment.identity == identity,
                entry.segment.byteCount == size
            else { return nil }
            state.clock += 1
            entry.lastUse = state.clock
            state.entries[id] = entry
            return entry.segment
        }
    }

    /// Mappings currently kept.
    public var mappedCount: Int { state.withLock { $0.entries.count } }
}
