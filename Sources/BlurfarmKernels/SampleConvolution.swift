import BlurfarmCore
import CKernels

/// The gaussian's schedule on pixels at a file's depth (8- or 16-bit samples in, the same out):
/// convolution with a symmetric 1-D mask along rows, then along columns, in `Float32`, with the
/// conversions folded into the passes. Pointer code lives here and nowhere else in it.
///
/// The arithmetic, the same for every schedule and every tile position:
/// - **load**: a sample `c` becomes `Float(c)`; with 4 working channels the colour is
///   premultiplied, `Float(c) · (Float(a) · (1 / max))` (`max` = 255 or 65535), alpha stays
///   `Float(a)`; an opaque source under `transparent` or `grow` gets alpha `max` and its
///   colour as it is. Values beyond the image come from the edge rule (transparent: 0).
/// - **each pass** (rows, then columns): `acc = w0·c`, then for `k = 1 … R` in increasing
///   order `acc = fma(w_k, a_{-k} + a_{+k}, acc)`: one fused multiply-add (a single rounding)
///   per tap, the same in every lane and in scalar code (``Float/addingProduct(_:_:)``).
/// - **store**: with 4 channels the colour is unpremultiplied, `v · (max / a)` (0 where `a` is
///   0); every value (never negative: no weight or value is) is clamped to `max` and rounded
///   to nearest, ties to even, by adding 2²³ (the sum's last mantissa bit is then the units:
///   ``roundedLevel(_:)``).
///
/// Values are never summed across a tile edge nor in an order that depends on the tile, so
/// any tiling gives the same bits.
enum SampleConvolution {
    /// Output rows per strip (``RenderSchedule/sampleStripRows``).
    static var stripRows: Int { RenderSchedule.sampleStripRows }
    /// Floats per column block of the columns pass (``RenderSchedule/sampleBlockFloats``).
    static var blockFloats: Int { RenderSchedule.sampleBlockFloats }
    /// Bytes of rows-pass rows per slab of columns (``RenderSchedule/sampleRingBytes``).
    static var ringBytes: Int { RenderSchedule.sampleRingBytes }

    /// The width of the slabs of columns the fast schedule cuts a tile into: the widest
    /// multiple of ``slabMultiple`` that keeps the ring of `stripRows + 2R` rows within
    /// ``ringBytes``, but at least `2R` (beyond that the rows pass would compute more halo than
    /// slab), rounded up to the multiple.
    static func slabPixels(radius r: Int, channels: Int, rows: Int, sampleBytes: Int) -> Int {
        let ringRows = min(stripRows, rows) + 2 * r
        let fitting = ringBytes / (ringRows * channels * sampleBytes) / slabMultiple * slabMultiple
        return max(fitting, (2 * r + slabMultiple - 1) / slabMultiple * slabMultiple, 64)
    }

    /// Slabs are a multiple of 32 pixels wide, so that a slab's samples fill whole vectors of the
    /// C passes (32 lanes) and none is left to their scalar code, which at sigma 32 (193 taps)
    /// took a third of the kernels' time when slabs were 195 pixels (585 samples: 9 scalar).
    static let slabMultiple = 32

    /// Cuts `tile` (planned as `whole`) into the slabs of columns whose ring of rows, at
    /// `sampleBytes` a ring sample, stays in L2 (``slabPixels(radius:channels:rows:sampleBytes:)``),
    /// and calls `body` with each slab's plan and its first column's offset from `tile.x`.
    static func forEachSlab<S: FileSample>(
        of tile: Rect, planned whole: Plan, source: SampleBuffer<S>, image: Rect, edge: EdgeRule, sampleBytes: Int,
        _ body: (Plan, Int) -> Void
    ) {
        let slab = slabPixels(radius: whole.radius, channels: whole.channels, rows: tile.height, sampleBytes: sampleBytes)
        var x = tile.x
        while x < tile.maxX {
            let part = Rect(x: x, y: tile.y, width: min(slab, tile.maxX - x), height: tile.height)
            body(
                part == tile ? whole
                    : plan(tile: part, source: source, image: image, edge: edge, radius: whole.radius, channels: whole.channels),
                x - tile.x)
            x += part.width
        }
    }

