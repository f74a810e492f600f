import BlurfarmCore
@testable import BlurfarmKernels
import BlurfarmTestSupport
import PropertyBased
import Testing

/// The 8-bit gaussian in fixed point (``FixedPointMask``, ``FixedPointConvolution``), 16-bit
/// and 32-bit sums: against the double-precision definition within the bound each mask proves,
/// the AVX2 and scalar code of the C passes and the obvious Swift reference bit for bit, and any
/// tiling bit for bit.
@Suite struct FixedPointGaussianTests {
    /// Sigmas from 0.3 to 64, through the switch from 16-bit to 32-bit sums (about 16).
    static let sweep = [
        0.3, 0.45, 0.7, 1.0, 1.3, 1.9, 2.0, 2.6, 3.3, 4.4, 5.5, 7.1, 8.0, 9.6, 11.2, 13.7, 15.9, 16.4, 18.5, 21.3,
        24.0, 27.9, 32.0, 36.6, 41.1, 47.5, 53.3, 59.8, 64.0,
    ]

    /// `gaussian` over `image` (RGB or RGBA) in fixed point, C passes in the `lanes` asked for
    /// (the widest the processor has, AVX2, scalar code only), cut into tiles of `tile` pixels
    /// (0: one tile), each tile from its source region alone.
    static func render(
        _ gaussian: GaussianBlur, _ image: SampleBuffer<UInt8>, edge: EdgeRule, tile: Int = 0, lanes: FixedPointConvolution.Lanes = .widest
    ) -> SampleBuffer<UInt8> {
        tiled(image, by: gaussian, edge: edge, tile: tile) { t, source, output in
            FixedPointConvolution.apply(
                gaussian.fixedPoint!, tile: t, source: source, image: image.rect, edge: edge, output: output,
                schedule: gaussian.schedule, lanes: lanes)
        }
    }

    /// A new buffer of `image`'s size and channels, `render(tile, source, output)` called for
    /// each tile of `tile` pixels (0: one tile) with the source region `filter` alone under
    /// `edge` reads for it: how the fixed-point filters' tests cut an image.
    static func tiled(
        _ image: SampleBuffer<UInt8>, by filter: any Filter, edge: EdgeRule, tile: Int,
        _ render: (Rect, SampleBuffer<UInt8>, SampleBuffer<UInt8>) -> Void
    ) -> SampleBuffer<UInt8> {
        let output = SampleBuffer<UInt8>(rect: image.rect, channels: image.channels)
        let chain = FilterChain(filters: [filter], edge: edge)
        for t in TileGrid(bounds: image.rect, tileSize: tile).tiles {
            render(t, image.view(chain.sourceRegion(for: t, image: image.rect)), output)
        }
        return output
    }

    /// `render` in the widest lanes of the C passes, after expecting their AVX2 code and their
    /// scalar code (which a build without AVX2 runs) to give the same bits.
    static func inEveryLane(
        _ what: String, _ render: (FixedPointConvolution.Lanes) -> SampleBuffer<UInt8>
    ) -> SampleBuffer<UInt8> {
        let widest = render(.widest)
        FileDepthGaussianTests.expectIdentical(widest, render(.avx2), "AVX2, \(what)")
        FileDepthGaussianTests.expectIdentical(widest, render(.scalar), "scalar C, \(what)")
        return widest
    }

