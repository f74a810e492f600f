import Synchronization

/// Memory for the short-lived buffers of a tile (its source rows converted to `Float32`, its
/// rendered pixels before they become samples), handed out again once a buffer is released:
/// fresh memory costs a page fault and a zeroed page every 4 KiB, more than converting into it.
/// Keeps at most ``kept`` blocks; any thread may take and release.
public final class ScratchStorage: Sendable {
    /// Blocks kept for reuse at most: a few tiles' worth for each thread rendering at once.
    public static let kept = 8

    private let free = Mutex<[PixelStorage]>([])

    public init() {}

    /// `byteCount` bytes, uninitialised: a slice of a kept block large enough, or of a new one;
    /// the block comes back here when the storage is released.
    public func storage(byteCount: Int) -> PixelStorage {
        let size = max(byteCount, 16)
        let block =
            free.withLock { blocks -> PixelStorage? in
                guard let index = blocks.indices.filter({ blocks[$0].byteCount >= size })
                    .min(by: { blocks[$0].byteCount < blocks[$1].byteCount })
                else { return nil }
                return blocks.remove(at: index)
            } ?? PixelStorage.uninitialized(byteCount: size)
        return PixelStorage(slicing: block, byteOffset: 0, byteCount: size) { [self] in
            free.withLock { blocks in
                blocks.append(block)
                // Past the limit the smallest block goes: the large ones serve every tile.
                if blocks.count > Self.kept, let smallest = blocks.indices.min(by: { blocks[$0].byteCount < blocks[$1].byteCount }) {
                    blocks.remove(at: smallest)
                }
            }
        }
    }

    /// A buffer for `rect` with `channels` channels over ``storage(byteCount:)``.
    public func pixels(_ rect: Rect, channels: Int) -> PixelBuffer {
        PixelBuffer(rect: rect, storage: storage(byteCount: rect.area * channels * MemoryLayout<Float>.stride), channels: channels)
    }
}
