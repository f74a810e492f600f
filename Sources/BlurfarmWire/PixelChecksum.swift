import BlurfarmCore

/// The checksum of a tile's pixels that a ``TaskResult`` carries: FNV-1a 64 over the bytes of
/// the floats' bit patterns.
///
/// The floats are taken in row order (rows top to bottom, pixels left to right, channels in
/// order), each as the four bytes of its `bitPattern`, least significant first; every byte is
/// folded in as `hash = (hash ^ byte) &* prime`, starting from the offset basis. The worker
/// computes it over the interior it wrote and the coordinator over the same rectangle of the
/// stitched output: both must call this, so both get the same number for the same bits.
public struct PixelChecksum: Sendable, Equatable {
    /// FNV-1a 64's starting value.
    public static let offsetBasis: UInt64 = 0xCBF2_9CE4_8422_2325
    /// FNV-1a 64's multiplier.
    public static let prime: UInt64 = 0x0000_0100_0000_01B3

    /// The checksum of the floats folded in so far.
    public private(set) var value: UInt64 = offsetBasis

    /// A checksum of no floats (the offset basis).
    public init() {}

    /// Folds in one float.
    public mutating func combine(_ sample: Float) {
        var bits = sample.bitPattern
        var hash = value
        for _ in 0..<4 {
            hash = (hash ^ UInt64(bits & 0xFF)) &* Self.prime
            bits >>= 8
        }
        value = hash
    }

    /// Folds in `samples` in order.
    public mutating func combine(contentsOf samples: UnsafeBufferPointer<Float>) {
        var hash = value
        for sample in samples {
            var bits = sample.bitPattern
            for _ in 0..<4 {
                hash = (hash ^ UInt64(bits & 0xFF)) &* Self.prime
                bits >>= 8
            }
        }
        value = hash
    }

    /// The checksum of `samples`, in order.
    public static func of(_ samples: [Float]) -> UInt64 {
        var checksum = PixelChecksum()
        samples.withUnsafeBufferPointer { checksum.combine(contentsOf: $0) }
        return checksum.value
    }

    /// The checksum of the pixels of `region` (inside `buffer.rect`) in `buffer`: what a worker
    /// sends for the tile `region` it wrote, and what the coordinator checks after stitching.
    public static func of(_ buffer: PixelBuffer, in region: Rect) -> UInt64 {
        precondition(buffer.rect.contains(region), "region \(region) lies outside \(buffer.rect)")
        var checksum = PixelChecksum()
        if region.isEmpty { return checksum.value }
        let rowFloats = region.width * buffer.channels
        buffer.withUnsafePixels { p in
            var row = p + (region.y - buffer.rect.y) * buffer.rowStride + (region.x - buffer.rect.x) * buffer.channels
            for _ in 0..<region.height {
                checksum.combine(contentsOf: UnsafeBufferPointer(start: row, count: rowFloats))
                row += buffer.rowStride
            }
        }
        return checksum.value
    }
}
