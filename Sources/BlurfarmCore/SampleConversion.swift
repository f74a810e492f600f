/// The loops between a file's interleaved 8/16-bit samples (what libvips decodes and encodes)
/// and blurfarm's premultiplied RGBA `Float32` pixels, a row at a time: the decoder and the
/// encoder of whole images use them, and so do the tiles of a streamed image, converted where
/// they are rendered (in a worker process, or in this one).
public enum SampleConversion {
    /// `v / 255` for every 8-bit value v: the exact float the reader promises.
    public static let unit8: [Float] = (0...255).map { Float($0) / 255 }
    /// `v / 65535` for every 16-bit value v.
    public static let unit16: [Float] = (0...65535).map { Float($0) / 65535 }

    // MARK: Samples to pixels

    /// Fills `destination` (`pixelCount * bands` floats) from `source`, `bands` (3 or 4) samples
    /// a pixel: each sample becomes `unit[sample]`, colour is multiplied by alpha, and a pixel
    /// without alpha keeps 3 channels (alpha 1 is not stored).
    @inline(__always)
    static func premultiply<Sample: FixedWidthInteger & UnsignedInteger>(
        _ source: UnsafePointer<Sample>, bands: Int, pixelCount: Int, unit: UnsafePointer<Float>,
        into destination: UnsafeMutablePointer<Float>
    ) {
        var s = source
        var d = destination
        if bands == 3 {
            for _ in 0..<pixelCount {
                d[0] = unit[Int(s[0])]
                d[1] = unit[Int(s[1])]
                d[2] = unit[Int(s[2])]
                s += 3
                d += 3
            }
        } else {
            precondition(bands == 4, "premultiply takes 3 or 4 bands")
            for _ in 0..<pixelCount {
                let a = unit[Int(s[3])]
                d[0] = unit[Int(s[0])] * a
                d[1] = unit[Int(s[1])] * a
                d[2] = unit[Int(s[2])] * a
                d[3] = a
                s += 4
                d += 4
            }
        }
    }

    /// `pixelCount` pixels of 8-bit samples, `bands` (3 or 4) a pixel, as premultiplied floats
    /// (as many channels as bands).
    public static func premultiply(
        _ source: UnsafePointer<UInt8>, bands: Int, pixelCount: Int, into destination: UnsafeMutablePointer<Float>
    ) {
        unit8.withUnsafeBufferPointer { unit in
            premultiply(source, bands: bands, pixelCount: pixelCount, unit: unit.baseAddress!, into: destination)
        }
    }

    /// `pixelCount` pixels of 16-bit samples as premultiplied floats.
    public static func premultiply(
        _ source: UnsafePointer<UInt16>, bands: Int, pixelCount: Int, into destination: UnsafeMutablePointer<Float>
    ) {
        unit16.withUnsafeBufferPointer { unit in
            premultiply(source, bands: bands, pixelCount: pixelCount, unit: unit.baseAddress!, into: destination)
        }
    }

    // MARK: Pixels to samples

    /// `value` (nominally 0...1) scaled to 0...`maximum`, rounded to nearest (halves up),
    /// clamped; NaN becomes 0. The result is a whole number in 0...maximum.
    @inline(__always)
    public static func quantize(_ value: Float, _ maximum: Float) -> Float {
        let v = (value * maximum + 0.5).rounded(.down)
        return v >= 0 ? (v <= maximum ? v : maximum) : 0
    }

    /// `quantize(value, maximum)` as a sample. The conversion goes through `Int32`, one
    /// instruction; a generic `Sample(Float)` is a slow library path.
    @inline(__always)
    static func sample<Sample: FixedWidthInteger & UnsignedInteger>(_ value: Float, _ maximum: Float) -> Sample {
        Sample(truncatingIfNeeded: Int32(quantize(value, maximum)))
    }

