/// The checksum of a tile's pixels that a ``TaskResult`` carries: XXH3-64 (libxxhash) over
/// the bytes of the samples (the floats' bit patterns, or a file's 8- or 16-bit samples), row
/// by row, each row seeded with the value so far.
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
        of(.float32(buffer), in: region, continuing: continuing)
    }

    /// The checksum of the samples of `region` in `pixels`, of any format: the bytes of each
    /// row as they lie in memory (`Float32` bit patterns, or 8- or 16-bit samples), chained as
    /// above. A streamed image's output bands are checksummed as the samples the encoder takes.
    public static func of(_ pixels: AnyPixels, in region: Rect, continuing: UInt64 = 0) -> UInt64 {
        precondition(pixels.rect.contains(region), "region \(region) lies outside \(pixels.rect)")
        var value = continuing
        pixels.forEachRow(in: region) { row, bytes in value = XXH3.hash(row, bytes, seed: value) }
        return value
    }

    /// The checksum of `rows` rows of `rowBytes` bytes each, packed one after the other in
    /// `bytes`: the same value as ``of(_:in:continuing:)-(AnyPixels,_,_)`` of the pixels they are
    /// (the samples an encoder takes, for example).
    public static func of(packedRows bytes: UnsafeRawBufferPointer, rowBytes: Int, continuing: UInt64 = 0) -> UInt64 {
        precondition(rowBytes > 0 && bytes.count % rowBytes == 0, "whole rows")
        var value = continuing
        var row = 0
        while row < bytes.count {
            value = XXH3.hash(bytes.baseAddress! + row, rowBytes, seed: value)
            row += rowBytes
        }
        return value
    }
}
