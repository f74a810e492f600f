import BlurfarmCore
import CKernels

/// The schedule of the 8-bit gaussian in 16-bit fixed point (``FixedPointMask`` defines the
/// arithmetic): opaque RGB in, opaque RGB out, edge `clamp` or `mirror`. The same structure as
/// ``SampleConvolution``'s fast schedule (slabs of columns, each input row once through the
/// rows pass into a ring, the columns pass strip by strip, four output rows at a time), with
/// the passes themselves in C (`CKernels`: AVX2's 16-bit multiply-high, which Swift's SIMD
/// types do not reach). The reference schedule is obvious scalar Swift computing the same
/// integers.
enum FixedPointConvolution {
    /// Samples per column block of the columns pass: the block's `stripRows + 2R` ring rows
    /// (41 KB at sigma 8) stay in L1 or close while the strip's output rows are made (in a
    /// stand-alone harness, 128 took 14–15 % longer at sigma 2 and 8, 4096 1 % and 10 %).
    static let blockSamples = 256

    static func apply(
        _ mask: FixedPointMask, tile: Rect, source: SampleBuffer<UInt8>, image: Rect, edge: EdgeRule,
        output: SampleBuffer<UInt8>, schedule: KernelSchedule
    ) {
        precondition(source.channels == 3 && output.channels == 3 && (edge == .clamp || edge == .mirror))
        if tile.isEmpty { return }
        let r = mask.radius
        let p = SampleConvolution.plan(tile: tile, source: source, image: image, edge: edge, radius: r, channels: 3)
        mask.weights.withUnsafeBufferPointer { w in
            source.withUnsafeSamples { src in
                output.withUnsafeSamples { dst in
                    let out = dst + (tile.y - output.rect.y) * output.rowStride + (tile.x - output.rect.x) * 3
                    if schedule == .reference {
                        reference(mask, p, src, out, output.rowStride, rows: tile.height)
                        return
                    }
                    SampleConvolution.forEachSlab(
                        of: tile, planned: p, source: source, image: image, edge: edge,
                        sampleBytes: MemoryLayout<UInt16>.stride
                    ) { slab, dx in
                        strips(w, mask.bias, slab, src, out + dx * 3, output.rowStride, rows: tile.height)
                    }
                }
            }
        }
    }

    // MARK: The reference: whole passes, one integer at a time.

    @inline(__always)
    private static func mulhi(_ a: UInt16, _ b: UInt16) -> UInt16 { UInt16(truncatingIfNeeded: (UInt32(a) * UInt32(b)) >> 16) }

    private static func reference(
        _ mask: FixedPointMask, _ p: SampleConvolution.Plan, _ src: UnsafeMutablePointer<UInt8>,
        _ dst: UnsafeMutablePointer<UInt8>, _ dstStride: Int, rows: Int
    ) {
        let r = p.radius, w = mask.weights, width = p.columns.count, tileSamples = (width - 2 * r) * 3
        let inputRows = rows + 2 * r
        var across = [UInt16](repeating: 0, count: inputRows * tileSamples)
        for y in 0..<inputRows {
            let offset = p.rowOffset[y]!  // clamp and mirror: every row exists
            let q = { (x: Int, c: Int) -> UInt16 in
                UInt16(src[offset + (p.columnSource[x]! - p.computed.lowerBound) * 3 + c]) << 7
            }
            for i in 0..<tileSamples {
                let x = r + i / 3, c = i % 3
                var acc = mask.bias &+ mulhi(q(x, c), w[0])
                for k in 1...r { acc = acc &+ mulhi(q(x - k, c) &+ q(x + k, c), w[k]) }
                across[y * tileSamples + i] = acc
            }
        }
        for y in 0..<rows {
            for i in 0..<tileSamples {
                let at = { (dy: Int) in across[(y + r + dy) * tileSamples + i] }
                var acc = mask.bias &+ mulhi(at(0), w[0])
                for k in 1...r { acc = acc &+ mulhi(at(-k) &+ at(k), w[k]) }
                dst[y * dstStride + i] = UInt8(min((acc &+ 64) >> 7, 255))
            }
        }
    }

    // MARK: The fast schedule.

    private static func strips(
        _ w: UnsafeBufferPointer<UInt16>, _ bias: UInt16, _ p: SampleConvolution.Plan, _ src: UnsafeMutablePointer<UInt8>,
        _ dst: UnsafeMutablePointer<UInt8>, _ dstStride: Int, rows: Int
    ) {
        let r = p.radius, n = 3
        let width = p.columns.count, tileSamples = (width - 2 * r) * n
        let stripCapacity = min(SampleConvolution.stripRows, rows)
        let ringRows = stripCapacity + 2 * r
        // Ring rows 64 bytes more than a multiple of 4 KiB apart (as SampleConvolution's).
        let ringStride = (tileSamples + 2047) / 2048 * 2048 + 32
        let ring = UnsafeMutablePointer<UInt16>.allocate(capacity: ringRows * ringStride)
        let line = UnsafeMutablePointer<UInt16>.allocate(capacity: width * n)
        defer { ring.deallocate(); line.deallocate() }
        // clamp and mirror copy every column outside the image (none is 0).
        let copies = p.copiedColumns.map { ($0.to, $0.from!) }, computedStart = p.computedStart
        var window = [UnsafePointer<UInt16>?](repeating: nil, count: ringRows)
        var outputs = [UnsafeMutablePointer<UInt8>?](repeating: nil, count: 4)
        var made = 0
        var y0 = 0
        while y0 < rows {
            let count = min(stripCapacity, rows - y0)
            while made < y0 + count + 2 * r {
                bf_fixed_widen(src + p.rowOffset[made]!, line + computedStart, p.computed.count * n)
                for (i, s) in copies { (line + i * n).update(from: line + s * n, count: n) }
                bf_fixed_rows(line + r * n, n, w.baseAddress, Int32(r), bias, ring + (made % ringRows) * ringStride, tileSamples)
                made += 1
            }
            for j in 0..<(count + 2 * r) { window[j] = UnsafePointer(ring + ((y0 + j) % ringRows) * ringStride) }
            window.withUnsafeBufferPointer { rowsAt in
                var i = 0
                while i < tileSamples {
                    let samples = min(blockSamples, tileSamples - i)
                    var j = 0
                    while j < count {
                        let m = min(4, count - j)
                        for k in 0..<m { outputs[k] = dst + (y0 + j + k) * dstStride }
                        outputs.withUnsafeBufferPointer { o in
                            bf_fixed_columns(rowsAt.baseAddress! + j, Int32(r), w.baseAddress, bias, o.baseAddress, Int32(m), i, samples)
                        }
                        j += m
                    }
                    i += samples
                }
            }
            y0 += count
        }
    }
}
