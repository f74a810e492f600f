import BlurfarmSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A block of memory that holds pixels: heap memory here, a shared mapping for worker processes.
///
/// The storage owns its memory and releases it when the last reference goes. It is
/// `Sendable` because the renderer hands disjoint rectangles of one storage to different
/// threads; nothing here synchronises writes to the same pixels.
public final class PixelStorage: @unchecked Sendable {
    /// Size of the block in bytes.
    public let byteCount: Int
    @usableFromInline let base: UnsafeMutableRawPointer
    private let release: @Sendable (UnsafeMutableRawPointer, Int) -> Void
    /// For a slice (``init(slicing:byteOffset:byteCount:onRelease:)``): the storage it lies in
    /// (kept alive by it) and where.
    public let parent: (storage: PixelStorage, byteOffset: Int)?

    /// Blocks at least this large are mapped on their own, aligned for huge pages.
    static let hugePageThreshold = 4 << 20
    static let hugePageSize = 2 << 20

    /// Allocates `floatCount` zeroed `Float`s, 16-byte aligned (one pixel).
    ///
    /// Large blocks come straight from the kernel, already zeroed (no pass of zeroing before
    /// the kernels write them), in 2 MiB huge pages where the system allows: a 4K image then
    /// costs tens of page faults instead of tens of thousands.
    public convenience init(floatCount: Int) {
        precondition(floatCount >= 0)
        self.init(byteCount: floatCount * MemoryLayout<Float>.stride)
    }

    /// Allocates `byteCount` bytes, 16-byte aligned, for a buffer that will be written whole
    /// before it is read (tile buffers the kernels fill): no zeroing pass. Large blocks come
    /// mapped (and zeroed) as in ``init(byteCount:)``.
    public static func uninitialized(byteCount: Int) -> PixelStorage {
        let size = max(byteCount, 16)
        if size >= hugePageThreshold { return PixelStorage(byteCount: size) }
        guard let memory = malloc(size) else { fatalError("out of memory: \(size) bytes of pixels") }
        return PixelStorage(adopting: memory, byteCount: size) { pointer, _ in free(pointer) }
    }

    /// Allocates `byteCount` zeroed bytes, 16-byte aligned, as ``init(floatCount:)`` does.
    public init(byteCount: Int) {
        precondition(byteCount >= 0)
        let size = max(byteCount, 16)
        self.byteCount = size
        if size >= Self.hugePageThreshold {
            guard let mapping = Syscalls.mapZeroedMemory(byteCount: size, alignment: Self.hugePageSize) else {
                fatalError("out of memory: \(size) bytes of pixels")
            }
            base = mapping.start
            let unmap = mapping.release
            release = { pointer, _ in unmap(pointer) }
        } else {
            guard let memory = calloc(size, 1) else { fatalError("out of memory: \(size) bytes of pixels") }
            base = memory
            release = { pointer, _ in free(pointer) }
        }
        parent = nil
    }

    /// Adopts memory that something else allocated (a shared mapping), with the function that
    /// releases it. `pointer` must be aligned for `Float`.
    public init(
        adopting pointer: UnsafeMutableRawPointer, byteCount: Int,
        release: @escaping @Sendable (UnsafeMutableRawPointer, Int) -> Void
    ) {
        self.base = pointer
        self.byteCount = byteCount
        self.release = release
        parent = nil
    }

    /// `byteCount` bytes of `storage` from `byteOffset` (aligned for `Float`), as a storage of
    /// their own: it keeps `storage` alive, frees nothing, and calls `onRelease` when it goes
    /// (so that whoever hands out slices of one block knows which are free again).
    public init(
        slicing storage: PixelStorage, byteOffset: Int, byteCount: Int, onRelease: @escaping @Sendable () -> Void
    ) {
        precondition(
            byteOffset >= 0 && byteCount >= 0 && byteOffset + byteCount <= storage.byteCount
                && byteOffset % MemoryLayout<Float>.alignment == 0,
            "a slice lies inside its storage")
        base = storage.base + byteOffset
        self.byteCount = byteCount
        release = { _, _ in onRelease() }
        parent = (storage, byteOffset)
    }

    /// Calls `body` with the memory as `Float`s (`byteCount / 4` of them).
    @inlinable
    public func withUnsafeFloats<R>(_ body: (UnsafeMutablePointer<Float>) throws -> R) rethrows -> R {
        try withExtendedLifetime(self) { try body(base.assumingMemoryBound(to: Float.self)) }
    }

    deinit { release(base, byteCount) }
}

/// Where a decoder puts the pixels it makes: the worker pool hands out memory its workers
/// share, so that a decoded image needs no copy to reach them.
public protocol PixelAllocator: Sendable {
    /// `byteCount` bytes for pixels, their contents unspecified, or nil when none can be had
    /// (the caller then uses memory of its own).
    func storage(byteCount: Int) -> PixelStorage?
}