    /// Convolves the pixels of `tile` from `source` into `output` (see
    /// ``GaussianBlur/render(tile:source:image:edge:into:)-(_,SampleBuffer<UInt8>,_,_,_)``, which
    /// checks the rectangles and channels).
    static func apply(
        weights: [Float], tile: Rect, source: SampleBuffer<UInt8>, image: Rect, edge: EdgeRule,
        output: SampleBuffer<UInt8>, schedule: KernelSchedule
    ) {
        run(weights: weights, tile: tile, source: source, image: image, edge: edge, output: output, schedule: schedule)
    }

    /// Convolves 16-bit samples, as the 8-bit ``apply(weights:tile:source:image:edge:output:schedule:)-(_,_,SampleBuffer<UInt8>,_,_,_,_)`` does.
    static func apply(
        weights: [Float], tile: Rect, source: SampleBuffer<UInt16>, image: Rect, edge: EdgeRule,
        output: SampleBuffer<UInt16>, schedule: KernelSchedule
    ) {
        run(weights: weights, tile: tile, source: source, image: image, edge: edge, output: output, schedule: schedule)
    }

    /// The layout of one tile's work: which source rows and columns feed it.
    struct Plan {
        /// How far the filter reads beyond the tile on each axis.
        let reach: Reach
        /// The gaussian's radius `R` (its reach on both axes).
        var radius: Int { reach.x }
        /// Working channels (the output's) and the source's.
        let channels: Int, sourceChannels: Int
        /// The columns the rows pass reads: `tile.x − reach.x ..< tile.maxX + reach.x`.
        let columns: Range<Int>
        /// The in-image columns among them, loaded from the source; the others copy them
        /// (`clamp`, `mirror`) or are 0.
        let computed: Range<Int>
        /// For each column of `columns`, the column of `computed` it copies, or `nil` for 0.
        let columnSource: [Int?]
        /// For each row `tile.y − reach.y ..< tile.maxY + reach.y`, the offset in samples from the source's
        /// origin to the row's first computed column, or `nil` for a transparent row.
        let rowOffset: [Int?]

        /// The columns of `columns` outside `computed`, each as (its index in `columns`, the
        /// index in `columns` of the computed column it copies, or `nil` for 0).
        var copiedColumns: [(to: Int, from: Int?)] {
            columnSource.enumerated().compactMap { i, s in
                computed.contains(columns.lowerBound + i) ? nil : (i, s.map { $0 - columns.lowerBound })
            }
        }

        /// Where in an extended row (`columns`, `channels` samples a pixel) the first
        /// computed column's samples go.
        var computedStart: Int { (computed.lowerBound - columns.lowerBound) * channels }

        /// How many input rows ahead of the one the rows pass reads the memory is asked for
        /// (``prefetch(aheadOf:in:)``): the rows of a tile lie an image row apart, and the
        /// processor's prefetcher does not follow that stride, so each row's first loads waited
        /// on the memory (the σ2 batch: the 8-bit widening 5.7% of the samples before, 1.0%
        /// after; 0.961× wall). Four rows ahead did no better.
        static let prefetchRows = 2

        /// Asks the memory for the computed samples of input row `row + prefetchRows` of `src`,
        /// when the tile has that row.
        func prefetch<S>(aheadOf row: Int, in src: UnsafeMutablePointer<S>) {
            let ahead = row + Self.prefetchRows
            guard ahead < rowOffset.count, let offset = rowOffset[ahead] else { return }
            bf_prefetch(src + offset, computed.count * sourceChannels * MemoryLayout<S>.stride)
        }
    }

    static func plan<S: FileSample>(tile: Rect, source: SampleBuffer<S>, image: Rect, edge: EdgeRule, radius r: Int, channels: Int)
        -> Plan
    {
        plan(tile: tile, source: source, image: image, edge: edge, reach: Reach(x: r, y: r), channels: channels)
    }

