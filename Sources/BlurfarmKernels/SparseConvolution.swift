import BlurfarmCore

/// Convolution with a short list of taps at integer offsets: the schedule of the motion
/// filter. For every output value the arithmetic is `Σ_t w_t·in(p + d_t)` summed in tap order,
/// in `Float`, starting from the first tap's product: every schedule and tile agree bit for bit.
enum SparseConvolution {
    struct Tap {
        let dx: Int
        let dy: Int
        let weight: Float
    }

    static func apply(taps: [Tap], input: PixelBuffer, output: PixelBuffer, schedule: KernelSchedule) {
        let out = output.rect
        if out.isEmpty { return }
        precondition(!taps.isEmpty)
        let stridePixels = input.rowStride / PixelBuffer.channels
        // Offsets of every tap from the output pixel's position in the input, in pixels.
        let offsets = taps.map { $0.dy * stridePixels + $0.dx }
        let weights = taps.map(\.weight)
        input.withUnsafePixels { inBase in
            output.withUnsafePixels { outBase in
                offsets.withUnsafeBufferPointer { off in
                    weights.withUnsafeBufferPointer { w in
                        let s = UnsafeMutableRawPointer(inBase).assumingMemoryBound(to: SIMD4<Float>.self)
                        let d = UnsafeMutableRawPointer(outBase).assumingMemoryBound(to: SIMD4<Float>.self)
                        for y in out.y..<out.maxY {
                            let src = s + (y - input.rect.y) * stridePixels + (out.x - input.rect.x)
                            let dst = d + (y - out.y) * (output.rowStride / PixelBuffer.channels)
                            if schedule == .reference {
                                rowReference(w, off, src, dst, out.width)
                            } else {
                                rowBlocked(w, off, src, dst, out.width)
                            }
                        }
                    }
                }
            }
        }
    }

    private static func rowReference(
        _ w: UnsafeBufferPointer<Float>, _ off: UnsafeBufferPointer<Int>,
        _ src: UnsafeMutablePointer<SIMD4<Float>>, _ dst: UnsafeMutablePointer<SIMD4<Float>>, _ pixels: Int
    ) {
        for x in 0..<pixels {
            for ch in 0..<PixelBuffer.channels {
                var acc = w[0] * src[x + off[0]][ch]
                for t in 1..<w.count { acc += w[t] * src[x + off[t]][ch] }
                dst[x][ch] = acc
            }
        }
    }

    private static func rowBlocked(
        _ w: UnsafeBufferPointer<Float>, _ off: UnsafeBufferPointer<Int>,
        _ src: UnsafeMutablePointer<SIMD4<Float>>, _ dst: UnsafeMutablePointer<SIMD4<Float>>, _ pixels: Int
    ) {
        let taps = w.count
        var x = 0
        while x + 8 <= pixels {
            let c = src + x
            var p = c + off[0]
            let w0 = w[0]
            var a0 = w0 * p[0], a1 = w0 * p[1], a2 = w0 * p[2], a3 = w0 * p[3]
            var a4 = w0 * p[4], a5 = w0 * p[5], a6 = w0 * p[6], a7 = w0 * p[7]
            for t in 1..<taps {
                p = c + off[t]
                let wt = w[t]
                a0 += wt * p[0]; a1 += wt * p[1]; a2 += wt * p[2]; a3 += wt * p[3]
                a4 += wt * p[4]; a5 += wt * p[5]; a6 += wt * p[6]; a7 += wt * p[7]
            }
            let o = dst + x
            o[0] = a0; o[1] = a1; o[2] = a2; o[3] = a3; o[4] = a4; o[5] = a5; o[6] = a6; o[7] = a7
            x += 8
        }
        while x < pixels {
            let c = src + x
            var a = w[0] * c[off[0]]
            for t in 1..<taps { a += w[t] * c[off[t]] }
            dst[x] = a
            x += 1
        }
    }
}
