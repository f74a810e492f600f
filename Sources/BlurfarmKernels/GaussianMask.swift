import Foundation
import BlurfarmCore

/// The sampled, truncated, normalised Gaussian that `gaussian` convolves with (the algorithm;
/// ``SeparableConvolution`` is the schedule).
///
/// Weights are `exp(-k² / 2σ²)` for `k = -R ... R` with `R = ceil(3σ)`, divided by their sum.
/// Below ``identitySigma`` the mask is the single weight 1 (the filter returns its input, as
/// Core Image does).
public struct GaussianMask: Sendable, Equatable {
    /// Sigmas below this leave the image as it is: their mask is narrower than a pixel.
    public static let identitySigma = 0.16
    /// How many sigmas the mask reaches on each side of its centre (truncation point).
    public static let truncation = 3.0

    /// The standard deviation in pixels.
    public let sigma: Double
    /// `R`: the mask covers `-R ... R`.
    public let radius: Int
    /// The weights for `k = 0 ... R` (the mask is symmetric), summing to 1 over `-R ... R`,
    /// in double precision.
    public let halfWeights: [Double]

    public init(sigma: Double) {
        precondition(sigma > 0 && sigma.isFinite, "sigma must be a finite number > 0")
        self.sigma = sigma
        guard sigma >= Self.identitySigma else {
            radius = 0
            halfWeights = [1]
            return
        }
        let r = Int((Self.truncation * sigma).rounded(.up))
        let raw = (0...r).map { k in exp(-Double(k * k) / (2 * sigma * sigma)) }
        let total = raw[0] + 2 * raw.dropFirst().reduce(0, +)
        radius = r
        halfWeights = raw.map { $0 / total }
    }

    /// The weights in the working precision, `k = 0 ... R`.
    public var floatWeights: [Float] { halfWeights.map { Float($0) } }

    /// The full mask `-R ... R`, in double precision (for references and for libvips).
    public var fullWeights: [Double] { halfWeights.reversed() + halfWeights.dropFirst() }
}
