import BlurfarmCore
import BlurfarmSharedMemory
import Synchronization

/// The shared-memory segments of a worker pool, kept for the next images: the decoders write
/// into them and the workers read and write them without a copy.
///
/// Reusing segments matters: a new memfd's pages are allocated, zeroed and mapped page by page
/// in the coordinator and in every worker, and freed at the end, which cost more than the
/// filtering; a kept segment keeps its pages and the workers their mappings. At most
/// ``spareSegments`` unused segments are kept.
final class SegmentPool: PixelAllocator, Sendable {
    /// Every segment made and kept.
    private let segments = Mutex<[SharedSegment]>([])
    /// Segments kept while nothing uses them.
    static let spareSegments = 4

    /// A segment's memory for a decoder (``PixelAllocator``); nil when no segment can be made.
    func storage(byteCount: Int) -> PixelStorage? {
        try? lease(byteCount: byteCount).storage
    }

    /// The segment whose memory `storage` is, if any, and the byte where the storage starts
    /// in it (a slice of the segment's: ``PixelStorage/init(slicing:byteOffset:byteCount:onRelease:)``).
    func segment(holding storage: PixelStorage) -> (segment: SharedSegment, storageOffset: Int)? {
        let (storage, offset) = storage.parent ?? (storage, 0)
        return segments.withLock { kept in kept.first { $0.storage === storage }.map { ($0, offset) } }
    }

    /// A segment of at least `byteCount` bytes (and at most a quarter more) that nothing uses:
    /// one made for an earlier image and given back (its buffers dropped), or a new one.
    func lease(byteCount: Int) throws(SharedMemoryError) -> SharedSegment {
        try segments.withLock { (kept: inout [SharedSegment]) throws(SharedMemoryError) -> SharedSegment in
            var unused: [Int] = []
            for index in kept.indices where kept[index].isOnlyReference() {
                let size = kept[index].byteCount
                if size >= byteCount && size - byteCount <= byteCount / 4 { return kept[index] }
                unused.append(index)
            }
            for index in unused.dropLast(Self.spareSegments - 1).reversed() { kept.remove(at: index) }
            let segment = try SharedSegment.create(byteCount: byteCount, name: "blurfarm-pixels")
            kept.append(segment)
            return segment
        }
    }
}
