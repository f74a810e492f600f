import BlurfarmCore

/// The gaussian's mask in fixed point, for opaque 8-bit pixels (the algorithm;
/// ``FixedPointConvolution`` is the schedule), and the proof that it is accurate enough.
/// Integer arithmetic, exact: the same bits in every lane, every tile and every schedule.
/// Two arithmetics (``Sums``), the first where its bound holds (it is the faster), else the
/// second:
///
/// **16-bit sums** (``Sums/sixteenBit(weights:bias:)``). A sample `s` enters as `q = s · 2⁷`
/// (values with 7 fraction bits). Each pass computes
/// `bias + mulhi(c, W₀) + Σₖ mulhi(a₋ₖ + a₊ₖ, Wₖ)` in 16-bit integers, where
/// `mulhi(a, b) = (a · b) >> 16`, `Wₖ = round(wₖ · 2¹⁶)` for `k ≥ 1`, `W₀ = 2¹⁶ − 2 Σ Wₖ`
/// (the weights sum to exactly 2¹⁶), and `bias` = ⌊(R + 1) / 2⌋ centres the truncation of the
/// `R + 1` products. The output level is `min((sum + 64) >> 7, 255)`. Each pass errs by at most
/// `255 · Σ|Wⱼ − wⱼ·2¹⁶| / 2¹⁷` levels from the rounded weights (over the full mask `j =
/// −R … R`; the weights' errors sum to zero and every value lies in 0 … 255) plus
/// `max(bias, R + 1 − bias) / 128` from the truncations.
///
/// **32-bit sums** (``Sums/thirtyTwoBit(rows:columns:)``). Each pass computes
/// `W₀·c + Σₖ Wₖ·(a₋ₖ + a₊ₖ)` exactly in 32-bit integers (16-bit values times 16-bit weights,
/// no truncation), with `Wₖ = round(wₖ · 2ˢ)`, `W₀ = 2ˢ − 2 Σ Wₖ`, `s` as large as keeps every
/// weight below 2¹⁵ and the sum, rounding half included, below 2³¹ (``WidePass``: `s` = 23 for
/// the rows and 17 for the columns, less where the centre weight needs it). The rows pass reads the samples as
/// they are and keeps `(sum + 2ˢ⁻⁷) >> (s − 6)` (6 fraction bits, at most 16320, so a pair sum
/// stays below 2¹⁵); the columns pass reads those and stores `min((sum + 2ˢ⁺⁵) >> (s + 6), 255)`.
/// Each pass errs by `255 · Σ|Wⱼ − wⱼ·2ˢ| / 2ˢ⁺¹` levels from its weights, and the rows pass by
/// 1/128 more from keeping 6 fraction bits.
///
/// In both, the first pass's error passes through the second unchanged (its weights are not
/// negative and sum to 1). So the sum, before the final rounding, is within ``errorBound``
/// levels of the double-precision definition `d` (docs/filters.md), and the level within
/// `0.5 + errorBound`. The mask exists only where that is below 1 level (``init(_:)``): every
/// sigma up to 64 and beyond (0.11 levels at sigma 64).
public struct FixedPointMask: Sendable, Equatable {
    /// Fraction bits of the values between and within the passes of the 16-bit arithmetic.
    public static let fractionBits = 7
    /// Fraction bits of the values between the passes of the 32-bit arithmetic: at most
    /// 255 · 2⁶ = 16320, so the sum of two stays below 2¹⁵ (a signed 16-bit operand).
    public static let wideFractionBits = 6

    /// How a pass adds its products up.
    public enum Sums: Sendable, Equatable {
        /// 16-bit sums of multiply-high products: `W₀ … W_R` with `W₀ + 2 Σ Wₖ = 2¹⁶`, and the
        /// `bias` added to each pass's sum, ⌊(R + 1) / 2⌋.
        case sixteenBit(weights: [UInt16], bias: UInt16)
        /// 32-bit sums of exact products, with the weights of each pass.
        case thirtyTwoBit(rows: WidePass, columns: WidePass)
    }

    /// One pass of the 32-bit arithmetic: `W₀ … W_R`, with `W₀ + 2 Σ Wₖ = 2ˢ`, over values with
    /// `inputFractionBits`, keeping `(sum + 2^(shift − 1)) >> shift`.
    public struct WidePass: Sendable, Equatable {
        /// `W₀ … W_R`, each in `0 ..< 2¹⁵`.
        public let weights: [Int16]
        /// `s + inputFractionBits − outputFractionBits`: the bits the pass drops.
        public let shift: Int
        /// How far, in levels, the pass's sum can lie from the exact weights' (values in 0 … 255).
        let weightError: Double

