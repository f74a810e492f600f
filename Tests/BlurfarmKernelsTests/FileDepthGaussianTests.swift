import BlurfarmCore
import BlurfarmKernels
import BlurfarmTestSupport
import Foundation
import PropertyBased
import Testing

/// The gaussian on pixels at the file's depth (8- and 16-bit samples in and out): the fast
/// schedule against obvious code bit for bit, both against the double-precision definition
/// within the accuracy bars, and tiled against untiled bit for bit.
@Suite struct FileDepthGaussianTests {
    /// Random straight-alpha samples: about a quarter of the pixels fully transparent, a
    /// quarter opaque (`channels` 3: opaque RGB).
    static func random<S: FileSample>(_: S.Type, width: Int, height: Int, channels: Int, seed: UInt64) -> SampleBuffer<S> {
        var rng = SplitMix(seed: seed)
        let image = SampleBuffer<S>(rect: Rect(width: width, height: height), channels: channels)
        let levels = UInt64(S.max) + 1
        for y in 0..<height {
            for x in 0..<width {
                var alpha = S.max
                if channels == 4 {
                    alpha = switch rng.next() % 4 {
                    case 0: 0
                    case 1: S.max
                    default: S(truncatingIfNeeded: rng.next() % levels)
                    }
                }
                image[x, y] = SIMD4(
                    S(truncatingIfNeeded: rng.next() % levels), S(truncatingIfNeeded: rng.next() % levels),
                    S(truncatingIfNeeded: rng.next() % levels), alpha)
            }
        }
        return image
    }

    /// The whole output of `gaussian` on `image` under `edge`, cut into tiles of `tile`
    /// pixels (0: one tile), each rendered from nothing but its source region.
    static func render<S: FileSample>(
        _ gaussian: GaussianBlur, _ image: SampleBuffer<S>, edge: EdgeRule, tile: Int = 0
    ) -> SampleBuffer<S> {
        let chain = FilterChain(filters: [gaussian], edge: edge)
        let out = chain.outputRect(forImage: image.rect)
        let output = SampleBuffer<S>(rect: out, channels: chain.channels(forSource: image.channels))
        for t in TileGrid(bounds: out, tileSize: tile).tiles {
            let source = image.view(gaussian.sourceRegion(for: t, image: image.rect, edge: edge))
            render(gaussian, tile: t, source: source, image: image.rect, edge: edge, into: output)
        }
        return output
    }

    static func render<S: FileSample>(
        _ gaussian: GaussianBlur, tile: Rect, source: SampleBuffer<S>, image: Rect, edge: EdgeRule,
        into output: SampleBuffer<S>
    ) {
        if let source = source as? SampleBuffer<UInt8>, let output = output as? SampleBuffer<UInt8> {
            gaussian.render(tile: tile, source: source, image: image, edge: edge, into: output)
        } else if let source = source as? SampleBuffer<UInt16>, let output = output as? SampleBuffer<UInt16> {
            gaussian.render(tile: tile, source: source, image: image, edge: edge, into: output)
        } else {
            Issue.record("samples of \(S.self)")
        }
    }

    static func expectIdentical<S: FileSample>(_ a: SampleBuffer<S>, _ b: SampleBuffer<S>, _ what: String) {
        #expect(a.rect == b.rect && a.channels == b.channels)
        if let d = a.firstDifference(from: b) {
            Issue.record("\(what): first difference at (\(d.x), \(d.y)): \(a[d.x, d.y]) vs \(b[d.x, d.y])")
        }
    }

    @Test(arguments: [0.5, 1.0, 2.0, 3.7, 8.0])
    func fastScheduleEqualsReferenceSchedule(sigma: Double) {
        for channels in [3, 4] {
            for edge in EdgeRule.allCases {
                let eight = Self.random(UInt8.self, width: 53, height: 41, channels: channels, seed: 7)
                Self.expectIdentical(
                    Self.render(GaussianBlur(sigma: sigma, schedule: .vectorized), eight, edge: edge),
                    Self.render(GaussianBlur(sigma: sigma, schedule: .reference), eight, edge: edge),
                    "8-bit sigma \(sigma) edge \(edge) channels \(channels)")
                let sixteen = Self.random(UInt16.self, width: 37, height: 29, channels: channels, seed: 8)
                Self.expectIdentical(
                    Self.render(GaussianBlur(sigma: sigma, schedule: .vectorized), sixteen, edge: edge),
                    Self.render(GaussianBlur(sigma: sigma, schedule: .reference), sixteen, edge: edge),
                    "16-bit sigma \(sigma) edge \(edge) channels \(channels)")
            }
        }
    }

