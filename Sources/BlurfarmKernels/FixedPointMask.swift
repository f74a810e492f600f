import BlurfarmCore

/// The gaussian's mask in 16-bit fixed point, for opaque 8-bit pixels (the algorithm;
/// ``FixedPointConvolution`` is the schedule), and the proof that it is accurate enough.
///
/// A sample `s` enters as `q = s · 2⁷` (values with 7 fraction bits). Each pass computes
/// `bias + mulhi(c, W₀) + Σₖ mulhi(a₋ₖ + a₊ₖ, Wₖ)` in 16-bit integers, where
/// `mulhi(a, b) = (a · b) >> 16`, `Wₖ = round(wₖ · 2¹⁶)` for `k ≥ 1`, `W₀ = 2¹⁶ − 2 Σ Wₖ`
/// (the weights sum to exactly 2¹⁶), and `bias` = ⌊(R + 1) / 2⌋ centres the truncation of the
/// `R + 1` products. The output level is `min((sum + 64) >> 7, 255)`. Exact integer arithmetic:
/// the same bits in every lane, every tile and every schedule.
///
/// The error against the double-precision definition `d` (docs/filters.md): each pass errs by
/// at most `255 · Σ|Wⱼ − wⱼ·2¹⁶| / 2¹⁷` levels from the rounded weights (over the full mask `j =
/// −R … R`; the weights' errors sum to zero and every value lies in 0 … 255) plus
/// `max(bias, R + 1 − bias) / 128` from the truncations, and the first pass's error passes
/// through the second unchanged (its weights are not negative and sum to 1). So the sum, before
/// the final rounding, is within ``errorBound`` levels of `d`, and the level within
/// `0.5 + errorBound`. The mask exists only where that is below 1 level (``init(_:)``):
/// sigma up to about 16; wider masks run in `Float32`.
public struct FixedPointMask: Sendable, Equatable {
    /// Fraction bits of the values between and within the passes.
    public static let fractionBits = 7

    /// `R`, as the gaussian's mask.
    public let radius: Int
    /// `W₀ … W_R`, with `W₀ + 2 Σ Wₖ = 2¹⁶`.
    public let weights: [UInt16]
    /// Added to each pass's sum: ⌊(R + 1) / 2⌋.
    public let bias: UInt16
    /// How far, in levels, the sum before the final rounding can lie from the definition.
    public let errorBound: Double

    /// The fixed-point form of `mask`, or `nil` when it would not stay within 1 level of the
    /// definition (``errorBound`` of 0.5 or more), or the mask is the identity.
    public init?(_ mask: GaussianMask) {
        let r = mask.radius
        guard r > 0 else { return nil }
        let one = 65536.0
        let outer = mask.halfWeights.dropFirst().map { ($0 * one).rounded() }
        let centre = one - 2 * outer.reduce(0, +)
        guard centre > 0, centre < one, outer.allSatisfy({ $0 >= 0 && $0 < one }) else { return nil }
        let quantised = [centre] + outer
        let weightError = zip(quantised, mask.halfWeights).enumerated().reduce(0.0) { total, element in
            let (k, (q, w)) = element
            return total + (k == 0 ? 1 : 2) * abs(q - w * one)
        }
        let bias = (r + 1) / 2
        let truncation = Double(max(bias, r + 1 - bias)) / Double(1 << Self.fractionBits)
        let perPass = 255 * weightError / (2 * one) + truncation
        // 2⁻²⁰ covers the double-precision sums above.
        let bound = 2 * perPass + 0x1p-20
        guard bound < 0.5 else { return nil }
        radius = r
        weights = quantised.map { UInt16($0) }
        self.bias = UInt16(bias)
        errorBound = bound
    }
}