        /// The mask's weights times 2ˢ for the largest `s` that keeps each below 2¹⁵ and a sum of
        /// values up to `255 · 2^inputFractionBits`, plus the rounding half, below 2³¹; nil when
        /// none does.
        init?(_ mask: GaussianMask, inputFractionBits: Int, outputFractionBits: Int) {
            let largest = 255 << inputFractionBits, drop = inputFractionBits - outputFractionBits
            var s = max(0, 1 - drop)
            while (largest << (s + 1)) + (1 << (s + drop)) <= Int(Int32.max) { s += 1 }
            while s + drop >= 1 {
                if let quantised = FixedPointMask.quantised(mask, scaleBits: s), quantised.weights.allSatisfy({ $0 < 32768 }) {
                    weights = quantised.weights.map { Int16($0) }
                    shift = s + drop
                    weightError = quantised.error
                    return
                }
                s -= 1
            }
            return nil
        }
    }

    /// `R`, as the gaussian's mask.
    public let radius: Int
    /// The arithmetic and its weights.
    public let sums: Sums
    /// How far, in levels, the sum before the final rounding can lie from the definition.
    public let errorBound: Double

    /// The fixed-point form of `mask`: 16-bit sums where their ``errorBound`` is below half a
    /// level, else 32-bit sums where theirs is; `nil` when neither (or the mask is the identity).
    public init?(_ mask: GaussianMask) {
        let r = mask.radius
        guard r > 0 else { return nil }
        radius = r
        // 2⁻²⁰ covers the double-precision sums below.
        if let narrow = Self.quantised(mask, scaleBits: 16), narrow.weights.allSatisfy({ $0 < 65536 }) {
            let bias = (r + 1) / 2
            let truncation = Double(max(bias, r + 1 - bias)) / Double(1 << Self.fractionBits)
            let bound = 2 * (narrow.error + truncation) + 0x1p-20
            if bound < 0.5 {
                sums = .sixteenBit(weights: narrow.weights.map { UInt16($0) }, bias: UInt16(bias))
                errorBound = bound
                return
            }
        }
        guard let rows = WidePass(mask, inputFractionBits: 0, outputFractionBits: Self.wideFractionBits),
            let columns = WidePass(mask, inputFractionBits: Self.wideFractionBits, outputFractionBits: 0)
        else { return nil }
        let bound = rows.weightError + 1 / Double(2 << Self.wideFractionBits) + columns.weightError + 0x1p-20
        guard bound < 0.5 else { return nil }
        sums = .thirtyTwoBit(rows: rows, columns: columns)
        errorBound = bound
    }

    /// The 32-bit arithmetic for `mask` (any sigma) with its columns pass keeping
    /// ``wideFractionBits`` fraction bits too (values `level · 64`, rounded half up, at most
    /// 16320) for a pointwise step after the blur (frost's): ``errorBound`` is then how far those
    /// values, in levels, can lie from the definition (both passes' weights, and 1/128 level from
    /// each pass's kept fraction bits); nil where no scale has a bound below half a level.
    static func keepingFraction(_ mask: GaussianMask) -> FixedPointMask? {
        guard mask.radius > 0,
            let rows = WidePass(mask, inputFractionBits: 0, outputFractionBits: wideFractionBits),
            let columns = WidePass(mask, inputFractionBits: wideFractionBits, outputFractionBits: wideFractionBits)
        else { return nil }
        let bound = rows.weightError + columns.weightError + 2 / Double(2 << wideFractionBits) + 0x1p-20
        guard bound < 0.5 else { return nil }
        return FixedPointMask(radius: mask.radius, sums: .thirtyTwoBit(rows: rows, columns: columns), errorBound: bound)
    }

    private init(radius: Int, sums: Sums, errorBound: Double) {
        self.radius = radius
        self.sums = sums
        self.errorBound = errorBound
    }

    /// The mask's half weights times 2ˢ: `Wₖ = round(wₖ · 2ˢ)` for `k ≥ 1`, `W₀ = 2ˢ − 2 Σ Wₖ`,
    /// and the error in levels of a sum of values in 0 … 255 with them, `255 · Σⱼ|Wⱼ − wⱼ·2ˢ| /
    /// 2ˢ⁺¹` over the full mask; nil when `W₀` would not be positive.
    static func quantised(_ mask: GaussianMask, scaleBits s: Int) -> (weights: [Int], error: Double)? {
        let one = Double(1 << s)
        let outer = mask.halfWeights.dropFirst().map { ($0 * one).rounded() }
        let centre = one - 2 * outer.reduce(0, +)
        guard centre > 0 else { return nil }
        let quantised = [centre] + outer
        let weightError = zip(quantised, mask.halfWeights).enumerated().reduce(0.0) { total, element in
            let (k, (q, w)) = element
            return total + (k == 0 ? 1 : 2) * abs(q - w * one)
        }
        return (quantised.map { Int($0) }, 255 * weightError / (2 * one))
    }
}
