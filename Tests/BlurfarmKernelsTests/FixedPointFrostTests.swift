import BlurfarmCore
import Foundation
@testable import BlurfarmKernels
import BlurfarmTestSupport
import PropertyBased
import Testing

/// Frost over 8-bit opaque RGB in fixed point (``FixedPointFrost``): every level within the
/// bound its parameters prove of the double-precision definition, the C passes' lanes and the
/// reference schedule bit for bit, any tiling bit for bit, and a form only where the bound holds.
@Suite struct FixedPointFrostTests {
    /// The presets and overrides: small and large sigma (both sides of the gaussian's switch to
    /// 32-bit sums, which frost always takes), desaturating and saturating, other tints.
    static let cases: [FrostBlur] = [
        FrostBlur(style: .light), FrostBlur(style: .extraLight), FrostBlur(style: .dark),
        FrostBlur(style: .dark, sigma: 0.8, saturation: 0.4, tint: RGBAColour("#ff400080")),
        FrostBlur(style: .light, sigma: 3, saturation: 3),
        FrostBlur(style: .extraLight, sigma: 9.5, saturation: 1, tint: RGBAColour("#3080c000")),
    ]

    static func render(
        _ frost: FrostBlur, _ image: SampleBuffer<UInt8>, edge: EdgeRule, tile: Int = 0, lanes: FixedPointConvolution.Lanes = .widest
    ) -> SampleBuffer<UInt8> {
        FixedPointGaussianTests.tiled(image, by: frost, edge: edge, tile: tile) { t, source, output in
            FixedPointConvolution.apply(
                frost.fixedPoint!.mask, tile: t, source: source, image: image.rect, edge: edge, output: output,
                schedule: frost.blur.schedule, lanes: lanes, finish: frost.fixedPoint!.finish)
        }
    }

    /// Every level within `0.5 + errorBound` of the unrounded double-precision definition
    /// (`Reference.frost`), under `clamp` and `mirror`, through the chain's route, in tiles.
    @Test(arguments: cases.indices)
    func everyLevelIsWithinTheBoundOfTheDefinition(index: Int) throws {
        let frost = Self.cases[index]
        let fixed = try #require(frost.fixedPoint, "\(frost.spec) has no fixed-point form")
        #expect(fixed.errorBound < 0.5)
        let image = FileDepthGaussianTests.random(UInt8.self, width: 41, height: 29, channels: 3, seed: UInt64(frost.blur.mask.radius))
        let floats = AnyPixels.uint8(image).floats(in: image.rect)
        try FileDepthGaussianTests.expectWithinTheDefinition(frost, image, tile: 13, bound: fixed.errorBound, "\(frost.spec)") {
            Reference.frost(floats, sigma: frost.blur.mask.sigma, saturation: frost.saturation, tint: frost.tint, edge: $0)
        }
    }

    /// The C passes' widest code, their AVX2 and scalar code and the Swift reference schedule,
    /// and any tiling, give the same bits.
    @Test func lanesSchedulesAndTilesGiveTheSameBits() async {
        await propertyCheck(
            count: 30, input: Gen.int(in: 1...60), Gen.int(in: 1...30), Gen.int(in: 4...40), Gen.uint64()
        ) { width, height, tile, seed in
            var rng = SplitMix(seed: seed)
            let style = FrostStyle.allCases[Int(rng.next() % 3)]
            let sigma = Double.random(in: 0.3...24, using: &rng)
            let frost = FrostBlur(style: style, sigma: sigma, saturation: Double.random(in: 0...2.5, using: &rng))
            // Saturation up to 2.5 under the presets' tints: every case has a form.
            guard frost.fixedPoint != nil else {
                Issue.record("\(frost.spec) has no fixed-point form")
                return
            }
            let edge: EdgeRule = rng.next() % 2 == 0 ? .clamp : .mirror
            let image = FileDepthGaussianTests.random(UInt8.self, width: width, height: height, channels: 3, seed: seed)
            let what = "\(width)x\(height), \(frost.spec), \(edge)"
            let whole = FixedPointGaussianTests.inEveryLane(what) { Self.render(frost, image, edge: edge, lanes: $0) }
            let reference = FrostBlur(style: style, sigma: sigma, saturation: frost.saturation, schedule: .reference)
            FileDepthGaussianTests.expectIdentical(whole, Self.render(reference, image, edge: edge), "reference schedule, \(what)")
            FileDepthGaussianTests.expectIdentical(whole, Self.render(frost, image, edge: edge, tile: tile), "tile \(tile), \(what)")
        }
    }

    /// The presets have a form with their bounds; a form exists exactly where its bound is
    /// below half a level (strong saturation under a clear tint has none: a sweep of sigma,
    /// saturation and tint alpha against the bound's formula), and only a frost with a form takes
    /// the route, in `gamma` alone.
    @Test func aFormExistsWhereItsBoundHolds() throws {
        var (with, without) = (0, 0)
        for sigma in [0.5, 2, 8, 20, 40, 64] {
            for saturation in [0.0, 1, 1.8, 4, 10] {
                for alpha in [0, 64, 200, 255] {
                    let tint = try #require(RGBAColour("#ffffff" + String(format: "%02x", alpha)))
                    let frost = FrostBlur(style: .light, sigma: sigma, saturation: saturation, tint: tint)
                    guard let blur = FixedPointMask.keepingFraction(frost.blur.mask) else {
                        #expect(frost.fixedPoint == nil)
                        continue
                    }
                    let bound = (1 - Double(alpha) / 255) * (saturation + abs(1 - saturation)) * blur.errorBound + 0.002
                    #expect((frost.fixedPoint != nil) == (bound < 0.5), "sigma \(sigma), saturation \(saturation), alpha \(alpha): bound \(bound)")
                    if frost.fixedPoint != nil { with += 1 } else { without += 1 }
                }
            }
        }
        #expect(with > 0 && without > 0, "\(with) with a form, \(without) without")
        #expect(try #require(FrostBlur(style: .light).fixedPoint).errorBound < 0.14)
        #expect(try #require(FrostBlur(style: .extraLight).fixedPoint).errorBound < 0.03)
        #expect(try #require(FrostBlur(style: .dark).fixedPoint).errorBound < 0.04)
        let clear = try #require(RGBAColour("#ffffff00"))
        let strong = FrostBlur(style: .light, sigma: 40, saturation: 10, tint: clear)
        #expect(strong.fixedPoint == nil)
        #expect(FilterChain(filters: [strong], edge: .clamp).fixedPointFilter(forSourceChannels: 3) == nil)
        #expect(FilterChain(filters: [FrostBlur(style: .dark)], edge: .clamp).fixedPointFilter(forSourceChannels: 3) != nil)
        #expect(FilterChain(filters: [FrostBlur(style: .dark)], edge: .clamp, colour: .linear).fixedPointFilter(forSourceChannels: 3) == nil)
        #expect(FilterChain(filters: [FrostBlur(style: .dark)], edge: .clamp).fixedPointFilter(forSourceChannels: 4) == nil)
    }
}
