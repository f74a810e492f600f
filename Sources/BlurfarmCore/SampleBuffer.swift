/// A sample as image files store it: `UInt8` or `UInt16`.
public typealias FileSample = FixedWidthInteger & UnsignedInteger & SIMDScalar & Sendable

/// Pixels at a file's depth: unsigned 8- or 16-bit samples (`UInt8` or `UInt16`), interleaved,
/// red first, covering one rectangle of the image plane, as a decoder makes them and an
/// encoder takes them.
///
/// A buffer holds 3 channels (RGB of an opaque image) or 4 (RGBA with straight alpha, as files
/// store it: not premultiplied). Like ``PixelBuffer`` it is a view with reference semantics:
/// `rect` says which pixels of the image it holds (it may start at a negative coordinate),
/// `rowStride` how many samples lie between two rows, and copies and ``view(_:)``s share the
/// samples.
public struct SampleBuffer<Sample: FileSample>: @unchecked Sendable {
    /// The pixels this buffer holds, in image coordinates.
    public let rect: Rect
    /// Samples per pixel: 4 (RGBA, straight alpha) or 3 (opaque RGB).
    public let channels: Int
    /// Samples from one row to the next (at least `rect.width * channels`).
    public let rowStride: Int
    /// The memory behind the samples.
    public let storage: PixelStorage
    /// Samples from the start of the storage to the pixel at the rectangle's origin.
    public let offset: Int

    /// The largest sample value: 255 or 65535.
    public static var maxLevel: Sample { Sample.max }

    /// A new, zeroed buffer for `rect` (transparent black with 4 channels, black with 3).
    public init(rect: Rect, channels: Int) {
        self.init(
            rect: rect, storage: PixelStorage(byteCount: rect.area * channels * MemoryLayout<Sample>.stride),
            channels: channels)
    }

    /// A buffer over existing storage. `offset` and `rowStride` count samples.
    public init(rect: Rect, storage: PixelStorage, offset: Int = 0, rowStride: Int? = nil, channels: Int) {
        precondition(channels == 3 || channels == 4, "a sample buffer has 3 or 4 channels")
        self.rowStride = BufferLayout.checkedRowStride(
            rect: rect, channels: channels, rowStride: rowStride, offset: offset,
            valueSize: MemoryLayout<Sample>.stride, byteCount: storage.byteCount)
        self.rect = rect
        self.channels = channels
        self.storage = storage
        self.offset = offset
    }

    /// The pixels of `subrect` (which must lie inside `rect`), sharing this buffer's memory.
    public func view(_ subrect: Rect) -> SampleBuffer {
        SampleBuffer(
            rect: subrect, storage: storage,
            offset: BufferLayout.offset(of: subrect, in: rect, offset: offset, rowStride: rowStride, channels: channels),
            rowStride: rowStride, channels: channels)
    }

    /// Calls `body` with a pointer to the first sample of the pixel at the rectangle's origin.
    /// Row `r` (0-based inside the rectangle) starts `r * rowStride` samples after it.
    @inlinable
    public func withUnsafeSamples<R>(_ body: (UnsafeMutablePointer<Sample>) throws -> R) rethrows -> R {
        let start = storage.base.assumingMemoryBound(to: Sample.self) + offset
        return try withExtendedLifetime(storage) { try body(start) }
    }

    /// The pixel at image coordinates `(x, y)`, which must lie inside `rect`, as straight RGBA
    /// (alpha ``maxLevel`` for a 3-channel buffer). Setting a pixel of a 3-channel buffer
    /// requires alpha ``maxLevel``.
    public subscript(x: Int, y: Int) -> SIMD4<Sample> {
        get {
            precondition(rect.contains(x: x, y: y), "pixel (\(x), \(y)) lies outside \(rect)")
            return withUnsafeSamples { p in
                let q = p + (y - rect.y) * rowStride + (x - rect.x) * channels
                return SIMD4(q[0], q[1], q[2], channels == 4 ? q[3] : Sample.max)
            }
        }
        nonmutating set {
            precondition(rect.contains(x: x, y: y), "pixel (\(x), \(y)) lies outside \(rect)")
            precondition(channels == 4 || newValue[3] == Sample.max, "an opaque (3-channel) buffer holds full alpha only")
            withUnsafeSamples { p in
                let q = p + (y - rect.y) * rowStride + (x - rect.x) * channels
                for c in 0..<channels { q[c] = newValue[c] }
            }
        }
    }

    /// The first pixel, in row order, whose samples differ between the two buffers over their
    /// common rectangle, or `nil` when they agree everywhere.
    public func firstDifference(from other: SampleBuffer) -> (x: Int, y: Int)? {
        let common = rect.intersection(other.rect)
        for y in common.y..<common.maxY {
            for x in common.x..<common.maxX where self[x, y] != other[x, y] {
                return (x, y)
            }
        }
        return nil
    }
}
