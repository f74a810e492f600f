import BlurfarmCore
import CKernels

/// The schedule of the 8-bit gaussian in fixed point (``FixedPointMask`` defines the
/// arithmetic, 16-bit or 32-bit sums): opaque RGB in and out, or RGBA in and out, each channel,
/// alpha too, blurred as it is (a pixel whose window is opaque has its colour as premultiplied
/// colour, and its alpha stays 255; the caller keeps only such pixels, ``OpaqueWindows``, the
/// others' values being levels it discards); edge `clamp` or `mirror`.
/// The same structure as ``SampleConvolution``'s fast schedule (slabs of columns, each input row
/// once through the rows pass into a ring, the columns pass strip by strip), with the passes
/// themselves in C (`CKernels`: AVX2's 16-bit multiply-high and multiply-add, which Swift's SIMD
/// types do not reach). The reference schedule is obvious scalar Swift computing the same
/// integers.
enum FixedPointConvolution {
    /// The vector code the C passes may run (ckernels.h's `vector`): every kind gives the same
    /// integers.
    enum Lanes: Int32 {
        /// Scalar code only.
        case scalar = 0
        /// AVX2 (16 lanes) and scalar code.
        case avx2 = 1
        /// AVX-512BW (32 lanes) where the processor has it, then AVX2 and scalar code.
        case widest = 2
    }

    /// Samples per column block of the columns pass (``RenderSchedule/fixedPointBlockSamples``).
    static var blockSamples: Int { RenderSchedule.fixedPointBlockSamples }

    /// Renders `tile` (see ``GaussianBlur/render(tile:source:image:edge:into:)-(_,SampleBuffer<UInt8>,_,_,_)``).
    /// `lanes` below ``Lanes/widest`` keeps the C passes to narrower code (AVX2, or the scalar
    /// code a build without AVX2 runs): for tests that compare them.
    /// With `finish` (frost's saturation and tint), `mask` is a ``FixedPointMask/keepingFraction(_:)``
    /// form over opaque RGB: each output row's values (`level · 64`) go through `finish` into
    /// the output's levels.
    static func apply(
        _ mask: FixedPointMask, tile: Rect, source: SampleBuffer<UInt8>, image: Rect, edge: EdgeRule,
        output: SampleBuffer<UInt8>, schedule: KernelSchedule, lanes: Lanes = .widest, finish: SaturateAndTint? = nil
    ) {
        let n = source.channels
        precondition((n == 3 || n == 4) && output.channels == n && edge.foldsIntoTheImage)
        if finish != nil, case .sixteenBit = mask.sums { preconditionFailure("a finish takes the 32-bit sums' values") }
        precondition(finish == nil || n == 3, "a finish takes opaque RGB")
        if tile.isEmpty { return }
        let p = SampleConvolution.plan(tile: tile, source: source, image: image, edge: edge, radius: mask.radius, channels: n)
        let passes = Passes(mask, lanes: lanes)
        defer { passes.deallocate() }
        source.withUnsafeSamples { src in
            output.withUnsafeSamples { dst in
                let out = dst + (tile.y - output.rect.y) * output.rowStride + (tile.x - output.rect.x) * n
                if schedule == .reference {
                    reference(mask, p, src, out, output.rowStride, rows: tile.height, finish: finish)
                    return
                }
                SampleConvolution.forEachSlab(
                    of: tile, planned: p, source: source, image: image, edge: edge,
                    sampleBytes: MemoryLayout<UInt16>.stride
                ) { slab, dx in
                    strips(passes, slab, src, out + dx * n, output.rowStride, rows: tile.height, finish: finish)
                }
            }
        }
    }

