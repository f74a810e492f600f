import CKernels
import Foundation

/// Lanczos-3 resampling of 8-bit interleaved images (1 to 4 channels): the algorithm, its
/// definition and its accuracy. The thumbnails' resize (`resize:` and `sizes:` in a manifest)
/// for 8-bit images without alpha.
///
/// **The definition** (double precision, per axis; the 2-D result is the separable product).
/// Resampling `n` source pixels to `m`, the scale is `s = n / m` and the kernel is widened by
/// `f = max(s, 1)` (a reduce averages over the whole footprint; an enlargement interpolates).
/// Output pixel `o` is centred on source position `X = (o + ½)·s − ½` (pixel centres line up,
/// as libvips and Pillow do it) and weighs every source pixel `i` with `|i − X| < 3f` by
/// `L((i − X) / f)`, where `L(t) = sinc(t)·sinc(t/3)` for `|t| < 3` (`sinc(0) = 1`). A pixel
/// beyond an edge is the edge pixel (its weight added to the edge's), and the weights are
/// divided by their sum. The output level is the double sum over both axes, clamped to
/// 0 … 255 and rounded half up.
///
/// **The computation**: the weights in `Float32`, the columns pass first (each output row the
/// weighted sum of its source rows, each 8-bit sample made a `Float32`), then the rows pass (each output
/// pixel the weighted sum of its window of that row; the sums of ``rowsTogether`` rows
/// interleaved between the passes, so that it computes a pixel of each at once, a row a lane),
/// every sum a product then additions in tap order, no fused multiply-add (`CKernels`'
/// `bf_resample_*`): the same bits in every lane and every schedule. **Accuracy**: each weight is within 2⁻²⁴ of its double relative to itself,
/// and each addition errs by at most 2⁻²⁴ of the running sum. With `T` taps a pass and `A` the
/// largest sum of a window's weights' magnitudes (``Axis/magnitude``: lanczos-3's negative
/// lobes make it 1.1 to 1.4, up to 1.6 when edges fold into a few pixels), the columns pass
/// errs by at most `255·A·(T + 1)·2⁻²⁴` levels and the rows pass passes that on times `A` and
/// adds its own `255·A²·(T + 1)·2⁻²⁴` (``errorBound``: at 64 taps a pass, a reduce by 10,
/// under 0.005 levels; it grows with the taps, so a resampler exists only where it is below ½:
/// a reduce by less than about 1,800). The sum before rounding is that close to the
/// definition's, so the level is the definition's rounded level except within that of a half,
/// and always within 1 level of the double sum.
public struct LanczosResampler: Sendable {
    /// The weights along one axis: output `o` reads `taps` source pixels from `first[o]`, with
    /// `weights[o * taps ..< (o + 1) * taps]` (zeros pad the shorter windows).
    struct Axis: Sendable, Equatable {
        let first: [Int32]
        let weights: [Float]
        let taps: Int

        /// The largest sum of the magnitudes of one window's weights.
        var magnitude: Double {
            stride(from: 0, to: weights.count, by: taps).map { start in
                weights[start..<start + taps].reduce(0) { $0 + abs(Double($1)) }
            }.max() ?? 1
        }

        /// The weights of resampling `source` pixels to `output` (both at least 1), per the
        /// definition, in double precision (``doubleWeights(source:output:)``) then `Float32`.
        init(source: Int, output: Int) {
            let windows = Self.doubleWeights(source: source, output: output)
            let taps = windows.map { $0.weights.count }.max() ?? 1
            var first: [Int32] = []
            var weights: [Float] = []
            first.reserveCapacity(output)
            weights.reserveCapacity(output * taps)
            for window in windows {
                // Moved left where the window would run past the last pixel; padded with zeros.
                let start = min(window.first, source - taps)
                first.append(Int32(start))
                let lead = window.first - start
                weights += repeatElement(0, count: lead)
                weights += window.weights.map { Float($0) }
                weights += repeatElement(0, count: taps - lead - window.weights.count)
            }
            self.first = first
            self.weights = weights
            self.taps = taps
        }