    /// Every output level within `0.5 + errorBound` (below 1) of the unrounded double-precision
    /// definition, for every sigma of the sweep, under `clamp` and `mirror` (the edge rules the
    /// fixed-point path serves; the others run in `Float32`, checked in
    /// ``FileDepthGaussianTests``), on random images: through the production entry point.
    @Test(arguments: sweep)
    func everyLevelIsWithinTheBoundOfTheDefinition(sigma: Double) throws {
        let gaussian = GaussianBlur(sigma: sigma)
        let mask = try #require(gaussian.fixedPoint, "sigma \(sigma) has no fixed-point mask")
        #expect(mask.errorBound < 0.5)
        // Images about as wide as the mask, so that the edges fold in every way.
        let (width, height) = sigma > 20 ? (37, 11) : (45, 29)
        for edge in [EdgeRule.clamp, .mirror] {
            let image = FileDepthGaussianTests.random(UInt8.self, width: width, height: height, channels: 3, seed: UInt64(sigma * 10))
            let output = FileDepthGaussianTests.render(gaussian, image, edge: edge, tile: 16)
            let reference = Reference.gaussian(image, sigma: sigma, edge: edge)
            let worst = FileDepthGaussianTests.unroundedWorst(output, reference)
            #expect(
                worst.levels <= 0.5 + mask.errorBound,
                "sigma \(sigma), \(edge): \(worst.levels) levels at (\(worst.x), \(worst.y)), bound \(0.5 + mask.errorBound)")
        }
    }

    /// The C passes' widest code (AVX-512BW where this processor has it), their AVX2 code, their
    /// scalar code and the obvious Swift reference schedule give the same bits, for 16-bit and
    /// 32-bit sums, on widths that leave several remainders of 32 and 16 lanes.
    @Test(arguments: [0.3, 1.0, 2.0, 5.5, 8.0, 15.9, 16.4, 24.0, 32.0, 64.0])
    func vectorScalarAndReferenceAgreeBitForBit(sigma: Double) {
        let vectorized = GaussianBlur(sigma: sigma, schedule: .vectorized)
        let reference = GaussianBlur(sigma: sigma, schedule: .reference)
        for (width, height) in [(53, 9), (16, 3), (7, 21), (75, 6)] {
            let image = FileDepthGaussianTests.random(UInt8.self, width: width, height: height, channels: 3, seed: UInt64(width))
            for edge in [EdgeRule.clamp, .mirror] {
                let what = "sigma \(sigma), \(width)x\(height), \(edge)"
                let simd = Self.inEveryLane(what) { Self.render(vectorized, image, edge: edge, lanes: $0) }
                FileDepthGaussianTests.expectIdentical(simd, Self.render(reference, image, edge: edge), "reference, \(what)")
            }
        }
    }

    /// A tile wide enough that the fast schedule cuts it into slabs of columns and tall enough
    /// for several strips, with 32-bit sums.
    @Test func wideMaskSlabsAndStripsEqualTheReferenceSchedule() {
        let image = FileDepthGaussianTests.random(UInt8.self, width: 700, height: 40, channels: 3, seed: 21)
        for edge in [EdgeRule.clamp, .mirror] {
            FileDepthGaussianTests.expectIdentical(
                Self.render(GaussianBlur(sigma: 20, schedule: .vectorized), image, edge: edge),
                Self.render(GaussianBlur(sigma: 20, schedule: .reference), image, edge: edge),
                "sigma 20, \(edge)")
        }
    }

    /// Any tiling, the same bits, for sigmas across both arithmetics, each tile rendered from
    /// its source region alone, in AVX2 lanes or scalar code.
    @Test func tiledEqualsUntiledBitForBit() async {
        await propertyCheck(
            count: 40, input: Gen.int(in: 1...40), Gen.int(in: 1...30), Gen.int(in: 6...40), Gen.uint64()
        ) { width, height, tile, seed in
            var rng = SplitMix(seed: seed)
            let gaussian = GaussianBlur(sigma: Double.random(in: 0.3...40, using: &rng))
            let edge: EdgeRule = rng.next() % 2 == 0 ? .clamp : .mirror
            let lanes = FixedPointConvolution.Lanes(rawValue: Int32(rng.next() % 3))!
            let image = FileDepthGaussianTests.random(UInt8.self, width: width, height: height, channels: 3, seed: seed)
            FileDepthGaussianTests.expectIdentical(
                Self.render(gaussian, image, edge: edge, tile: tile, lanes: lanes), Self.render(gaussian, image, edge: edge),
                "\(width)x\(height), tile \(tile), sigma \(gaussian.mask.sigma), \(edge), lanes \(lanes)")
        }
    }

    /// Every mask from sigma 0.2 to 64 has a fixed-point form: weights summing to exactly
    /// 2¹⁶ (16-bit sums) or 2ˢ (32-bit sums, each pass), each within half a unit of the
    /// double-precision weight but the centre, which takes up the rest; 16-bit sums exactly
    /// up to sigma about 16, where their bound reaches half a level.
    @Test func masksSumToOneAndExistUpToSigma64() {
        var widestSixteenBit = 0.0
        for tenths in 2...640 {
            let mask = GaussianMask(sigma: Double(tenths) / 10)
            guard let fixed = FixedPointMask(mask) else {
                Issue.record("sigma \(mask.sigma) has no fixed-point mask")
                continue
            }
            #expect(fixed.radius == mask.radius && fixed.errorBound < 0.5)
            let passes: [(weights: [Int], scale: Double)]
            switch fixed.sums {
            case .sixteenBit(let w, let bias):
                #expect(bias == UInt16((mask.radius + 1) / 2))
                passes = [(w.map { Int($0) }, 65536)]
                widestSixteenBit = mask.sigma
            case .thirtyTwoBit(let rows, let columns):
                // The rows pass keeps 6 fraction bits of its sums, the columns pass none.
                let f = FixedPointMask.wideFractionBits
                #expect(rows.shift + f <= 23 && columns.shift - f <= 17, "sigma \(mask.sigma): sums below 2³¹")
                passes = [(rows, rows.shift + f), (columns, columns.shift - f)].map { pass, scaleBits in
                    (pass.weights.map { Int($0) }, Double(1 << scaleBits))
                }
            }
            for (w, scale) in passes {
                #expect(w.count == mask.radius + 1)
                #expect(w.dropFirst().reduce(0) { $0 + 2 * $1 } + w[0] == Int(scale), "sigma \(mask.sigma)")
                for k in 1...mask.radius {
                    #expect(abs(Double(w[k]) - mask.halfWeights[k] * scale) <= 0.5, "sigma \(mask.sigma), k \(k)")
                }
            }
        }
        #expect(widestSixteenBit >= 15 && widestSixteenBit < 17, "the widest 16-bit sigma is \(widestSixteenBit)")
        #expect(FixedPointMask(GaussianMask(sigma: 0.1)) == nil, "the identity has no fixed-point form")
    }

    /// RGBA under `clamp` and `mirror`: a pixel whose whole window (clipped to the image) is
    /// opaque is the fixed-point blur of the colours, alpha 255, with RGB's bound; every other
    /// pixel is the file-depth `Float32` arithmetic's. Checked pixel by pixel against both
    /// arithmetics run alone, the windows found by brute force, on images opaque but for a
    /// few translucent and transparent spots, for sigmas across both fixed-point sums; and
    /// any tiling and any lanes give the same bits.
    @Test(arguments: [0.3, 1.0, 2.6, 8.0, 15.9, 16.4, 32.0])
    func rgbaPixelsWithOpaqueWindowsAreTheFixedPointBlurOfTheirColours(sigma: Double) throws {
        let gaussian = GaussianBlur(sigma: sigma)
        let mask = try #require(gaussian.fixedPoint)
        let r = mask.radius
        // Wider than a block of the mixed tiles (128 pixels or more), so that those run too.
        let (width, height) = (max(200, 3 * r), sigma > 10 ? 23 : 140)
        var seen = (opaque: 0, other: 0)
        for (spots, edge) in [(0, EdgeRule.clamp), (3, .mirror), (8, .clamp), (20, .mirror)] {
            let image = try #require(randomSpottedRGBA(width: width, height: height, spots: spots, seed: UInt64(sigma * 10) + UInt64(spots)).uint8Samples)
            let rgb = SampleBuffer<UInt8>(rect: image.rect, channels: 3)
            for y in 0..<height { for x in 0..<width { rgb[x, y] = SIMD4(image[x, y][0], image[x, y][1], image[x, y][2], 255) } }
            let fixed = Self.render(gaussian, rgb, edge: edge)
            let float = SampleBuffer<UInt8>(rect: image.rect, channels: 4)
            SampleConvolution.apply(
                weights: gaussian.weights, tile: image.rect, source: image, image: image.rect, edge: edge, output: float,
                schedule: gaussian.schedule)
            let output = FileDepthGaussianTests.render(gaussian, image, edge: edge, tile: 16)
            FileDepthGaussianTests.expectIdentical(
                output, FileDepthGaussianTests.render(gaussian, image, edge: edge), "sigma \(sigma), \(spots) spots, tiles of 16")
            // A window is opaque when no pixel with alpha below 255 lies within r of its centre
            // on both axes (the edge rules fold in copies of pixels inside the window).
            let translucent = FileDepthGaussianTests.pixels(image.rect).filter { image[$0.0, $0.1][3] != 255 }
            for y in 0..<height {
                for x in 0..<width {
                    let opaque = !translucent.contains { abs($0.0 - x) <= r && abs($0.1 - y) <= r }
                    let expected = opaque ? SIMD4(fixed[x, y][0], fixed[x, y][1], fixed[x, y][2], 255) : float[x, y]
                    if opaque { seen.opaque += 1 } else { seen.other += 1 }
                    if output[x, y] != expected {
                        Issue.record(
                            "sigma \(sigma), \(spots) spots, \(edge): (\(x), \(y)) is \(output[x, y]), the \(opaque ? "fixed-point" : "Float32") value \(expected)")
                        return
                    }
                }
            }
            let worst = FileDepthGaussianTests.worst(output, Reference.gaussian(image, sigma: sigma, edge: edge))
            #expect(worst.levels <= 1, "sigma \(sigma), \(spots) spots: \(worst.levels) levels at (\(worst.x), \(worst.y))")
        }
        #expect(seen.opaque > 0 && seen.other > 0, "sigma \(sigma): \(seen)")
    }

    /// The C passes' widest code, their AVX2 code and their scalar code, and the reference
    /// schedule, give the same bits on opaque RGBA (4 samples a pixel, alpha blurred as it is).
    @Test(arguments: [1.0, 8.0, 24.0])
    func opaqueRGBAInEveryLanesIsTheSameBits(sigma: Double) throws {
        let vectorized = GaussianBlur(sigma: sigma, schedule: .vectorized)
        let image = try #require(randomSpottedRGBA(width: 75, height: 9, spots: 0, seed: 7).uint8Samples)
        let widest = Self.inEveryLane("sigma \(sigma)") { Self.render(vectorized, image, edge: .mirror, lanes: $0) }
        FileDepthGaussianTests.expectIdentical(
            widest, Self.render(GaussianBlur(sigma: sigma, schedule: .reference), image, edge: .mirror), "reference, sigma \(sigma)")
        #expect((0..<9).allSatisfy { y in (0..<75).allSatisfy { x in widest[x, y][3] == 255 } }, "alpha stays 255")
    }

    /// A slab's samples fill whole 32-lane vectors of the C passes (their scalar code, for the
    /// samples left over, was a third of the time at sigma 32), and a slab is never narrower
    /// than the mask's two halos.
    @Test func slabsAreWholeVectorsWide() {
        for radius in [1, 6, 24, 48, 96, 192] {
            for rows in [1, 32, 512] {
                for sampleBytes in [2, 4] {
                    let slab = SampleConvolution.slabPixels(radius: radius, channels: 3, rows: rows, sampleBytes: sampleBytes)
                    #expect(slab % 32 == 0 && slab >= 2 * radius, "radius \(radius), \(rows) rows: \(slab)")
                }
            }
        }
    }
}
