/// Premultiplied RGBA pixels, `Float32` per channel (nominally 0...1), covering one rectangle
/// of the image plane.
///
/// A buffer is a view: `rect` says which pixels of the image it holds (it may start at a
/// negative coordinate, for halos and grown outputs), `rowStride` how many `Float`s lie
/// between two rows. Copies of a `PixelBuffer` share their pixels (reference semantics), and so
/// do views made with ``view(_:)``.
public struct PixelBuffer: @unchecked Sendable {
    /// Channels per pixel: red, green, blue, alpha, in that order.
    public static let channels = 4

    /// The pixels this buffer holds, in image coordinates.
    public let rect: Rect
    /// Floats from one row to the next (at least `rect.width * 4`).
    public let rowStride: Int
    /// The memory behind the pixels.
    public let storage: PixelStorage
    /// Floats from the start of the storage to the pixel at the rectangle's origin.
    @usableFromInline let offset: Int

    /// A new, zeroed (transparent black) buffer for `rect`.
    public init(rect: Rect) {
        self.rect = rect
        rowStride = rect.width * Self.channels
        storage = PixelStorage(floatCount: rowStride * rect.height)
        offset = 0
    }

    /// A new buffer for `rect` whose pixels are undefined until written: for buffers that are
    /// written whole before they are read (a kernel's output, a tile).
    public static func uninitialized(_ rect: Rect) -> PixelBuffer {
        PixelBuffer(rect: rect, storage: .uninitialized(byteCount: rect.area * channels * MemoryLayout<Float>.stride))
    }

    /// A buffer over existing storage. `offset` and `rowStride` count `Float`s.
    public init(rect: Rect, storage: PixelStorage, offset: Int = 0, rowStride: Int? = nil) {
        let stride = rowStride ?? rect.width * Self.channels
        precondition(stride >= rect.width * Self.channels && offset >= 0)
        precondition(
            rect.isEmpty
                || (offset + stride * (rect.height - 1) + rect.width * Self.channels)
                    * MemoryLayout<Float>.stride <= storage.byteCount,
            "pixel buffer runs past its storage")
        self.rect = rect
        self.rowStride = stride
        self.storage = storage
        self.offset = offset
    }

    /// The pixels of `subrect` (which must lie inside `rect`), sharing this buffer's memory.
    public func view(_ subrect: Rect) -> PixelBuffer {
        precondition(rect.contains(subrect), "view \(subrect) lies outside \(rect)")
        return PixelBuffer(
            rect: subrect, storage: storage,
            offset: offset + (subrect.y - rect.y) * rowStride + (subrect.x - rect.x) * Self.channels,
            rowStride: rowStride)
    }

    /// Calls `body` with a pointer to the first float of the pixel at the rectangle's origin.
    /// Row `r` (0-based inside the rectangle) starts `r * rowStride` floats after it.
    @inlinable
    public func withUnsafePixels<R>(_ body: (UnsafeMutablePointer<Float>) throws -> R) rethrows -> R {
        let start = storage.base.assumingMemoryBound(to: Float.self) + offset
        return try withExtendedLifetime(storage) { try body(start) }
    }

    /// The pixel at image coordinates `(x, y)`, which must lie inside `rect`.
    public subscript(x: Int, y: Int) -> SIMD4<Float> {
        get {
            precondition(rect.contains(x: x, y: y), "pixel (\(x), \(y)) lies outside \(rect)")
            return withUnsafePixels { p in
                let q = p + (y - rect.y) * rowStride + (x - rect.x) * Self.channels
                return SIMD4(q[0], q[1], q[2], q[3])
            }
        }
        nonmutating set {
            precondition(rect.contains(x: x, y: y), "pixel (\(x), \(y)) lies outside \(rect)")
            withUnsafePixels { p in
                let q = p + (y - rect.y) * rowStride + (x - rect.x) * Self.channels
                q[0] = newValue[0]; q[1] = newValue[1]; q[2] = newValue[2]; q[3] = newValue[3]
            }
        }
    }

    /// Copies the pixels of `region` (inside both buffers' rectangles) from `source`.
    public func copy(_ region: Rect, from source: PixelBuffer) {
        precondition(rect.contains(region) && source.rect.contains(region))
        if region.isEmpty { return }
        let rowFloats = region.width * Self.channels
        withUnsafePixels { dst in
            source.withUnsafePixels { src in
                var d = dst + (region.y - rect.y) * rowStride + (region.x - rect.x) * Self.channels
                var s = src + (region.y - source.rect.y) * source.rowStride
                    + (region.x - source.rect.x) * Self.channels
                for _ in 0..<region.height {
                    d.update(from: s, count: rowFloats)
                    d += rowStride
                    s += source.rowStride
                }
            }
        }
    }

    /// Whether both buffers hold the same rectangle with bit-identical pixels.
    public func isBitIdentical(to other: PixelBuffer) -> Bool {
        firstDifference(from: other) == nil && rect == other.rect
    }

    /// The first pixel, in row order, whose bits differ between the two buffers over their
    /// common rectangle, or `nil` when they agree everywhere.
    public func firstDifference(from other: PixelBuffer) -> (x: Int, y: Int)? {
        let common = rect.intersection(other.rect)
        for y in common.y..<common.maxY {
            for x in common.x..<common.maxX {
                let a = self[x, y], b = other[x, y]
                for c in 0..<Self.channels where a[c].bitPattern != b[c].bitPattern {
                    return (x, y)
                }
            }
        }
        return nil
    }
}