        /// The definition's weights of each output pixel: the first source pixel it reads and
        /// the normalised weights of that pixel and those after it (edges folded in).
        static func doubleWeights(source: Int, output: Int) -> [(first: Int, weights: [Double])] {
            precondition(source >= 1 && output >= 1, "resampling needs pixels on both sides")
            let scale = Double(source) / Double(output)
            let widening = max(scale, 1)
            let reach = 3 * widening
            return (0..<output).map { o in
                let centre = (Double(o) + 0.5) * scale - 0.5
                let low = Int((centre - reach).rounded(.down)) + 1
                let high = Int((centre + reach).rounded(.up)) - 1
                let first = min(max(low, 0), source - 1)
                let last = min(max(high, 0), source - 1)
                var weights = [Double](repeating: 0, count: last - first + 1)
                for i in low...max(low, high) {
                    let t = (Double(i) - centre) / widening
                    guard abs(t) < 3 else { continue }
                    weights[min(max(i, 0), source - 1) - first] += lanczos3(t)
                }
                let sum = weights.reduce(0, +)
                return (first, weights.map { $0 / sum })
            }
        }

        /// `sinc(t)·sinc(t/3)` for `|t| < 3`: `3·sin(x)·sin(x/3) / x²` with `x = πt`, and
        /// `sin(x) = sin(x/3)·(3 − 4·sin²(x/3))` (one sine, not two).
        static func lanczos3(_ t: Double) -> Double {
            if t == 0 { return 1 }
            let x = Double.pi * t
            let third = sin(x / 3), square = third * third
            return 3 * square * (3 - 4 * square) / (x * x)
        }
    }

    public let sourceWidth: Int
    public let sourceHeight: Int
    public let width: Int
    public let height: Int
    public let channels: Int
    /// The rows pass's weights (along x) and the columns pass's (along y).
    let alongRows: Axis
    let alongColumns: Axis

    /// How far, in levels, a sum before rounding may be from the definition's (the accuracy
    /// proof above).
    var errorBound: Double {
        let unit = 255 / Double(1 << 24)
        let columns = unit * alongColumns.magnitude * Double(alongColumns.taps + 1)
        let rows = unit * alongRows.magnitude * alongRows.magnitude * Double(alongRows.taps + 1)
        return alongRows.magnitude * columns + rows
    }

    /// A resampler of `sourceWidth` × `sourceHeight` pixels of `channels` samples to `width` ×
    /// `height`; nil where the accuracy proof's bound is not below ½ level (a reduce by about
    /// 1,800 or more).
    public init?(sourceWidth: Int, sourceHeight: Int, width: Int, height: Int, channels: Int) {
        precondition((1...4).contains(channels), "1 to 4 channels")
        precondition(sourceWidth >= 1 && sourceHeight >= 1 && width >= 1 && height >= 1, "an empty image")
        self.sourceWidth = sourceWidth
        self.sourceHeight = sourceHeight
        self.width = width
        self.height = height
        self.channels = channels
        alongRows = Axis(source: sourceWidth, output: width)
        alongColumns = Axis(source: sourceHeight, output: height)
        guard errorBound < 0.5 else { return nil }
    }

    /// Output rows computed together: the columns pass's share most of their source rows, and
    /// the rows pass computes a pixel of each at once, a row a lane: the C passes' groups,
    /// defined once in ckernels.h.
    static let rowsTogether = Int(BF_LANCZOS_ROWS_TOGETHER)

    /// The output rows in groups of ``rowsTogether`` (the last may be shorter), top to bottom.
    private var groups: [Range<Int>] {
        Swift.stride(from: 0, to: height, by: Self.rowsTogether).map { $0..<min($0 + Self.rowsTogether, height) }
    }

    /// The source rows ``resample(readRow:)`` holds at once: the most the windows of a group of
    /// ``rowsTogether`` output rows reach (about `13 × scale` for a reduce by `scale`: a
    /// window's `6 × scale` rows and `7 × scale` between the group's first and last).
    public var heldRows: Int {
        let firsts = alongColumns.first, taps = alongColumns.taps
        return groups.map { Int(firsts[$0.last!]) + taps - Int(firsts[$0.first!]) }.max()!
    }

