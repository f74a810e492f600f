import BlurfarmCore
import Foundation

/// The taps of `motion` (the algorithm; ``SparseConvolution`` is the schedule).
///
/// Velocity `v = radius·(cos a, −sin a)` in pixel coordinates (x right, y down), so the angle
/// is counter-clockwise as the image is displayed. The output is the mean of `2n + 1`
/// samples at `p − v + k·v/n`, `k = 0 … 2n`, each a bilinear interpolation. Every sample's
/// four bilinear weights are folded into one list of integer offsets with summed weights,
/// so the filter is a sparse convolution with a fixed mask.
public struct MotionMask: Sendable, Equatable {
    /// One input pixel the filter reads, relative to the output pixel, and its weight.
    public struct Tap: Sendable, Equatable {
        public let dx: Int
        public let dy: Int
        public let weight: Double
    }

    public let radius: Double
    public let angle: Double
    /// `n`: the filter averages `2n + 1` samples.
    public let samples: Int
    /// Taps in row order (by `dy`, then `dx`), weights summing to 1, none zero.
    public let taps: [Tap]

    /// The default sample count, `ceil(radius)`: one sample per pixel of travel, which avoids
    /// ghosting (Core Image's sample code used 5 samples for radius 40, which ghosts).
    public static func defaultSamples(radius: Double) -> Int { max(1, Int(radius.rounded(.up))) }

    /// `radius` in pixels (≥ 0), `angle` in degrees counter-clockwise from +x, `samples` ≥ 1
    /// (`nil`: ``defaultSamples(radius:)``).
    public init(radius: Double, angle: Double, samples: Int?) {
        precondition(radius >= 0 && radius.isFinite && angle.isFinite)
        self.radius = radius
        self.angle = angle
        let n = samples ?? Self.defaultSamples(radius: radius)
        precondition(n >= 1, "samples must be at least 1")
        self.samples = n
        let (c, s) = Self.cosineAndSine(degrees: angle)
        let vx = radius * c, vy = -radius * s
        var weights: [Int: [Int: Double]] = [:]
        let share = 1 / Double(2 * n + 1)
        for k in 0...(2 * n) {
            let t = Double(k) / Double(n)
            let sx = -vx + t * vx, sy = -vy + t * vy
            let ix = sx.rounded(.down), iy = sy.rounded(.down)
            let fx = sx - ix, fy = sy - iy
            let x0 = Int(ix), y0 = Int(iy)
            for (dx, dy, w) in [
                (x0, y0, (1 - fx) * (1 - fy)), (x0 + 1, y0, fx * (1 - fy)),
                (x0, y0 + 1, (1 - fx) * fy), (x0 + 1, y0 + 1, fx * fy),
            ] where w != 0 {
                weights[dy, default: [:]][dx, default: 0] += w * share
            }
        }
        taps = weights.keys.sorted().flatMap { dy in
            weights[dy]!.keys.sorted().map { dx in Tap(dx: dx, dy: dy, weight: weights[dy]![dx]!) }
        }
    }

    /// Cosine and sine of an angle in degrees, exact at multiples of 90° (so that 90° is a
    /// vertical blur, not one leaning by cos(π/2) ≈ 6e-17).
    public static func cosineAndSine(degrees: Double) -> (Double, Double) {
        let reduced = degrees.truncatingRemainder(dividingBy: 360)
        switch reduced < 0 ? reduced + 360 : reduced {
        case 0: return (1, 0)
        case 90: return (0, 1)
        case 180: return (-1, 0)
        case 270: return (0, -1)
        default:
            let radians = degrees * .pi / 180
            return (cos(radians), sin(radians))
        }
    }

    /// How far the taps reach from the output pixel, per axis.
    public var reach: Reach {
        Reach(x: taps.map { abs($0.dx) }.max() ?? 0, y: taps.map { abs($0.dy) }.max() ?? 0)
    }
}

extension MotionMask {
    /// The taps as a dense row-major mask centred on its middle element, for convolution
    /// routines that take a matrix (libvips's `vips_conv` in the benchmark).
    public var denseMask: (weights: [Double], width: Int, height: Int) {
        let r = reach
        let width = 2 * r.x + 1, height = 2 * r.y + 1
        var weights = [Double](repeating: 0, count: width * height)
        for tap in taps { weights[(tap.dy + r.y) * width + tap.dx + r.x] = tap.weight }
        return (weights, width, height)
    }
}