    /// A tile wide enough that the fast schedule cuts it into slabs of columns (at sigma 8
    /// about 200 pixels with alpha, 270 without) and tall enough for several strips.
    @Test func wideTilesCutIntoSlabsEqualTheReferenceSchedule() {
        for channels in [3, 4] {
            let image = Self.random(UInt8.self, width: 611, height: 75, channels: channels, seed: 12)
            for edge in EdgeRule.allCases {
                Self.expectIdentical(
                    Self.render(GaussianBlur(sigma: 8, schedule: .vectorized), image, edge: edge),
                    Self.render(GaussianBlur(sigma: 8, schedule: .reference), image, edge: edge),
                    "sigma 8 edge \(edge) channels \(channels)")
            }
        }
    }

    /// Within 1 level of the definition at 8 bits and 2 at 16 (outputs and definition both
    /// unpremultiplied and rounded; colour compared where alpha is at least one level), for
    /// every edge rule, with and without alpha, sigma 0.5 to 32.
    @Test(arguments: [0.5, 0.8, 1.5, 2.0, 4.2, 8.0, 13.0, 32.0])
    func matchesDoublePrecisionDefinition(sigma: Double) {
        let (width, height) = sigma > 10 ? (23, 19) : (41, 33)
        for channels in [3, 4] {
            for edge in EdgeRule.allCases {
                let eight = Self.random(UInt8.self, width: width, height: height, channels: channels, seed: 3)
                let e8 = Self.worst(Self.render(GaussianBlur(sigma: sigma), eight, edge: edge, tile: 16),
                    Reference.gaussian(eight, sigma: sigma, edge: edge))
                #expect(e8.levels <= 1, "8-bit: \(e8.levels) levels at (\(e8.x), \(e8.y)), edge \(edge), channels \(channels)")
                let sixteen = Self.random(UInt16.self, width: width, height: height, channels: channels, seed: 4)
                let e16 = Self.worst(Self.render(GaussianBlur(sigma: sigma), sixteen, edge: edge, tile: 16),
                    Reference.gaussian(sixteen, sigma: sigma, edge: edge))
                #expect(e16.levels <= 2, "16-bit: \(e16.levels) levels at (\(e16.x), \(e16.y)), edge \(edge), channels \(channels)")
            }
        }
    }

    /// Opaque pixels are within half a level of the unrounded definition plus the mask's
    /// ``FixedPointMask/errorBound`` (opaque RGB under `clamp` and `mirror` is blurred in fixed
    /// point; every sigma here has a mask).
    @Test(arguments: [0.6, 3.0, 8.0, 12.0, 24.0])
    func opaquePixelsAreWithinHalfALevelAndTheArithmeticsBound(sigma: Double) {
        let gaussian = GaussianBlur(sigma: sigma)
        #expect(gaussian.fixedPoint != nil, "sigma \(sigma): no fixed-point mask")
        for edge in [EdgeRule.mirror, .clamp] {
            let eight = Self.random(UInt8.self, width: 61, height: 47, channels: 3, seed: 5)
            let output = Self.render(gaussian, eight, edge: edge, tile: 20)
            let reference = Reference.gaussian(eight, sigma: sigma, edge: edge)
            let worst = Self.unroundedWorst(output, reference)
            let bound = 0.5 + (gaussian.fixedPoint?.errorBound ?? 0.001)
            #expect(worst.levels <= bound, "sigma \(sigma), \(edge): \(worst.levels) levels at (\(worst.x), \(worst.y)), bound \(bound)")
        }
    }