    /// The plan of a filter reading `reach` beyond the tile (the motion blur's is not square).
    static func plan<S: FileSample>(tile: Rect, source: SampleBuffer<S>, image: Rect, edge: EdgeRule, reach: Reach, channels: Int)
        -> Plan
    {
        let rule = edge == .grow ? EdgeRule.transparent : edge
        let columns = (tile.x - reach.x)..<(tile.maxX + reach.x)
        let computed = columns.clamped(to: image.x..<image.maxX)
        let columnSource = columns.map { x -> Int? in
            rule.sourceCoordinate(x - image.x, length: image.width).map { $0 + image.x }
        }
        let rowOffset = ((tile.y - reach.y)..<(tile.maxY + reach.y)).map { y -> Int? in
            guard !computed.isEmpty, let sy = rule.sourceCoordinate(y - image.y, length: image.height) else { return nil }
            return (sy + image.y - source.rect.y) * source.rowStride
                + (computed.lowerBound - source.rect.x) * source.channels
        }
        return Plan(
            reach: reach, channels: channels, sourceChannels: source.channels, columns: columns, computed: computed,
            columnSource: columnSource, rowOffset: rowOffset)
    }

    @inline(__always)
    private static func run<S: FileSample>(
        weights: [Float], tile: Rect, source: SampleBuffer<S>, image: Rect, edge: EdgeRule,
        output: SampleBuffer<S>, schedule: KernelSchedule
    ) {
        if tile.isEmpty { return }
        let p = plan(tile: tile, source: source, image: image, edge: edge, radius: weights.count - 1, channels: output.channels)
        weights.withUnsafeBufferPointer { w in
            source.withUnsafeSamples { src in
                output.withUnsafeSamples { dst in
                    let out = dst + (tile.y - output.rect.y) * output.rowStride + (tile.x - output.rect.x) * output.channels
                    if schedule == .reference {
                        reference(w, p, src, out, output.rowStride, rows: tile.height)
                        return
                    }
                    forEachSlab(
                        of: tile, planned: p, source: source, image: image, edge: edge,
                        sampleBytes: MemoryLayout<Float>.stride
                    ) { slab, dx in
                        strips(w, slab, src, out + dx * output.channels, output.rowStride, rows: tile.height)
                    }
                }
            }
        }
    }

    // MARK: The reference: whole passes over the tile, one value at a time.

    /// Loads every input value of the tile, then the rows pass, then the columns pass, then
    /// stores: obvious code computing the same bits as ``strips(_:_:_:_:_:rows:)``.
    private static func reference<S: FileSample>(
        _ w: UnsafeBufferPointer<Float>, _ p: Plan, _ src: UnsafeMutablePointer<S>, _ dst: UnsafeMutablePointer<S>,
        _ dstStride: Int, rows: Int
    ) {
        let r = p.radius, n = p.channels, width = p.columns.count
        let inputRows = rows + 2 * r, tileWidth = width - 2 * r
        var input = [Float](repeating: 0, count: inputRows * width * n)
        for y in 0..<inputRows {
            guard let offset = p.rowOffset[y] else { continue }
            for x in 0..<width {
                guard let sx = p.columnSource[x] else { continue }
                let s = src + offset + (sx - p.computed.lowerBound) * p.sourceChannels
                let pixel = loadPixel(s, sourceChannels: p.sourceChannels, channels: n)
                for c in 0..<n { input[(y * width + x) * n + c] = pixel[c] }
            }
        }
        var across = [Float](repeating: 0, count: inputRows * tileWidth * n)
        for y in 0..<inputRows {
            for i in 0..<(tileWidth * n) {
                let at = { (dx: Int) in input[y * width * n + r * n + i + dx * n] }
                var acc = w[0] * at(0)
                for k in 1..<w.count { acc = acc.addingProduct(w[k], at(-k) + at(k)) }
                across[y * tileWidth * n + i] = acc
            }
        }
        for y in 0..<rows {
            var pixel = SIMD4<Float>.zero
            for x in 0..<tileWidth {
                for c in 0..<n {
                    let at = { (dy: Int) in across[((y + r + dy) * tileWidth + x) * n + c] }
                    var acc = w[0] * at(0)
                    for k in 1..<w.count { acc = acc.addingProduct(w[k], at(-k) + at(k)) }
                    pixel[c] = acc
                }
                storePixel(pixel, dst + y * dstStride + x * n, channels: n)
            }
        }
    }

