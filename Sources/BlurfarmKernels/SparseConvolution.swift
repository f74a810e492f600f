import BlurfarmCore

/// Convolution with a short list of taps at integer offsets: the schedule of the motion
/// filter. For every output value the arithmetic is `Σ_t w_t·in(p + d_t)` summed in tap order,
/// in `Float`, starting from the first tap's product: every schedule and tile agree bit for bit.
/// The loops run over floats, whatever the channels.
enum SparseConvolution {
    struct Tap {
        let dx: Int
        let dy: Int
        let weight: Float
    }

    static func apply(taps: [Tap], input: PixelBuffer, output: PixelBuffer, schedule: KernelSchedule) {
        let out = output.rect
        let n = output.channels
        if out.isEmpty { return }
        precondition(!taps.isEmpty && input.channels == n)
        // Offsets of every tap from the output value's position in the input, in floats.
        let offsets = taps.map { $0.dy * input.rowStride + $0.dx * n }
        let weights = taps.map(\.weight)
        let row = schedule == .reference ? rowReference : rowBlocked
        input.withUnsafePixels { inBase in
            output.withUnsafePixels { outBase in
                offsets.withUnsafeBufferPointer { off in
                    weights.withUnsafeBufferPointer { w in
                        for y in out.y..<out.maxY {
                            let src = inBase + (y - input.rect.y) * input.rowStride + (out.x - input.rect.x) * n
                            let dst = outBase + (y - out.y) * output.rowStride
                            row(w, off, src, dst, out.width * n)
                        }
                    }
                }
            }
        }
    }

    private static func rowReference(
        _ w: UnsafeBufferPointer<Float>, _ off: UnsafeBufferPointer<Int>,
        _ src: UnsafeMutablePointer<Float>, _ dst: UnsafeMutablePointer<Float>, _ count: Int
    ) {
        for i in 0..<count {
            var acc = w[0] * src[i + off[0]]
            for t in 1..<w.count { acc += w[t] * src[i + off[t]] }
            dst[i] = acc
        }
    }

    /// 64 floats at a time in eight 8-lane accumulators, then 8, then one by one.
    private static func rowBlocked(
        _ w: UnsafeBufferPointer<Float>, _ off: UnsafeBufferPointer<Int>,
        _ src: UnsafeMutablePointer<Float>, _ dst: UnsafeMutablePointer<Float>, _ count: Int
    ) {
        let taps = w.count
        var i = 0
        while i + 64 <= count {
            let c = src + i
            var p = c + off[0]
            let w0 = w[0]
            var a0 = w0 * load8(p), a1 = w0 * load8(p + 8), a2 = w0 * load8(p + 16), a3 = w0 * load8(p + 24)
            var a4 = w0 * load8(p + 32), a5 = w0 * load8(p + 40), a6 = w0 * load8(p + 48), a7 = w0 * load8(p + 56)
            for t in 1..<taps {
                p = c + off[t]
                let wt = w[t]
                a0 += wt * load8(p); a1 += wt * load8(p + 8); a2 += wt * load8(p + 16); a3 += wt * load8(p + 24)
                a4 += wt * load8(p + 32); a5 += wt * load8(p + 40); a6 += wt * load8(p + 48); a7 += wt * load8(p + 56)
            }
            let o = dst + i
            store8(a0, o); store8(a1, o + 8); store8(a2, o + 16); store8(a3, o + 24)
            store8(a4, o + 32); store8(a5, o + 40); store8(a6, o + 48); store8(a7, o + 56)
            i += 64
        }
        while i + 8 <= count {
            let c = src + i
            var a = w[0] * load8(c + off[0])
            for t in 1..<taps { a += w[t] * load8(c + off[t]) }
            store8(a, dst + i)
            i += 8
        }
        while i < count {
            var a = w[0] * src[i + off[0]]
            for t in 1..<taps { a += w[t] * src[i + off[t]] }
            dst[i] = a
            i += 1
        }
    }
}
