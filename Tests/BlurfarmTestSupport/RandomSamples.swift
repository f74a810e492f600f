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

/// A `width` × `height` image of random 8-bit RGBA samples, opaque but for `spots` small
/// rectangles (1 to 3 pixels a side) of random alpha, 0 and 255 among them, from `seed`: an
/// image where some pixels' windows read only opaque pixels and others do not.
public func randomSpottedRGBA(width: Int, height: Int, spots: Int, seed: UInt64) -> AnyPixels {
    var rng = SplitMix(seed: seed)
    let pixels = randomSamples(width: width, height: height, bands: 4, format: .uint8, seed: seed)
    let samples = pixels.uint8Samples!
    for y in 0..<height {
        for x in 0..<width { samples[x, y][3] = 255 }
    }
    for _ in 0..<spots {
        let x = Int(rng.next() % UInt64(width)), y = Int(rng.next() % UInt64(height))
        let w = 1 + Int(rng.next() % 3), h = 1 + Int(rng.next() % 3)
        let alpha: UInt8 = switch rng.next() % 3 {
        case 0: 0
        case 1: 254
        default: UInt8(truncatingIfNeeded: rng.next())
        }
        for sy in y..<min(y + h, height) {
            for sx in x..<min(x + w, width) { samples[sx, sy][3] = alpha }
        }
    }
    return pixels
}
