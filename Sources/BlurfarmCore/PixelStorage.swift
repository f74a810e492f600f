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

    /// Allocates `floatCount` zeroed `Float`s, 64-byte aligned.
    public init(floatCount: Int) {
        precondition(floatCount >= 0)
        byteCount = max(floatCount, 1) * MemoryLayout<Float>.stride
        base = UnsafeMutableRawPointer.allocate(byteCount: byteCount, alignment: 64)
        base.initializeMemory(as: UInt8.self, repeating: 0, count: byteCount)
        release = { pointer, _ in pointer.deallocate() }
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
    }

    deinit { release(base, byteCount) }
}