    @Test func sigmaBelowTheIdentityLimitReturnsTheInput() {
        for edge in EdgeRule.allCases {
            let opaque = Self.random(UInt8.self, width: 9, height: 7, channels: 3, seed: 1)
            let output = Self.render(GaussianBlur(sigma: 0.1), opaque, edge: edge)
            for (x, y) in Self.pixels(opaque.rect) {
                #expect(output[x, y] == opaque[x, y], "(\(x), \(y)) edge \(edge)")
            }
            let sixteen = Self.random(UInt16.self, width: 9, height: 7, channels: 4, seed: 2)
            let same = Self.render(GaussianBlur(sigma: 0.1), sixteen, edge: edge)
            for (x, y) in Self.pixels(sixteen.rect) {
                // Premultiplied semantics: a fully transparent pixel has no colour.
                let p = sixteen[x, y]
                #expect(same[x, y] == (p[3] == 0 ? .zero : p), "(\(x), \(y)) edge \(edge)")
            }
        }
    }

    /// The tile-invariance guarantee at file depth: any tiling, the same bits, each tile
    /// rendered from its source region alone.
    @Test func tiledEqualsUntiledBitForBit() async {
        await propertyCheck(
            count: 120, input: Gen.int(in: 1...48), Gen.int(in: 1...40), Gen.int(in: 1...50), Gen.uint64()
        ) { width, height, tile, seed in
            var rng = SplitMix(seed: seed)
            let gaussian = GaussianBlur(sigma: Double.random(in: 0.1...9, using: &rng))
            let edge = EdgeRule.allCases[Int(rng.next() % 4)]
            let channels = rng.next() % 2 == 0 ? 3 : 4
            let what = "\(width)x\(height)x\(channels), tile \(tile), sigma \(gaussian.mask.sigma), \(edge)"
            if rng.next() % 2 == 0 {
                let image = Self.random(UInt8.self, width: width, height: height, channels: channels, seed: seed)
                Self.expectIdentical(
                    Self.render(gaussian, image, edge: edge, tile: tile), Self.render(gaussian, image, edge: edge),
                    "8-bit \(what)")
            } else {
                let image = Self.random(UInt16.self, width: width, height: height, channels: channels, seed: seed)
                Self.expectIdentical(
                    Self.render(gaussian, image, edge: edge, tile: tile), Self.render(gaussian, image, edge: edge),
                    "16-bit \(what)")
            }
        }
    }

    /// `filter` over opaque 8-bit RGB through its chain's fixed-point route
    /// (``FilterChain/fixedPointFilter(forSourceChannels:)``), in tiles of `tile` pixels, each
    /// from its source region alone.
    static func routed(_ filter: any Filter, _ image: SampleBuffer<UInt8>, edge: EdgeRule, tile: Int) throws -> SampleBuffer<UInt8> {
        let chain = FilterChain(filters: [filter], edge: edge)
        let routed = try #require(chain.fixedPointFilter(forSourceChannels: 3), "\(filter.spec) under \(edge) takes no fixed-point route")
        let output = SampleBuffer<UInt8>(rect: image.rect, channels: 3)
        for t in TileGrid(bounds: image.rect, tileSize: tile).tiles {
            routed.render(tile: t, source: image.view(chain.sourceRegion(for: t, image: image.rect)), image: image.rect, edge: edge, into: output)
        }
        return output
    }

    /// The largest distance, in levels, of an opaque 8-bit output's colour from the unrounded
    /// definition `reference` (0…1 a channel), and where.
    static func unroundedWorst(_ output: SampleBuffer<UInt8>, _ reference: [SIMD4<Double>]) -> (levels: Double, x: Int, y: Int) {
        var worst = (levels: 0.0, x: 0, y: 0)
        for (i, (x, y)) in pixels(output.rect).enumerated() {
            for c in 0..<3 {
                let d = abs(Double(output[x, y][c]) - reference[i][c] * 255)
                if d > worst.levels { worst = (d, x, y) }
            }
        }
        return worst
    }

