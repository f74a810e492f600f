import BlurfarmCore
import CKernels

/// The motion blur over opaque 8-bit RGB in fixed point, edge `clamp` or `mirror`: the mask
/// (``Mask``, the algorithm and its proof) and the schedule (``apply(_:_:tile:source:image:edge:output:lanes:)``).
///
/// **Arithmetic.** One pass: `sum = Σₜ Wₜ · s(p + dₜ)` over the ``MotionMask``'s taps, exactly in
/// 32-bit integers (8-bit samples times 15-bit weights), with `Wₜ = round(wₜ · 2ˢ)` but for the
/// largest weight, which takes up the rest so that `Σ Wₜ = 2ˢ` exactly; `s` is the largest (at
/// most 23) that keeps every weight below 2¹⁵ (a signed 16-bit operand of `vpmaddwd`) and so
/// every sum, rounding half included, below 2³¹. The level is `min((sum + 2ˢ⁻¹) >> s, 255)`.
///
/// **Accuracy.** The sum errs from the definition `Σ wₜ · s(p + dₜ)` by `Σ (Wₜ/2ˢ − wₜ) · s(p + dₜ)`;
/// the weights' errors sum to zero and every sample lies in 0 … 255, so by at most
/// `255 · Σₜ |Wₜ − wₜ·2ˢ| / 2ˢ⁺¹` levels (``Mask/errorBound``: 0.0002 to 0.004 at radius 20,
/// 41 to 91 taps by the angle, `s` = 20). A mask exists only where that is below half a level, so every level is within
/// `0.5 + errorBound` < 1 of the unrounded double-precision definition. Integer sums have no
/// rounding of their own: the AVX-512, AVX2 and scalar code and any tiling give the same bits.
enum FixedPointMotion {
    /// The taps' weights in fixed point.
    struct Mask: Sendable, Equatable {
        /// `Wₜ`, in the mask's tap order, padded with a 0 to an even count.
        let weights: [Int16]
        /// `s`: the sum keeps `(sum + 2ˢ⁻¹) >> s`.
        let shift: Int
        /// How far, in levels, the sum before the final rounding can lie from the definition.
        let errorBound: Double

        /// The fixed-point form of `mask`, or nil when no `s` gives a bound below half a level.
        init?(_ mask: MotionMask) {
            guard !mask.taps.isEmpty else { return nil }
            let largest = mask.taps.indices.max { mask.taps[$0].weight < mask.taps[$1].weight }!
            for s in stride(from: 23, through: 1, by: -1) {
                let one = Double(1 << s)
                var w = mask.taps.map { ($0.weight * one).rounded() }
                w[largest] += one - w.reduce(0, +)
                guard w.allSatisfy({ $0 >= 0 && $0 < 32768 }) else { continue }
                let error = zip(w, mask.taps).reduce(0.0) { $0 + abs($1.0 - $1.1.weight * one) }
                let bound = 255 * error / (2 * one) + 0x1p-20
                guard bound < 0.5 else { return nil }
                weights = w.map { Int16($0) } + (w.count % 2 == 1 ? [0] : [])
                shift = s
                errorBound = bound
                return
            }
            return nil
        }
    }

    /// Renders `tile` from `source` (opaque RGB, holding the tile grown by `motion`'s reach and
    /// clipped to the image) into `output` (3 channels): each output row from the taps' rows of
    /// 8-bit samples (the rows and columns as
    /// ``SampleConvolution/plan(tile:source:image:edge:reach:channels:)`` maps them), read in
    /// place when the tile's columns all lie in the image, else copied once each into a ring
    /// with the columns beyond the image folded in. `lanes` below
    /// ``FixedPointConvolution/Lanes/widest`` keeps the C sum to narrower code.
    static func apply(
        _ fixed: Mask, _ motion: MotionMask, tile: Rect, source: SampleBuffer<UInt8>, image: Rect, edge: EdgeRule,
        output: SampleBuffer<UInt8>, lanes: FixedPointConvolution.Lanes = .widest
    ) {
        precondition(source.channels == 3 && output.channels == 3 && edge.foldsIntoTheImage)
        if tile.isEmpty { return }
        let n = 3, reach = motion.reach
        let p = SampleConvolution.plan(tile: tile, source: source, image: image, edge: edge, reach: reach, channels: n)
        let copies = p.copiedColumns.map { ($0.to, $0.from!) }  // clamp and mirror copy every column outside
        let rowSamples = p.columns.count * n, ringRows = copies.isEmpty ? 0 : 2 * reach.y + 1
        let ring = UnsafeMutablePointer<UInt8>.allocate(capacity: ringRows * rowSamples)
        defer { ring.deallocate() }
        var pointers = [UnsafePointer<UInt8>?](repeating: nil, count: fixed.weights.count)
        let vector = lanes.rawValue
        fixed.weights.withUnsafeBufferPointer { w in
            source.withUnsafeSamples { src in
                output.withUnsafeSamples { dst in
                    var made = 0  // the plan's rows before `made` are in the ring (or asked of the memory)
                    for y in 0..<tile.height {
                        while made <= y + 2 * reach.y {
                            p.prefetch(aheadOf: made, in: src)
                            if !copies.isEmpty {
                                let line = ring + (made % ringRows) * rowSamples
                                (line + p.computedStart).update(from: src + p.rowOffset[made]!, count: p.computed.count * n)
                                for (to, from) in copies { (line + to * n).update(from: line + from * n, count: n) }
                            }
                            made += 1
                        }
                        for (t, tap) in motion.taps.enumerated() {
                            let source = y + reach.y + tap.dy
                            let row = copies.isEmpty
                                ? UnsafePointer(src + p.rowOffset[source]!) : UnsafePointer(ring + (source % ringRows) * rowSamples)
                            pointers[t] = row + (reach.x + tap.dx) * n
                        }
                        // The padding tap (weight 0) reads the first tap's values.
                        if pointers.count > motion.taps.count { pointers[motion.taps.count] = pointers[0] }
                        let out = dst + (tile.y + y - output.rect.y) * output.rowStride + (tile.x - output.rect.x) * n
                        pointers.withUnsafeBufferPointer { p in
                            bf_sparse_sum(p.baseAddress, w.baseAddress, Int32(p.count), Int32(fixed.shift), out, tile.width * n, vector)
                        }
                    }
                }
            }
        }
    }
}
