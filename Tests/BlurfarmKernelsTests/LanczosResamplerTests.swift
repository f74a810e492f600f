@testable import BlurfarmKernels
import BlurfarmTestSupport
import Foundation
import PropertyBased
import Testing

/// The Lanczos-3 resampler (``LanczosResampler``): against its double-precision definition
/// computed here independently (a 2-D sum per output pixel, no separable shortcut), the vector
/// and scalar code bit for bit, and what the definition promises (flat stays flat, the weights'
/// magnitudes within the accuracy proof's bound).
@Suite struct LanczosResamplerTests {
    /// The definition written out on its own: per axis the windows of `L3((i − X) / f)`, edges
    /// folded in, normalised; the output level the double sum over both axes.
    static func definition(
        _ source: [UInt8], width: Int, height: Int, channels: Int, toWidth outWidth: Int, toHeight outHeight: Int
    ) -> [Double] {
        func weights(_ n: Int, _ m: Int) -> [[(Int, Double)]] {
            let s = Double(n) / Double(m), f = max(s, 1)
            return (0..<m).map { o in
                let x = (Double(o) + 0.5) * s - 0.5
                var taps: [Int: Double] = [:]
                var i = Int((x - 3 * f).rounded(.down))
                while Double(i) < x + 3 * f {
                    let t = (Double(i) - x) / f
                    if abs(t) < 3 {
                        let l = t == 0 ? 1 : sin(Double.pi * t) * sin(Double.pi * t / 3) / (Double.pi * Double.pi * t * t / 3)
                        taps[min(max(i, 0), n - 1), default: 0] += l
                    }
                    i += 1
                }
                let sum = taps.values.reduce(0, +)
                return taps.map { ($0.key, $0.value / sum) }
            }
        }
        let wx = weights(width, outWidth), wy = weights(height, outHeight)
        var out = [Double](repeating: 0, count: outWidth * outHeight * channels)
        for oy in 0..<outHeight {
            for ox in 0..<outWidth {
                for c in 0..<channels {
                    var sum = 0.0
                    for (y, a) in wy[oy] {
                        for (x, b) in wx[ox] { sum += a * b * Double(source[(y * width + x) * channels + c]) }
                    }
                    out[(oy * outWidth + ox) * channels + c] = sum
                }
            }
        }
        return out
    }

    static func random(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed | 1
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
    }

    static func resampled(_ source: [UInt8], _ r: LanczosResampler, lanes: FixedPointConvolution.Lanes = .widest) -> [UInt8] {
        source.withUnsafeBytes { r.resample($0, stride: r.sourceWidth * r.channels, lanes: lanes) }
    }

    /// Every level within 1 of the definition's double sum (clamped), and equal to its rounded
    /// level wherever that sum is farther from a half than the proof's bound: reduces and enlargements, 1 to 4
    /// channels, random images (smooth and noisy).
    @Test func everyLevelIsTheDefinitionsRoundedLevel() async {
        await propertyCheck(
            count: 120, input: Gen.int(in: 1...40), Gen.int(in: 1...40), Gen.int(in: 1...40), Gen.int(in: 1...40),
            Gen.int(in: 1...4), Gen.uint64()
        ) { width, height, outWidth, outHeight, channels, seed in
            let noisy = Self.random(width * height * channels, seed: seed)
            // Half the images smooth (a ramp plus a little noise): sums near the middle of levels.
            let source = seed % 2 == 0 ? noisy : noisy.enumerated().map { i, v in UInt8((i * 7 / channels) % 200 + Int(v % 8)) }
            let r = LanczosResampler(sourceWidth: width, sourceHeight: height, width: outWidth, height: outHeight, channels: channels)!
            let ours = Self.resampled(source, r)
            let exact = Self.definition(source, width: width, height: height, channels: channels, toWidth: outWidth, toHeight: outHeight)
            for (i, (o, e)) in zip(ours, exact).enumerated() {
                let clamped = min(max(e, 0), 255)
                let rounded = (clamped + 0.5).rounded(.down)
                let nearHalf = abs(clamped - clamped.rounded(.down) - 0.5) <= r.errorBound
                if abs(Double(o) - clamped) >= 1 || (!nearHalf && Double(o) != rounded) {
                    Issue.record("\(width)x\(height)x\(channels) → \(outWidth)x\(outHeight), sample \(i): \(o) against \(e)")
                    return
                }
            }
        }
    }