    /// Writes `pixelCount` pixels of `source` (`channels` 3 or 4 premultiplied floats a pixel)
    /// as samples for an encoder: 4 bands (straight alpha; alpha 0 gives colour 0) when `bands`
    /// is 4, else 3 bands composited over `background`. A 3-channel pixel has alpha 1.
    @inline(__always)
    static func samples<Sample: FixedWidthInteger & UnsignedInteger & SIMDScalar>(
        _ source: UnsafePointer<Float>, channels n: Int, pixelCount: Int, bands: Int, background: SIMD3<Float>,
        into destination: UnsafeMutablePointer<Sample>
    ) {
        let maximum = Float(Sample.max)
        if n == 3 && bands == 3 {
            // Opaque in and out (most photos): every float is one sample, eight at a time.
            quantizeOpaque(source, count: pixelCount * 3, into: destination)
            return
        }
        let alpha = bands == 4
        var p = source
        var o = destination
        for _ in 0..<pixelCount {
            let a = n == 4 ? p[3] : 1
            if alpha {
                if a == 1 {
                    o[0] = sample(p[0], maximum)
                    o[1] = sample(p[1], maximum)
                    o[2] = sample(p[2], maximum)
                    o[3] = Sample.max
                } else if a > 0 {
                    o[0] = sample(p[0] / a, maximum)
                    o[1] = sample(p[1] / a, maximum)
                    o[2] = sample(p[2] / a, maximum)
                    o[3] = sample(a, maximum)
                } else {
                    o[0] = 0; o[1] = 0; o[2] = 0; o[3] = 0
                }
                o += 4
            } else if a == 1 {
                o[0] = sample(p[0], maximum)
                o[1] = sample(p[1], maximum)
                o[2] = sample(p[2], maximum)
                o += 3
            } else {
                // Source-over onto an opaque background, in premultiplied terms.
                let t = 1 - (a >= 0 ? (a <= 1 ? a : 1) : 0)
                o[0] = sample(p[0] + t * background[0], maximum)
                o[1] = sample(p[1] + t * background[1], maximum)
                o[2] = sample(p[2] + t * background[2], maximum)
                o += 3
            }
            p += n
        }
    }

    /// `count` floats of opaque pixels as samples: `sample(value, Sample.max)` of each, eight
    /// lanes at a time with the same operations (a multiply, an add, the floor, the clamp), so
    /// the same samples. The floor of `q` in `0 … 2²²`: `q + 2²³` rounds it to the nearest
    /// integer (ties to even) in the low bits of the sum, one less where that went above `q`.
    @inline(__always)
    static func quantizeOpaque<Sample: FixedWidthInteger & UnsignedInteger & SIMDScalar>(
        _ source: UnsafePointer<Float>, count: Int, into destination: UnsafeMutablePointer<Sample>
    ) {
        let maximum = Float(Sample.max)
        var i = 0
        while i + 8 <= count {
            let x = UnsafeRawPointer(source + i).loadUnaligned(as: SIMD8<Float>.self)
            var q = x * maximum + 0.5
            // NaN and below 0 become 0, above the maximum the maximum: floor commutes with both.
            q.replace(with: 0, where: .!(q .>= 0))
            q.replace(with: maximum, where: q .> maximum)
            let sum = q + 8_388_608
            var level = unsafeBitCast(sum, to: SIMD8<UInt32>.self) &- 0x4B00_0000
            level &-= SIMD8<UInt32>(repeating: 1).replacing(with: 0, where: .!(sum - 8_388_608 .> q))
            UnsafeMutableRawPointer(destination + i).storeBytes(of: SIMD8<Sample>(truncatingIfNeeded: level), as: SIMD8<Sample>.self)
            i += 8
        }
        while i < count {
            destination[i] = sample(source[i], maximum)
            i += 1
        }
    }

    /// `pixelCount` premultiplied pixels as 8-bit samples, `bands` (3 or 4) a pixel.
    public static func unpremultiply(
        _ source: UnsafePointer<Float>, channels: Int, pixelCount: Int, bands: Int, background: SIMD3<Float>,
        into destination: UnsafeMutablePointer<UInt8>
    ) {
        samples(source, channels: channels, pixelCount: pixelCount, bands: bands, background: background, into: destination)
    }

    /// `pixelCount` premultiplied pixels as 16-bit samples, `bands` (3 or 4) a pixel.
    public static func unpremultiply(
        _ source: UnsafePointer<Float>, channels: Int, pixelCount: Int, bands: Int, background: SIMD3<Float>,
        into destination: UnsafeMutablePointer<UInt16>
    ) {
        samples(source, channels: channels, pixelCount: pixelCount, bands: bands, background: background, into: destination)
    }
}
