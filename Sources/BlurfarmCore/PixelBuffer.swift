/// Pixels in the working format, `Float32` per channel (nominally 0...1), covering one
/// rectangle of the image plane.
///
/// A buffer holds either 4 channels, premultiplied RGBA, or 3 channels, RGB of an opaque
/// image whose alpha is exactly 1 everywhere and not stored (most photos: a quarter less
/// memory and work). Either way channels are interleaved, red first.
///
/// A buffer is a view: `rect` says which pixels of the image it holds (it may start at a
/// negative coordinate, for halos and grown outputs), `rowStride` how many `Float`s lie
/// between two rows. Copies of a `PixelBuffer` share their pixels (reference semantics), and so
/// do views made with ``view(_:)``.
public struct PixelBuffer: @unchecked Sendable {
    /// The pixels this buffer holds, in image coordinates.
    public let rect: Rect
    /// Floats per pixel: 4 (premultiplied RGBA) or 3 (opaque RGB, alpha 1).
    public let channels: Int
    /// Floats from one row to the next (at least `rect.width * channels`).
    public let rowStride: Int
    /// The memory behind the pixels.
    public let storage: PixelStorage
    /// Floats from the start of the storage to the pixel at the rectangle's origin.
    public let offset: Int

    /// Whether alpha is stored (4 channels) rather than 1 everywhere (3 channels).
    public var hasAlpha: Bool { channels == 4 }

    /// A new, zeroed buffer for `rect` (transparent black with 4 channels, black with 3).
    public init(rect: Rect, channels: Int = 4) {
        self.init(rect: rect, storage: PixelStorage(floatCount: rect.area * channels), channels: channels)
    }

    /// A new buffer for `rect` whose pixels are undefined until written: for buffers that are
    /// written whole before they are read (a kernel's output, a tile).
    public static func uninitialized(_ rect: Rect, channels: Int = 4) -> PixelBuffer {
        PixelBuffer(
            rect: rect, storage: .uninitialized(byteCount: rect.area * channels * MemoryLayout<Float>.stride),
            channels: channels)
    }

    /// A buffer over existing storage. `offset` and `rowStride` count `Float`s.
    public init(rect: Rect, storage: PixelStorage, offset: Int = 0, rowStride: Int? = nil, channels: Int = 4) {
        precondition(channels == 3 || channels == 4, "a pixel buffer has 3 or 4 channels")
        self.rowStride = BufferLayout.checkedRowStride(
            rect: rect, channels: channels, rowStride: rowStride, offset: offset,
            valueSize: MemoryLayout<Float>.stride, byteCount: storage.byteCount)
        self.rect = rect
        self.channels = channels
        self.storage = storage
        self.offset = offset
    }

    /// The pixels of `subrect` (which must lie inside `rect`), sharing this buffer's memory.
    public func view(_ subrect: Rect) -> PixelBuffer {
        PixelBuffer(
            rect: subrect, storage: storage,
            offset: BufferLayout.offset(of: subrect, in: rect, offset: offset, rowStride: rowStride, channels: channels),
            rowStride: rowStride, channels: channels)
    }

    /// Calls `body` with a pointer to the first float of the pixel at the rectangle's origin.
    /// Row `r` (0-based inside the rectangle) starts `r * rowStride` floats after it.
    @inlinable
    public func withUnsafePixels<R>(_ body: (UnsafeMutablePointer<Float>) throws -> R) rethrows -> R {
        let start = storage.base.assumingMemoryBound(to: Float.self) + offset
        return try withExtendedLifetime(storage) { try body(start) }
    }

    /// The pixel at image coordinates `(x, y)`, which must lie inside `rect`, as premultiplied
    /// RGBA (alpha 1 for a 3-channel buffer). Setting a pixel of a 3-channel buffer requires
    /// alpha 1.
    public subscript(x: Int, y: Int) -> SIMD4<Float> {
        get {
            precondition(rect.contains(x: x, y: y), "pixel (\(x), \(y)) lies outside \(rect)")
            return withUnsafePixels { p in
                let q = p + (y - rect.y) * rowStride + (x - rect.x) * channels
                return SIMD4(q[0], q[1], q[2], channels == 4 ? q[3] : 1)
            }
        }
        nonmutating set {
            precondition(rect.contains(x: x, y: y), "pixel (\(x), \(y)) lies outside \(rect)")
            precondition(channels == 4 || newValue[3] == 1, "an opaque (3-channel) buffer holds alpha 1 only")
            withUnsafePixels { p in
                let q = p + (y - rect.y) * rowStride + (x - rect.x) * channels
                for c in 0..<channels { q[c] = newValue[c] }
            }
        }
    }

    /// Copies the pixels of `region` (inside both buffers' rectangles) from `source`, which has
    /// the same channels.
    public func copy(_ region: Rect, from source: PixelBuffer) {
        precondition(rect.contains(region) && source.rect.contains(region) && channels == source.channels)
        if region.isEmpty { return }
        let rowFloats = region.width * channels
        withUnsafePixels { dst in
            source.withUnsafePixels { src in
                var d = dst + (region.y - rect.y) * rowStride + (region.x - rect.x) * channels
                var s = src + (region.y - source.rect.y) * source.rowStride + (region.x - source.rect.x) * channels
                for _ in 0..<region.height {
                    d.update(from: s, count: rowFloats)
                    d += rowStride
                    s += source.rowStride
                }
            }
        }
    }

    /// Sets the pixels of `region` (inside the buffer's rectangle) to 0: transparent black.
    public func clear(_ region: Rect) {
        precondition(rect.contains(region))
        if region.isEmpty { return }
        let rowFloats = region.width * channels
        withUnsafePixels { dst in
            var d = dst + (region.y - rect.y) * rowStride + (region.x - rect.x) * channels
            for _ in 0..<region.height {
                d.update(repeating: 0, count: rowFloats)
                d += rowStride
            }
        }
    }

    /// Whether both buffers hold the same rectangle and channels with bit-identical pixels.
    public func isBitIdentical(to other: PixelBuffer) -> Bool {
        rect == other.rect && channels == other.channels && firstDifference(from: other) == nil
    }

    /// The first pixel, in row order, whose bits differ between the two buffers over their
    /// common rectangle, or `nil` when they agree everywhere.
    public func firstDifference(from other: PixelBuffer) -> (x: Int, y: Int)? {
        let common = rect.intersection(other.rect)
        for y in common.y..<common.maxY {
            for x in common.x..<common.maxX {
                let a = self[x, y], b = other[x, y]
                for c in 0..<4 where a[c].bitPattern != b[c].bitPattern {
                    return (x, y)
                }
            }
        }
        return nil
    }
}