    /// Copies the pixels of `from` (its whole rectangle, inside `output`'s) whose flag is set
    /// (`flags`: one a pixel, row by row) into `output`.
    static func copy(_ from: SampleBuffer<UInt8>, into output: SampleBuffer<UInt8>, where flags: [Bool]) {
        let rect = from.rect, n = from.channels
        precondition(output.rect.contains(rect) && output.channels == n && flags.count == rect.area)
        from.withUnsafeSamples { source in
            output.withUnsafeSamples { to in
                let origin = to + (rect.y - output.rect.y) * output.rowStride + (rect.x - output.rect.x) * n
                for y in 0..<rect.height {
                    for x in 0..<rect.width where flags[y * rect.width + x] {
                        (origin + y * output.rowStride + n * x).update(from: source + y * from.rowStride + n * x, count: n)
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
        _ dst: UnsafeMutablePointer<UInt8>, _ dstStride: Int, rows: Int, finish: SaturateAndTint?
    ) {
        let r = p.radius, n = p.channels, width = p.columns.count, tileSamples = (width - 2 * r) * n
        let inputRows = rows + 2 * r
        // One pass over the values `at(−R) … at(R)`, and the level of a columns-pass sum.
        let pass: (_ at: (Int) -> UInt16, _ rows: Bool) -> UInt16
        let level: (UInt16) -> UInt8
        let inputShift: Int
        switch mask.sums {
        case .sixteenBit(let w, let bias):
            inputShift = FixedPointMask.fractionBits
            pass = { at, _ in
                var acc = bias &+ mulhi(at(0), w[0])
                for k in 1...r { acc = acc &+ mulhi(at(-k) &+ at(k), w[k]) }
                return acc
            }
            level = { UInt8(min((Int($0) + 64) >> 7, 255)) }
        case .thirtyTwoBit(let rowsPass, let columnsPass):
            inputShift = 0
            pass = { at, isRows in
                let w = (isRows ? rowsPass : columnsPass).weights, shift = (isRows ? rowsPass : columnsPass).shift
                var acc = Int(w[0]) * Int(at(0))
                for k in 1...r { acc += Int(w[k]) * (Int(at(-k)) + Int(at(k))) }
                return UInt16((acc + 1 << (shift - 1)) >> shift)
            }
            level = { UInt8(min($0, 255)) }
        }
        var across = [UInt16](repeating: 0, count: inputRows * tileSamples)
        for y in 0..<inputRows {
            let offset = p.rowOffset[y]!  // clamp and mirror: every row exists
            for i in 0..<tileSamples {
                let x = r + i / n, c = i % n
                across[y * tileSamples + i] = pass({ k in
                    UInt16(src[offset + (p.columnSource[x + k]! - p.computed.lowerBound) * n + c]) << inputShift
                }, true)
            }
        }
        var values = [UInt16](repeating: 0, count: tileSamples)
        for y in 0..<rows {
            for i in 0..<tileSamples {
                let sum = pass({ k in across[(y + r + k) * tileSamples + i] }, false)
                if finish == nil { dst[y * dstStride + i] = level(sum) } else { values[i] = sum }
            }
            if let finish { finish.apply(values, dst + y * dstStride, pixels: tileSamples / n) }
        }
    }

    // MARK: The fast schedule.

    /// The C passes for one mask: how a row of 8-bit samples is passed along, and the rows
    /// down. Holds the weights in memory of its own until ``deallocate()`` (the passes are
    /// called per row and per block, too often to bridge an array each time).
    private struct Passes {
        let radius: Int
        let vector: Int32
        /// The fraction bits the rows pass gives each sample (the 16-bit arithmetic's).
        let inputShift: Int32
        let sums: FixedPointMask.Sums
        /// The weights as the C passes take them: the 16-bit arithmetic's, or the 32-bit
        /// arithmetic's rows and columns weights each followed by a 0 (`bf_wide_rows`); empty
        /// for the other arithmetic.
        let narrow: UnsafeMutableBufferPointer<UInt16>
        let rowWeights: UnsafeMutableBufferPointer<Int16>, columnWeights: UnsafeMutableBufferPointer<Int16>

        init(_ mask: FixedPointMask, lanes: Lanes) {
            radius = mask.radius
            vector = lanes.rawValue
            sums = mask.sums
            switch mask.sums {
            case .sixteenBit(let w, _):
                inputShift = Int32(FixedPointMask.fractionBits)
                (narrow, rowWeights, columnWeights) = (Self.copy(w), Self.copy([]), Self.copy([]))
            case .thirtyTwoBit(let rows, let columns):
                inputShift = 0
                (narrow, rowWeights, columnWeights) = (Self.copy([]), Self.copy(rows.weights + [0]), Self.copy(columns.weights + [0]))
            }
        }

        private static func copy<T>(_ values: [T]) -> UnsafeMutableBufferPointer<T> {
            let buffer = UnsafeMutableBufferPointer<T>.allocate(capacity: values.count)
            _ = buffer.initialize(from: values)
            return buffer
        }

        func deallocate() {
            narrow.deallocate()
            rowWeights.deallocate()
            columnWeights.deallocate()
        }

        /// The rows pass of one row of 8-bit samples, `channels` a pixel, `centre` at its first
        /// tile sample, into `dst`.
        func rows(_ centre: UnsafePointer<UInt8>, channels: Int, _ dst: UnsafeMutablePointer<UInt16>, count: Int) {
            switch sums {
            case .sixteenBit(_, let bias):
                bf_fixed_rows(centre, channels, narrow.baseAddress, Int32(radius), bias, inputShift, dst, count, vector)
            case .thirtyTwoBit(let pass, _):
                bf_wide_rows(centre, channels, rowWeights.baseAddress, Int32(radius), Int32(pass.shift), dst, count, vector)
            }
        }

        /// The columns pass of `count` samples from `offset` for the output rows `values` (as
        /// ``columns(_:_:offset:count:)``), their values (32-bit sums keeping fraction bits)
        /// into `values[m] + offset`.
        func columnValues(
            _ rows: UnsafePointer<UnsafePointer<UInt16>?>, _ values: UnsafeBufferPointer<UnsafeMutablePointer<UInt16>?>,
            offset: Int, count: Int
        ) {
            guard case .thirtyTwoBit(_, let pass) = sums else { preconditionFailure("values come from 32-bit sums") }
            bf_wide_column_values(
                rows, Int32(radius), columnWeights.baseAddress, Int32(pass.shift), values.baseAddress, Int32(values.count),
                offset, count, vector)
        }

        /// The columns pass of `count` samples from `offset` for the output rows `outputs`,
        /// from `rows` (`rows[m … m + 2R]` make output row `m`).
        func columns(
            _ rows: UnsafePointer<UnsafePointer<UInt16>?>, _ outputs: UnsafeBufferPointer<UnsafeMutablePointer<UInt8>?>,
            offset: Int, count: Int
        ) {
            switch sums {
            case .sixteenBit(_, let bias):
                bf_fixed_columns(rows, Int32(radius), narrow.baseAddress, bias, outputs.baseAddress, Int32(outputs.count), offset, count, vector)
            case .thirtyTwoBit(_, let pass):
                bf_wide_columns(
                    rows, Int32(radius), columnWeights.baseAddress, Int32(pass.shift), outputs.baseAddress,
                    Int32(outputs.count), offset, count, vector)
            }
        }
    }

    private static func strips(
        _ passes: Passes, _ p: SampleConvolution.Plan, _ src: UnsafeMutablePointer<UInt8>,
        _ dst: UnsafeMutablePointer<UInt8>, _ dstStride: Int, rows: Int, finish: SaturateAndTint?
    ) {
        let r = p.radius, n = p.channels
        let width = p.columns.count, tileSamples = (width - 2 * r) * n
        let stripCapacity = min(SampleConvolution.stripRows, rows)
        let ringRows = stripCapacity + 2 * r
        // Ring rows 64 bytes more than a multiple of 4 KiB apart (as SampleConvolution's), from
        // a 64-byte boundary: the columns pass's loads (at multiples of 16 samples) then never
        // straddle a cache line (a quarter of its time at sigma 8, a fifth at 32 where they did).
        let ringStride = (tileSamples + 2047) / 2048 * 2048 + 32
        let ringBytes = ringRows * ringStride * MemoryLayout<UInt16>.stride
        let ring = UnsafeMutableRawPointer.allocate(byteCount: ringBytes, alignment: 64)
            .bindMemory(to: UInt16.self, capacity: ringRows * ringStride)
        // clamp and mirror copy every column outside the image (none is 0).
        let copies = p.copiedColumns.map { ($0.to, $0.from!) }, computedStart = p.computedStart
        // A row with its edge columns copied in (clamp, mirror); a tile whose columns all lie
        // in the image has none and is read in place.
        let line = UnsafeMutablePointer<UInt8>.allocate(capacity: copies.isEmpty ? 0 : width * n)
        // A strip's values before `finish`, row after row.
        let values = UnsafeMutablePointer<UInt16>.allocate(capacity: finish == nil ? 0 : stripCapacity * tileSamples)
        defer { ring.deallocate(); line.deallocate(); values.deallocate() }
        var window = [UnsafePointer<UInt16>?](repeating: nil, count: ringRows)
        var outputs = [UnsafeMutablePointer<UInt8>?](repeating: nil, count: 4)
        var valueRows = [UnsafeMutablePointer<UInt16>?](repeating: nil, count: 4)
        var made = 0
        var y0 = 0
        while y0 < rows {
            let count = min(stripCapacity, rows - y0)
            while made < y0 + count + 2 * r {
                p.prefetch(aheadOf: made, in: src)
                let row: UnsafePointer<UInt8>
                if copies.isEmpty {
                    row = UnsafePointer(src + p.rowOffset[made]!)
                } else {
                    (line + computedStart).update(from: src + p.rowOffset[made]!, count: p.computed.count * n)
                    for (i, s) in copies { (line + i * n).update(from: line + s * n, count: n) }
                    row = UnsafePointer(line)
                }
                passes.rows(row + r * n, channels: n, ring + (made % ringRows) * ringStride, count: tileSamples)
                made += 1
            }
            for j in 0..<(count + 2 * r) { window[j] = UnsafePointer(ring + ((y0 + j) % ringRows) * ringStride) }
            window.withUnsafeBufferPointer { rowsAt in
                var i = 0
                while i < tileSamples {
                    let samples = min(blockSamples, tileSamples - i)
                    // Output rows four at a time (the passes share their loaded rows).
                    var j = 0
                    while j < count {
                        let m = min(4, count - j)
                        if finish != nil {
                            for k in 0..<m { valueRows[k] = values + (j + k) * tileSamples }
                            valueRows.withUnsafeBufferPointer { o in
                                passes.columnValues(rowsAt.baseAddress! + j, UnsafeBufferPointer(rebasing: o[0..<m]), offset: i, count: samples)
                            }
                        } else {
                            for k in 0..<m { outputs[k] = dst + (y0 + j + k) * dstStride }
                            outputs.withUnsafeBufferPointer { o in
                                passes.columns(rowsAt.baseAddress! + j, UnsafeBufferPointer(rebasing: o[0..<m]), offset: i, count: samples)
                            }
                        }
                        j += m
                    }
                    i += samples
                }
            }
            if let finish {
                for j in 0..<count {
                    finish.apply(UnsafePointer(values + j * tileSamples), dst + (y0 + j) * dstStride, pixels: tileSamples / n)
                }
            }
            y0 += count
        }
    }
}
