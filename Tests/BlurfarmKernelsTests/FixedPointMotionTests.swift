import BlurfarmCore
@testable import BlurfarmKernels
import BlurfarmTestSupport
import PropertyBased
import Testing

/// The motion blur over 8-bit opaque RGB in fixed point (``FixedPointMotion``): every level
/// within the bound its mask proves of the double-precision definition, the AVX-512, AVX2 and
/// scalar code bit for bit, and any tiling bit for bit.
@Suite struct FixedPointMotionTests {
    /// Radii, angles and sample counts: horizontal, vertical, diagonal, ghosting (few samples),
    /// sub-pixel, the identity, long.
    static let cases: [(Double, Double, Int?)] = [
        (0, 0, nil), (0.4, 17, nil), (1, 0, nil), (3.3, 90, 7), (5, 30, nil), (9.5, 200, 3), (12, -135, 4),
        (20, 30, nil), (41, 300, nil),
    ]

    /// `motion` over `image` cut into tiles of `tile` pixels (0: one tile), each from its
    /// source region alone, in the `lanes` asked for.
    static func render(
        _ motion: MotionBlur, _ image: SampleBuffer<UInt8>, edge: EdgeRule, tile: Int = 0,
        lanes: FixedPointConvolution.Lanes = .widest
    ) -> SampleBuffer<UInt8> {
        FixedPointGaussianTests.tiled(image, by: motion, edge: edge, tile: tile) { t, source, output in
            FixedPointMotion.apply(
                motion.fixedPoint!, motion.mask, tile: t, source: source, image: image.rect, edge: edge, output: output, lanes: lanes)
        }
    }

    /// Every level within `0.5 + errorBound` of the unrounded double-precision definition
    /// (2n + 1 bilinear samples, `Reference.motion`), under `clamp` and `mirror`, through the
    /// production entry point (the chain's route).
    @Test(arguments: cases)
    func everyLevelIsWithinTheBoundOfTheDefinition(radius: Double, angle: Double, samples: Int?) throws {
        let motion = MotionBlur(radius: radius, angle: angle, samples: samples)
        let mask = try #require(motion.fixedPoint, "radius \(radius) has no fixed-point mask")
        #expect(mask.errorBound < 0.5)
        let image = FileDepthGaussianTests.random(UInt8.self, width: 45, height: 33, channels: 3, seed: UInt64(radius * 10))
        let floats = AnyPixels.uint8(image).floats(in: image.rect)
        let n = samples ?? MotionMask.defaultSamples(radius: radius)
        try FileDepthGaussianTests.expectWithinTheDefinition(
            motion, image, tile: 16, bound: mask.errorBound, "radius \(radius), angle \(angle)"
        ) { Reference.motion(floats, radius: radius, angle: angle, samples: n, edge: $0) }
    }

    /// The C sum's widest code (AVX-512BW where this processor has it), its AVX2 code and its
    /// scalar code give the same bits, on widths that leave remainders of 32 and 16 lanes, and
    /// any tiling gives the same bits.
    @Test func lanesAndTilesGiveTheSameBits() async {
        await propertyCheck(
            count: 40, input: Gen.int(in: 1...70), Gen.int(in: 1...30), Gen.int(in: 4...40), Gen.uint64()
        ) { width, height, tile, seed in
            var rng = SplitMix(seed: seed)
            let motion = MotionBlur(
                radius: Double.random(in: 0...25, using: &rng), angle: Double.random(in: -360...360, using: &rng),
                samples: rng.next() % 3 == 0 ? Int(rng.next() % 9) + 1 : nil)
            let edge: EdgeRule = rng.next() % 2 == 0 ? .clamp : .mirror
            let image = FileDepthGaussianTests.random(UInt8.self, width: width, height: height, channels: 3, seed: seed)
            let what = "\(width)x\(height), radius \(motion.mask.radius), angle \(motion.mask.angle), \(edge)"
            let whole = FixedPointGaussianTests.inEveryLane(what) { Self.render(motion, image, edge: edge, lanes: $0) }
            FileDepthGaussianTests.expectIdentical(whole, Self.render(motion, image, edge: edge, tile: tile), "tile \(tile), \(what)")
        }
    }

    /// Every mask has a fixed-point form: weights summing to exactly 2ˢ, each below 2¹⁵, each
    /// within half a unit of its double-precision weight but the largest, which takes up the
    /// rest; radius 0 is the identity exactly.
    @Test func masksSumToOneAndExistForEveryRadius() {
        for radius in [0, 0.3, 1, 2.5, 8, 20, 64, 150, 400, 2000] {
            for angle in [0.0, 13, 45, 90, 233] {
                let mask = MotionMask(radius: radius, angle: angle, samples: nil)
                guard let fixed = FixedPointMotion.Mask(mask) else {
                    Issue.record("radius \(radius), angle \(angle) has no fixed-point mask")
                    continue
                }
                let one = 1 << fixed.shift
                #expect(fixed.errorBound < 0.5 && fixed.shift <= 23)
                #expect(fixed.weights.count == mask.taps.count + mask.taps.count % 2)
                #expect(fixed.weights.reduce(0) { $0 + Int($1) } == one, "radius \(radius), angle \(angle)")
                let largest = mask.taps.map(\.weight).max()!
                for (w, tap) in zip(fixed.weights, mask.taps) where tap.weight != largest {
                    #expect(abs(Double(w) - tap.weight * Double(one)) <= 0.5, "radius \(radius), angle \(angle)")
                }
            }
        }
        let identity = FixedPointMotion.Mask(MotionMask(radius: 0, angle: 0, samples: nil))!
        #expect(identity.weights == [Int16(1 << identity.shift), 0])
    }
}
