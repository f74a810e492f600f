import BlurfarmCore
import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The loops between interleaved 8/16-bit samples (what libvips decodes and encodes) and
/// blurfarm's premultiplied RGBA Float32 pixels.
enum PixelConversion {
    /// `v / 255` for every 8-bit value v: the exact float the reader promises.
    static let unit8: [Float] = (0...255).map { Float($0) / 255 }
    /// `v / 65535` for every 16-bit value v.
    static let unit16: [Float] = (0...65535).map { Float($0) / 65535 }

    // MARK: Decoding

    /// Images smaller than this many pixels per core are converted on one thread.
    static let minimumPixelsPerPart = 1 << 18

    /// Online processors.
    static let processorCount = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))

    /// Fills `destination` (`pixelCount * bands` floats) from `source`, `bands` (3 or 4) samples a
    /// pixel: each sample becomes `unit[sample]`, colour is multiplied by alpha, and pixels
    /// without alpha get alpha 1.
    @inline(__always)
    static func premultiply<Sample: FixedWidthInteger & UnsignedInteger>(
        _ source: UnsafePointer<Sample>, bands: Int, pixelCount: Int, unit: UnsafePointer<Float>,
        into destination: UnsafeMutablePointer<Float>
    ) {
        var s = source
        var d = destination
        if bands == 3 {
            // Opaque: the buffer keeps 3 channels (alpha 1 is not stored).
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

    /// ``premultiply(_:bands:pixelCount:unit:into:)`` for 8-bit samples, compiled concretely.
    static func premultiply8(
        _ source: UnsafePointer<UInt8>, bands: Int, pixelCount: Int, unit: UnsafePointer<Float>,
        into destination: UnsafeMutablePointer<Float>
    ) {
        premultiply(source, bands: bands, pixelCount: pixelCount, unit: unit, into: destination)
    }

    /// ``premultiply(_:bands:pixelCount:unit:into:)`` for 16-bit samples, compiled concretely.
    static func premultiply16(
        _ source: UnsafePointer<UInt16>, bands: Int, pixelCount: Int, unit: UnsafePointer<Float>,
        into destination: UnsafeMutablePointer<Float>
    ) {
        premultiply(source, bands: bands, pixelCount: pixelCount, unit: unit, into: destination)
    }

    /// A new pixel buffer for interleaved `samples` (8- or 16-bit, 3 or 4 bands).
    static func pixelBuffer(
        from samples: UnsafeRawBufferPointer, width: Int, height: Int, bands: Int, sixteenBit: Bool,
        allocator: (any PixelAllocator)? = nil
    ) -> PixelBuffer {
        let pixelCount = width * height
        precondition(samples.count == pixelCount * bands * (sixteenBit ? 2 : 1), "sample count")
        // Uninitialised memory: every float is written below, so no zeroing pass.
        let byteCount = max(pixelCount, 1) * bands * MemoryLayout<Float>.stride
        let storage =
            allocator?.storage(byteCount: byteCount)
            ?? PixelStorage(
                adopting: UnsafeMutableRawPointer.allocate(byteCount: byteCount, alignment: 64), byteCount: byteCount
            ) { pointer, _ in pointer.deallocate() }
        let pixels = PixelBuffer(rect: Rect(width: width, height: height), storage: storage, channels: bands)
        // Most of the time here is the kernel handing out fresh pages for the floats; splitting
        // the rows over the cores splits that too. Each part writes only its own rows.
        let parts = max(1, min(processorCount, pixelCount / minimumPixelsPerPart))
        let rowBytes = width * bands * (sixteenBit ? 2 : 1)
        // The parts touch disjoint memory, and `samples` outlives the call.
        let source = UnsafeSendable(UnsafeRawPointer(samples.baseAddress!))
        DispatchQueue.concurrentPerform(iterations: parts) { part in
            let firstRow = height * part / parts, endRow = height * (part + 1) / parts
            fill(
                pixels.view(Rect(x: 0, y: firstRow, width: width, height: endRow - firstRow)),
                from: source.value + firstRow * rowBytes, sixteenBit: sixteenBit)
        }
        return pixels
    }

    /// Fills `pixels` (3 or 4 channels) from the interleaved 8- or 16-bit `samples` of its
    /// rectangle, as many bands as it has channels, row after row without padding: each sample
    /// becomes `unit8[sample]` or `unit16[sample]`, colour is multiplied by alpha.
    static func fill(_ pixels: PixelBuffer, from samples: UnsafeRawPointer, sixteenBit: Bool) {
        let width = pixels.rect.width, bands = pixels.channels
        let rowBytes = width * bands * (sixteenBit ? 2 : 1)
        // Contiguous rows convert in one call.
        let contiguous = pixels.rowStride == width * bands
        let calls = contiguous ? 1 : pixels.rect.height
        let pixelsPerCall = contiguous ? pixels.rect.area : width
        pixels.withUnsafePixels { floats in
            for call in 0..<calls {
                let source = samples + call * rowBytes, destination = floats + call * pixels.rowStride
                if sixteenBit {
                    unit16.withUnsafeBufferPointer { unit in
                        premultiply16(
                            source.assumingMemoryBound(to: UInt16.self), bands: bands, pixelCount: pixelsPerCall,
                            unit: unit.baseAddress!, into: destination)
                    }
                } else {
                    unit8.withUnsafeBufferPointer { unit in
                        premultiply8(
                            source.assumingMemoryBound(to: UInt8.self), bands: bands, pixelCount: pixelsPerCall,
                            unit: unit.baseAddress!, into: destination)
                    }
                }
            }
        }
    }

    // MARK: Encoding

    /// Whether any pixel's alpha is below 1 (or not a number).
    static func hasTranslucency(_ pixels: PixelBuffer) -> Bool {
        guard pixels.hasAlpha else { return false }
        return pixels.withUnsafePixels { base in
            for y in 0..<pixels.rect.height {
                let row = base + y * pixels.rowStride
                for x in 0..<pixels.rect.width where !(row[x * 4 + 3] >= 1) {
                    return true
                }
            }
            return false
        }
    }

    /// `value` (nominally 0...1) scaled to 0...`maximum`, rounded to nearest (halves up),
    /// clamped; NaN becomes 0. The result is a whole number in 0...maximum.
    @inline(__always)
    static func quantize(_ value: Float, _ maximum: Float) -> Float {
        let v = (value * maximum + 0.5).rounded(.down)
        return v >= 0 ? (v <= maximum ? v : maximum) : 0
    }

    /// `quantize(value, maximum)` as a sample. The conversion goes through `Int32`, one
    /// instruction; a generic `Sample(Float)` is a slow library path.
    @inline(__always)
    static func sample<Sample: FixedWidthInteger & UnsignedInteger>(_ value: Float, _ maximum: Float) -> Sample {
        Sample(truncatingIfNeeded: Int32(quantize(value, maximum)))
    }

    /// Interleaved samples for an encoder: 4 bands (straight alpha; alpha 0 gives colour 0) when
    /// `alpha`, else 3 bands composited over `background`. `Sample` is UInt8 or UInt16. A
    /// 3-channel (opaque) buffer has alpha 1 everywhere.
    static func samples<Sample: FixedWidthInteger & UnsignedInteger>(
        _ pixels: PixelBuffer, alpha: Bool, background: SIMD3<Float>, as: Sample.Type
    ) -> [Sample] {
        let width = pixels.rect.width, height = pixels.rect.height
        let bands = alpha ? 4 : 3
        let n = pixels.channels
        let maximum = Float(Sample.max)
        return [Sample](unsafeUninitializedCapacity: width * height * bands) { out, initialised in
            pixels.withUnsafePixels { base in
                var o = out.baseAddress!
                for y in 0..<height {
                    var p = UnsafePointer(base + y * pixels.rowStride)
                    for _ in 0..<width {
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
            }
            initialised = width * height * bands
        }
    }
}

/// A value handed to other threads whose safety the caller guarantees (here: pointers to
/// memory that outlives the work, each thread using its own part).
struct UnsafeSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
