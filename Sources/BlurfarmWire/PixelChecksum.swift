import BlurfarmCore
import CXXHash

/// The checksum of a tile's pixels that a ``TaskResult`` carries: XXH3-64 (libxxhash) over
/// the bytes of the floats' bit patterns, row by row, each row seeded with the value so far.
///
/// For a region of `height` rows, starting from 0: `value = XXH3_64bits_withSeed(row, bytes,
/// value)` for each row top to bottom, where a row is its floats (pixels left to right,
/// channels in order) as they lie in memory, little-endian. A region with no pixels is 0.
/// The worker computes it over the interior it wrote and the coordinator over the same
/// rectangle of the stitched output: both call this, so both get the same number for the
/// same bits. XXH3 runs at memory speed (docs/protocol.md, "Pixel checksum").
public enum PixelChecksum {
    /// The checksum of the pixels of `region` (inside `buffer.rect`) in `buffer`: what a worker
    /// sends for the tile `region` it wrote, and what the coordinator checks after stitching.
    /// `continuing` is the value of the rows above, for an image checksummed band by band (the
    /// rows of a region follow each other whatever buffers hold them).
    public static func of(_ buffer: PixelBuffer, in region: Rect, continuing: UInt64 = 0) -> UInt64 {
        precondition(buffer.rect.contains(region), "region \(region) lies outside \(buffer.rect)")
        if region.isEmpty { return continuing }
        let rowBytes = region.width * buffer.channels * MemoryLayout<Float>.stride
        var value = continuing
        buffer.withUnsafePixels { p in
            var row = p + (region.y - buffer.rect.y) * buffer.rowStride + (region.x - buffer.rect.x) * buffer.channels
            for _ in 0..<region.height {
                value = xxh3(row, rowBytes, value)
                row += buffer.rowStride
            }
        }
        return value
    }
}

/// XXH3-64 with a seed: libxxhash's run-time dispatching version on x86-64 (SIMD the CPU has),
/// the portable one elsewhere. Both give the same value.
@inline(__always)
private func xxh3(_ data: UnsafeRawPointer?, _ length: Int, _ seed: UInt64) -> UInt64 {
    #if arch(x86_64)
    XXH3_64bits_withSeed_dispatch(data, length, seed)
    #else
    XXH3_64bits_withSeed(data, length, seed)
    #endif
}