    /// One source pixel as working values (see the type's comment).
    @inline(__always)
    private static func loadPixel<S: FileSample>(_ s: UnsafeMutablePointer<S>, sourceChannels: Int, channels: Int) -> SIMD4<Float> {
        let maxLevel = Float(S.max)
        var v = SIMD4<Float>(Float(s[0]), Float(s[1]), Float(s[2]), maxLevel)
        if sourceChannels == 4 {
            v[3] = Float(s[3])
            let f = v[3] * (1 / maxLevel)
            v[0] *= f; v[1] *= f; v[2] *= f
        }
        return v
    }

    /// One pixel of working values unpremultiplied, rounded and stored.
    @inline(__always)
    private static func storePixel<S: FileSample>(_ v: SIMD4<Float>, _ d: UnsafeMutablePointer<S>, channels: Int) {
        let maxLevel = Float(S.max)
        var v = v
        if channels == 4 {
            let f = v[3] > 0 ? maxLevel / v[3] : 0
            v[0] *= f; v[1] *= f; v[2] *= f
        }
        for c in 0..<channels { d[c] = S(truncatingIfNeeded: roundedLevel(min(max(v[c], 0), maxLevel))) }
    }

    /// `v` (in `0 … 2²²`) rounded to the nearest integer, ties to even: `v + 2²³` rounds it so,
    /// and its bits less those of 2²³ are the integer. The vector store computes the same
    /// lane by lane (Swift's own `Float` to integer vector conversion is not vectorised).
    @inline(__always)
    private static func roundedLevel(_ v: Float) -> UInt32 {
        (v + 8_388_608).bitPattern &- 0x4B00_0000
    }

    @inline(__always)
    private static func roundedLevels(_ v: SIMD8<Float>) -> SIMD8<UInt32> {
        unsafeBitCast(v + 8_388_608, to: SIMD8<UInt32>.self) &- 0x4B00_0000
    }

    // MARK: The fast schedule: each input row once through the rows pass into a ring, the
    // columns pass strip by strip and block by block from the ring, 8 lanes.

    private static func strips<S: FileSample>(
        _ w: UnsafeBufferPointer<Float>, _ p: Plan, _ src: UnsafeMutablePointer<S>, _ dst: UnsafeMutablePointer<S>,
        _ dstStride: Int, rows: Int
    ) {
        let r = p.radius, n = p.channels
        let width = p.columns.count, tileFloats = (width - 2 * r) * n
        let stripCapacity = min(stripRows, rows)
        let ringRows = stripCapacity + 2 * r
        // Ring rows 64 bytes more than a multiple of 4 KiB apart: a block's rows then fall in
        // different L1 sets instead of a few (4K aliasing would evict them).
        let ringStride = (tileFloats + 1023) / 1024 * 1024 + 16
        let ring = PixelStorage.uninitialized(byteCount: ringRows * ringStride * 4)
        let extended = PixelStorage.uninitialized(byteCount: width * n * 4)
        let fourRows = PixelStorage.uninitialized(byteCount: 4 * blockFloats * 4)
        let copies = p.copiedColumns, computedStart = p.computedStart
        var window = [UnsafeMutablePointer<Float>]()
        window.reserveCapacity(ringRows)
        ring.withUnsafeFloats { ring in
            extended.withUnsafeFloats { line in fourRows.withUnsafeFloats { results in
                var made = 0  // input rows through the rows pass so far
                var y0 = 0
                while y0 < rows {
                    let count = min(stripCapacity, rows - y0)
                    // The rows pass for the input rows this strip needs and has not got.
                    while made < y0 + count + 2 * r {
                        let to = ring + (made % ringRows) * ringStride
                        p.prefetch(aheadOf: made, in: src)
                        if let offset = p.rowOffset[made] {
                            load(src + offset, line + computedStart, pixels: p.computed.count, from: p.sourceChannels, to: n)
                            for (i, s) in copies {
                                if let s {
                                    (line + i * n).update(from: line + s * n, count: n)
                                } else {
                                    (line + i * n).update(repeating: 0, count: n)
                                }
                            }
                            SeparableConvolution.symmetricSum(w, line + r * n, n, to, tileFloats, fused: true)
                        } else {
                            to.update(repeating: 0, count: tileFloats)
                        }
                        made += 1
                    }
                    // The columns pass and the store, block by block.
                    window.removeAll(keepingCapacity: true)
                    for j in y0..<(y0 + count + 2 * r) { window.append(ring + (j % ringRows) * ringStride) }
                    window.withUnsafeBufferPointer { rowsAt in
                        var i = 0
                        while i < tileFloats {
                            let floats = min(blockFloats, tileFloats - i)
                            var j = 0
                            while j + 4 <= count {
                                columnSum4(w, rowsAt, centre: j + r, offset: i, results, floats)
                                for m in 0..<4 {
                                    store(results + m * blockFloats, dst + (y0 + j + m) * dstStride + i, floats: floats, channels: n)
                                }
                                j += 4
                            }
                            while j < count {
                                columnSum(w, rowsAt, centre: j + r, offset: i, results, floats)
                                store(results, dst + (y0 + j) * dstStride + i, floats: floats, channels: n)
                                j += 1
                            }
                            i += floats
                        }
                    }
                    y0 += count
                }
            } }
        }
    }

