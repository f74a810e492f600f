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
        let s = UnsafeMutableRawPointer(src).assumingMemoryBound(to: Float.self)
        let d = UnsafeMutableRawPointer(dst).assumingMemoryBound(to: Float.self)
        let n = PixelBuffer.channels
        var x = 0
        // 16 pixels at a time: each 8-lane accumulator holds two neighbouring pixels.
        while x + 16 <= pixels {
            let c = s + x * n
            var p = c + off[0] * n
            let w0 = w[0]
            var a0 = w0 * load8(p), a1 = w0 * load8(p + 8), a2 = w0 * load8(p + 16), a3 = w0 * load8(p + 24)
            var a4 = w0 * load8(p + 32), a5 = w0 * load8(p + 40), a6 = w0 * load8(p + 48), a7 = w0 * load8(p + 56)
            for t in 1..<taps {
                p = c + off[t] * n
                let wt = w[t]
                a0 += wt * load8(p); a1 += wt * load8(p + 8); a2 += wt * load8(p + 16); a3 += wt * load8(p + 24)
                a4 += wt * load8(p + 32); a5 += wt * load8(p + 40); a6 += wt * load8(p + 48); a7 += wt * load8(p + 56)
            }
            let o = d + x * n
            store8(a0, o); store8(a1, o + 8); store8(a2, o + 16); store8(a3, o + 24)
            store8(a4, o + 32); store8(a5, o + 40); store8(a6, o + 48); store8(a7, o + 56)
            x += 16
        }
        while x < pixels {
            let c = s + x * n
            var a = w[0] * load4(c + off[0] * n)
            for t in 1..<taps { a += w[t] * load4(c + off[t] * n) }
            store4(a, d + x * n)
            x += 1
        }
    }
}