    /// Expects every level of `filter` over `image`, through the chain's route in tiles of
    /// `tile`, under `clamp` and `mirror`, within `0.5 + bound` of the unrounded definition
    /// `reference(edge)` (10⁻⁴ more: the reference reads the samples as Float32, s / 255,
    /// rounded); `label` names the case.
    static func expectWithinTheDefinition(
        _ filter: any Filter, _ image: SampleBuffer<UInt8>, tile: Int, bound: Double, _ label: String,
        reference: (EdgeRule) -> [SIMD4<Double>], sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) throws {
        for edge in [EdgeRule.clamp, .mirror] {
            let worst = unroundedWorst(try routed(filter, image, edge: edge, tile: tile), reference(edge))
            #expect(
                worst.levels <= 0.5 + bound + 1e-4,
                "\(label), \(edge): \(worst.levels) levels at (\(worst.x), \(worst.y)), bound \(0.5 + bound)",
                sourceLocation: sourceLocation)
        }
    }

    /// Every pixel of `rect`, in row order.
    static func pixels(_ rect: Rect) -> [(Int, Int)] {
        (rect.y..<rect.maxY).flatMap { y in (rect.x..<rect.maxX).map { x in (x, y) } }
    }

    /// The largest difference in levels between `output` and the definition `reference`
    /// (premultiplied, 0…1), both unpremultiplied and rounded to the output's depth; colour
    /// only where the definition's alpha is at least one level (unpremultiplying magnifies
    /// any error below that).
    static func worst<S: FileSample>(_ output: SampleBuffer<S>, _ reference: [SIMD4<Double>]) -> (levels: Int, x: Int, y: Int) {
        let maxLevel = Double(S.max)
        var worst = (levels: 0, x: 0, y: 0)
        for (i, (x, y)) in pixels(output.rect).enumerated() {
            let p = output[x, y], q = reference[i]
            for c in 0..<output.channels {
                if c < 3 && q[3] * maxLevel < 1 { continue }
                let v = c == 3 ? q[3] : min(q[c] / q[3], 1)
                let d = Int(abs(Double(p[c]) - (v * maxLevel).rounded()))
                if d > worst.levels { worst = (d, x, y) }
            }
        }
        return worst
    }
}

extension Reference {
    /// The Gaussian of the definition on straight-alpha samples, as premultiplied doubles in
    /// 0…1 over the output rectangle (the image, or the image grown by R for `grow`): samples
    /// premultiplied, w_k = exp(−k²/2σ²) for k = −R…R, R = ceil(3σ), normalised (R = 0 below
    /// sigma 0.16), columns then rows, in doubles.
    static func gaussian<S: FileSample>(_ image: SampleBuffer<S>, sigma: Double, edge: EdgeRule) -> [SIMD4<Double>] {
        let r = sigma < 0.16 ? 0 : Int((3 * sigma).rounded(.up))
        let raw = (-r...r).map { k in exp(-Double(k * k) / (2 * sigma * sigma)) }
        let total = raw.reduce(0, +)
        let w = raw.map { $0 / total }
        let rect = image.rect, maxLevel = Double(S.max)
        let rule = edge == .grow ? EdgeRule.transparent : edge
        let out = edge == .grow ? rect.grown(dx: r, dy: r) : rect
        // The premultiplied input over the output grown by R, then the columns pass, then the
        // rows pass, in flat arrays of doubles (4 per pixel).
        let inWidth = out.width + 2 * r, inHeight = out.height + 2 * r
        var input = [Double](repeating: 0, count: inWidth * inHeight * 4)
        for y in 0..<inHeight {
            guard let sy = rule.sourceCoordinate(out.y - r + y - rect.y, length: rect.height) else { continue }
            for x in 0..<inWidth {
                guard let sx = rule.sourceCoordinate(out.x - r + x - rect.x, length: rect.width) else { continue }
                let p = image[sx + rect.x, sy + rect.y]
                let a = Double(p[3]) / maxLevel
                for c in 0..<3 { input[(y * inWidth + x) * 4 + c] = Double(p[c]) / maxLevel * a }
                input[(y * inWidth + x) * 4 + 3] = a
            }
        }
        var columns = [Double](repeating: 0, count: inWidth * out.height * 4)
        for y in 0..<out.height {
            for i in 0..<(inWidth * 4) {
                var acc = 0.0
                for k in 0...(2 * r) { acc += w[k] * input[(y + k) * inWidth * 4 + i] }
                columns[y * inWidth * 4 + i] = acc
            }
        }
        var result: [SIMD4<Double>] = []
        for y in 0..<out.height {
            for x in 0..<out.width {
                var pixel = SIMD4<Double>.zero
                for c in 0..<4 {
                    var acc = 0.0
                    for k in 0...(2 * r) { acc += w[k] * columns[(y * inWidth + x + k) * 4 + c] }
                    pixel[c] = acc
                }
                result.append(pixel)
            }
        }
        return result
    }
}