    /// The columns pass for four rows at once, `rowsAt[centre] … rowsAt[centre + 3]`, `count`
    /// floats from `offset`, into `dst` (four rows of ``blockFloats``): each input vector is
    /// loaded once for all four (the rows a tap pairs slide by one row from output to output),
    /// and each output gets exactly the sums ``columnSum(_:_:centre:offset:_:_:)`` computes.
    @inline(__always)
    private static func columnSum4(
        _ w: UnsafeBufferPointer<Float>, _ rowsAt: UnsafeBufferPointer<UnsafeMutablePointer<Float>>, centre: Int,
        offset: Int, _ dst: UnsafeMutablePointer<Float>, _ count: Int
    ) {
        let taps = w.count
        var i = 0
        while i + 8 <= count {
            let o = offset + i
            // l_j holds row centre + j − k, r_j row centre + j + k, for the tap k being added.
            var r0 = load8(rowsAt[centre] + o), r1 = load8(rowsAt[centre + 1] + o)
            var r2 = load8(rowsAt[centre + 2] + o), r3 = load8(rowsAt[centre + 3] + o)
            let w0 = w[0]
            var a0 = w0 * r0, a1 = w0 * r1, a2 = w0 * r2, a3 = w0 * r3
            var l0 = r0, l1 = r1, l2 = r2, l3 = r3
            for k in 1..<taps {
                l3 = l2; l2 = l1; l1 = l0
                l0 = load8(rowsAt[centre - k] + o)
                r0 = r1; r1 = r2; r2 = r3
                r3 = load8(rowsAt[centre + 3 + k] + o)
                let wk = w[k]
                a0 = a0.addingProduct(wk, l0 + r0); a1 = a1.addingProduct(wk, l1 + r1)
                a2 = a2.addingProduct(wk, l2 + r2); a3 = a3.addingProduct(wk, l3 + r3)
            }
            store8(a0, dst + i); store8(a1, dst + blockFloats + i)
            store8(a2, dst + 2 * blockFloats + i); store8(a3, dst + 3 * blockFloats + i)
            i += 8
        }
        if i < count {
            for m in 0..<4 {
                columnSum(w, rowsAt, centre: centre + m, offset: offset + i, dst + m * blockFloats + i, count - i)
            }
        }
    }