    /// Both passes' vector code in each of its widths (AVX2 lanes; AVX-512 where the processor
    /// has it) and their scalar code give the same bytes, at photo-like reduces, with sizes that
    /// leave samples after the last whole block (3,003 samples a row: 59 after the blocks of 64,
    /// 3 after the 8 × 8 transposes), rows after the last group of 8 (193, 211, 750, 45 and 5
    /// rows), grey, two channels and RGBA.
    @Test(arguments: [
        (1600, 1200, 1280, 960, 3), (4000, 3000, 1280, 960, 3), (997, 601, 320, 193, 4), (640, 480, 1000, 750, 3),
        (1001, 333, 643, 211, 3), (2048, 100, 1023, 50, 1), (700, 90, 333, 45, 4), (450, 30, 7, 5, 2),
    ])
    func vectorAndScalarCodeAgreeBitForBit(size: (Int, Int, Int, Int, Int)) {
        let (w, h, ow, oh, c) = size
        let source = Self.random(w * h * c, seed: UInt64(w * h))
        let r = LanczosResampler(sourceWidth: w, sourceHeight: h, width: ow, height: oh, channels: c)!
        let scalar = Self.resampled(source, r, lanes: .scalar)
        // The first byte that differs, not the arrays (a megabyte each: their difference is
        // slow to describe).
        func firstDifference(_ bytes: [UInt8]) -> Int? {
            bytes.count == scalar.count ? bytes.indices.first { bytes[$0] != scalar[$0] } : 0
        }
        #expect(firstDifference(Self.resampled(source, r, lanes: .avx2)) == nil, "AVX2 against scalar")
        #expect(firstDifference(Self.resampled(source, r, lanes: .widest)) == nil, "AVX-512 (where the processor has it) against scalar")
    }

    /// A flat image stays flat at every scale (the weights sum to 1 in `Float32` closely enough),
    /// and the weights' magnitudes and the error bound are what the accuracy proof says.
    @Test(arguments: [1, 2, 3, 7, 64, 255])
    func aFlatImageStaysFlat(level: Int) {
        for (n, m) in [(1000, 311), (311, 1000), (4000, 1280), (12, 5), (5, 12), (1, 9), (9, 1), (3000, 41)] {
            let r = LanczosResampler(sourceWidth: n, sourceHeight: 7, width: m, height: 3, channels: 3)!
            let out = Self.resampled([UInt8](repeating: UInt8(level), count: n * 7 * 3), r)
            #expect(out.allSatisfy { Int($0) == level }, "\(n) → \(m)")
            #expect(r.alongRows.magnitude <= 1.6 && r.alongColumns.magnitude <= 1.6, "\(n) → \(m)")
            #expect(r.errorBound < (m * 20 < n ? 0.05 : 0.005))
        }
    }

    /// Only an extreme reduce has no resampler (its bound would pass ½ level).
    @Test func anExtremeReduceHasNoResampler() {
        #expect(LanczosResampler(sourceWidth: 2_000_000, sourceHeight: 4, width: 1, height: 1, channels: 3) == nil)
        #expect(LanczosResampler(sourceWidth: 20_000, sourceHeight: 4, width: 20, height: 1, channels: 3) != nil)
    }

    /// The windows match the definition's reach: a reduce by `s` reads about `6s` pixels, an
    /// enlargement 6, and no window leaves the image.
    @Test func theWindowsStayInTheImageAndReachAsFarAsTheKernel() {
        for (n, m, taps) in [(4000, 1280, 19), (1280, 640, 12), (640, 1280, 6), (100, 100, 5), (5, 2, 5)] {
            let axis = LanczosResampler.Axis(source: n, output: m)
            #expect(axis.taps == taps, "\(n) → \(m)")
            #expect(axis.first.allSatisfy { $0 >= 0 && Int($0) + axis.taps <= n })
        }
    }
}
