import BlurfarmCore

/// A `width` × `height` image of random `format` samples (8- or 16-bit), `bands` (3 or 4) a
/// pixel, from `seed`: what a file's decoder might give.
public func randomSamples(width: Int, height: Int, bands: Int, format: SampleFormat, seed: UInt64) -> AnyPixels {
    var rng = SplitMix(seed: seed)
    let pixels = AnyPixels.uninitialized(Rect(width: width, height: height), channels: bands, format: format)
    pixels.forEachRow(in: pixels.rect) { row, bytes in
        for i in 0..<bytes { row.storeBytes(of: UInt8(truncatingIfNeeded: rng.next()), toByteOffset: i, as: UInt8.self) }
    }
    return pixels
}