    /// The image whose rows `readRow(into:)` writes in order, top to bottom (each `sourceWidth *
    /// channels` bytes, into the memory given, where it is held), resampled: `height` rows of
    /// `width * channels` bytes, without padding. Only the source rows the windows of
    /// ``rowsTogether`` output rows need are held (their 8-bit samples).
    public func resample<Failure: Error>(
        readRow: (UnsafeMutablePointer<UInt8>) throws(Failure) -> Void
    ) throws(Failure) -> [UInt8] {
        try resample(lanes: .widest, readRow: readRow)
    }

    /// `resample(readRow:)` with its C passes kept to `lanes` (the scalar code, AVX2, or also
    /// AVX-512 where the processor has it): the same bits in each, for the tests that compare
    /// them.
    func resample<Failure: Error>(
        lanes: FixedPointConvolution.Lanes, readRow: (UnsafeMutablePointer<UInt8>) throws(Failure) -> Void
    ) throws(Failure) -> [UInt8] {
        let sourceSamples = sourceWidth * channels, rowBytes = width * channels
        let taps = alongColumns.taps
        let firsts = alongColumns.first.map(Int.init)
        let groups = groups
        // The held rows, a ring of their 8-bit samples: source row r in slot r % held (a group's
        // rows are consecutive).
        let held = heldRows
        let ring = UnsafeMutablePointer<UInt8>.allocate(capacity: held * sourceSamples)
        // A group's sums, interleaved (sample i of its row m at i * 8 + m), and the rows pass's
        // levels before they go to their rows.
        let summed = UnsafeMutablePointer<Float>.allocate(capacity: sourceSamples * Self.rowsTogether)
        let stage = UnsafeMutablePointer<UInt8>.allocate(capacity: rowBytes * Self.rowsTogether)
        defer {
            ring.deallocate()
            summed.deallocate()
            stage.deallocate()
        }
        var rows = [UnsafePointer<UInt8>?](repeating: nil, count: held)
        var offsets = [Int32](repeating: 0, count: Self.rowsTogether)
        var outputRows = [UnsafeMutablePointer<UInt8>?](repeating: nil, count: Self.rowsTogether)
        var output = [UInt8](repeating: 0, count: height * rowBytes)
        var decoded = 0
        try output.withUnsafeMutableBufferPointer { output throws(Failure) in
            for group in groups {
                let top = firsts[group.first!], bottom = firsts[group.last!] + taps
                while decoded < bottom {
                    try readRow(ring + (decoded % held) * sourceSamples)
                    decoded += 1
                }
                for r in top..<bottom { rows[r - top] = UnsafePointer(ring + (r % held) * sourceSamples) }
                for (m, y) in group.enumerated() { offsets[m] = Int32(firsts[y] - top) }
                alongColumns.weights.withUnsafeBufferPointer { weights in
                    bf_resample_columns(
                        rows, offsets, weights.baseAddress! + group.first! * taps, Int32(taps), summed,
                        Int32(group.count), sourceSamples, lanes.rawValue)
                }
                for (m, y) in group.enumerated() { outputRows[m] = output.baseAddress! + y * rowBytes }
                bf_resample_rows(
                    summed, Int32(channels), alongRows.first, alongRows.weights, Int32(alongRows.taps), outputRows,
                    Int32(group.count), width, stage, lanes.rawValue)
            }
        }
        return output
    }

    /// `resample` of an image in memory: `sourceHeight` rows of `sourceWidth * channels` bytes,
    /// row `y` at `y * stride`.
    public func resample(_ source: UnsafeRawBufferPointer, stride: Int) -> [UInt8] {
        resample(source, stride: stride, lanes: .widest)
    }

    /// `resample(_:stride:)` with its C passes kept to `lanes` (``resample(lanes:readRow:)``).
    func resample(_ source: UnsafeRawBufferPointer, stride: Int, lanes: FixedPointConvolution.Lanes) -> [UInt8] {
        precondition(stride >= sourceWidth * channels && source.count >= (sourceHeight - 1) * stride + sourceWidth * channels, "source too small")
        var next = 0
        let rowBytes = sourceWidth * channels
        return resample(lanes: lanes) { (row: UnsafeMutablePointer<UInt8>) in
            defer { next += 1 }
            row.update(from: (source.baseAddress! + next * stride).assumingMemoryBound(to: UInt8.self), count: rowBytes)
        }
    }
}