    /// The columns pass for `count` floats at `offset` of the row `rowsAt[centre]`, into
    /// `dst` (the rows a strip has beyond a multiple of four): `w0·c`, then each tap
    /// `acc.addingProduct(w_k, rowsAt[centre − k] + rowsAt[centre + k])`, eight lanes at a
    /// time, then one by one.
    @inline(__always)
    private static func columnSum(
        _ w: UnsafeBufferPointer<Float>, _ rowsAt: UnsafeBufferPointer<UnsafeMutablePointer<Float>>, centre: Int,
        offset: Int, _ dst: UnsafeMutablePointer<Float>, _ count: Int
    ) {
        let taps = w.count
        var i = 0
        while i + 8 <= count {
            var a = w[0] * load8(rowsAt[centre] + offset + i)
            for k in 1..<taps {
                a = a.addingProduct(w[k], load8(rowsAt[centre - k] + offset + i) + load8(rowsAt[centre + k] + offset + i))
            }
            store8(a, dst + i)
            i += 8
        }
        while i < count {
            var a = w[0] * rowsAt[centre][offset + i]
            for k in 1..<taps { a = a.addingProduct(w[k], rowsAt[centre - k][offset + i] + rowsAt[centre + k][offset + i]) }
            dst[i] = a
            i += 1
        }
    }

    /// `pixels` source pixels as working values into `to`.
    @inline(__always)
    private static func load<S: FileSample>(_ s: UnsafeMutablePointer<S>, _ to: UnsafeMutablePointer<Float>, pixels: Int, from: Int, to n: Int) {
        if from == 3 && n == 3 {
            let count = pixels * 3
            var i = 0
            while i + 8 <= count {
                store8(SIMD8<Float>(UnsafeRawPointer(s + i).loadUnaligned(as: SIMD8<S>.self)), to + i)
                i += 8
            }
            while i < count {
                to[i] = Float(s[i])
                i += 1
            }
        } else if from == 4 {
            let scale = 1 / Float(S.max)
            var i = 0
            while i + 2 <= pixels {
                let v = SIMD8<Float>(UnsafeRawPointer(s + 4 * i).loadUnaligned(as: SIMD8<S>.self))
                var f = SIMD8<Float>(v[3], v[3], v[3], v[3], v[7], v[7], v[7], v[7]) * scale
                f[3] = 1
                f[7] = 1
                // Alpha lanes: Float(a) · 1 is Float(a); colour lanes Float(c) · (Float(a) · (1 / max)).
                store8(v * f, to + 4 * i)
                i += 2
            }
            while i < pixels {
                let v = loadPixel(s + 4 * i, sourceChannels: 4, channels: 4)
                for c in 0..<4 { to[4 * i + c] = v[c] }
                i += 1
            }
        } else {
            for i in 0..<pixels {
                let v = loadPixel(s + from * i, sourceChannels: from, channels: n)
                for c in 0..<n { to[n * i + c] = v[c] }
            }
        }
    }

    /// `floats` working values (whole pixels of `channels`) rounded and stored as samples.
    @inline(__always)
    private static func store<S: FileSample>(_ v: UnsafeMutablePointer<Float>, _ d: UnsafeMutablePointer<S>, floats: Int, channels n: Int) {
        let maxLevel = Float(S.max)
        var i = 0
        while i + 8 <= floats {
            var x = load8(v + i)
            if n == 4 {
                let a = SIMD8<Float>(x[3], x[3], x[3], x[3], x[7], x[7], x[7], x[7])
                var f = (maxLevel / a).replacing(with: 0, where: a .<= 0)
                f[3] = 1
                f[7] = 1
                x *= f
            }
            // Never below 0 (weights and values are not negative): only the top needs clamping.
            let rounded = roundedLevels(x.replacing(with: maxLevel, where: x .> maxLevel))
            UnsafeMutableRawPointer(d + i).storeBytes(of: SIMD8<S>(truncatingIfNeeded: rounded), as: SIMD8<S>.self)
            i += 8
        }
        // What is left: whole pixels with 4 channels (i is a multiple of 8), samples with 3.
        while i < floats {
            if n == 4 {
                storePixel(SIMD4(v[i], v[i + 1], v[i + 2], v[i + 3]), d + i, channels: 4)
            } else {
                d[i] = S(truncatingIfNeeded: roundedLevel(min(max(v[i], 0), maxLevel)))
            }
            i += n == 4 ? 4 : 1
        }
    }
}
