import BlurfarmCore
import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Whole images between interleaved 8/16-bit samples (what libvips decodes and encodes) and
/// blurfarm's premultiplied RGBA Float32 pixels, with the row loops of ``SampleConversion``.
enum PixelConversion {
    // MARK: Decoding

    /// Images smaller than this many pixels per core are converted on one thread.
    static let minimumPixelsPerPart = 1 << 18

    /// Online processors.
    static let processorCount = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))

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
                    SampleConversion.premultiply(
                        source.assumingMemoryBound(to: UInt16.self), bands: bands, pixelCount: pixelsPerCall,
                        into: destination)
                } else {
                    SampleConversion.premultiply(
                        source.assumingMemoryBound(to: UInt8.self), bands: bands, pixelCount: pixelsPerCall,
                        into: destination)
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

    /// Interleaved samples for an encoder: 4 bands (straight alpha; alpha 0 gives colour 0) when
    /// `alpha`, else 3 bands composited over `background`. `Sample` is UInt8 or UInt16. A
    /// 3-channel (opaque) buffer has alpha 1 everywhere.
    static func samples<Sample: FixedWidthInteger & UnsignedInteger>(
        _ pixels: PixelBuffer, alpha: Bool, background: SIMD3<Float>, as: Sample.Type
    ) -> [Sample] {
        let width = pixels.rect.width, height = pixels.rect.height
        let bands = alpha ? 4 : 3
        let n = pixels.channels
        return [Sample](unsafeUninitializedCapacity: width * height * bands) { out, initialised in
            pixels.withUnsafePixels { base in
                for y in 0..<height {
                    let row = UnsafePointer(base + y * pixels.rowStride)
                    let destination = UnsafeMutableRawPointer(out.baseAddress! + y * width * bands)
                    if Sample.self == UInt16.self {
                        SampleConversion.unpremultiply(
                            row, channels: n, pixelCount: width, bands: bands, background: background,
                            into: destination.assumingMemoryBound(to: UInt16.self))
                    } else {
                        SampleConversion.unpremultiply(
                            row, channels: n, pixelCount: width, bands: bands, background: background,
                            into: destination.assumingMemoryBound(to: UInt8.self))
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
