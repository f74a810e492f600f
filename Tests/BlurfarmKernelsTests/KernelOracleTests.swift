import BlurfarmCore
import BlurfarmEngine
import BlurfarmKernels
import Testing

/// The fast schedules against obvious code (bit for bit), and the kernels against the
/// double-precision definitions (within the accuracy bars).
@Suite struct KernelOracleTests {
    static func render(_ filter: any Filter, _ image: PixelBuffer, edge: EdgeRule = .clamp, tile: Int = 0)
        -> PixelBuffer
    {
        Renderer(chain: FilterChain(filters: [filter], edge: edge), tileSize: tile, executor: ThreadedTileExecutor(threads: 1))
            .render(image)
    }

    static func expectIdentical(_ a: PixelBuffer, _ b: PixelBuffer, _ what: String) {
        #expect(a.rect == b.rect)
        if let d = a.firstDifference(from: b) {
            Issue.record("\(what): first difference at (\(d.x), \(d.y)): \(a[d.x, d.y]) vs \(b[d.x, d.y])")
        }
    }

    @Test(arguments: [0.5, 1.0, 2.0, 3.7, 8.0])
    func gaussianFastScheduleEqualsReferenceSchedule(sigma: Double) {
        for opaque in [false, true] {
        let image = TestImages.random(width: 53, height: 41, seed: 7, opaque: opaque)
        for edge in EdgeRule.allCases {
            let fast = Self.render(GaussianBlur(sigma: sigma, schedule: .vectorized), image, edge: edge)
            let slow = Self.render(GaussianBlur(sigma: sigma, schedule: .reference), image, edge: edge)
            Self.expectIdentical(fast, slow, "gaussian sigma \(sigma) edge \(edge) opaque \(opaque)")
        }
        }
    }

    @Test(arguments: [(5.0, 30.0, nil), (12.0, -135.0, 4), (3.3, 90.0, 7), (0.0, 0.0, nil)] as [(Double, Double, Int?)])
    func motionFastScheduleEqualsReferenceSchedule(radius: Double, angle: Double, samples: Int?) {
        for opaque in [false, true] {
        let image = TestImages.random(width: 47, height: 38, seed: 11, opaque: opaque)
        for edge in EdgeRule.allCases {
            let fast = Self.render(MotionBlur(radius: radius, angle: angle, samples: samples, schedule: .vectorized), image, edge: edge)
            let slow = Self.render(MotionBlur(radius: radius, angle: angle, samples: samples, schedule: .reference), image, edge: edge)
            Self.expectIdentical(fast, slow, "motion r\(radius) a\(angle) edge \(edge) opaque \(opaque)")
        }
        }
    }

    @Test(arguments: [0.7, 2.0, 5.5])
    func gaussianMatchesDoublePrecisionDefinition(sigma: Double) {
        for opaque in [false, true] {
        let image = TestImages.random(width: 37, height: 29, seed: 3, opaque: opaque)
        for edge in EdgeRule.allCases {
            let output = Self.render(GaussianBlur(sigma: sigma), image, edge: edge, tile: 16)
            let reference = Reference.gaussian(image, sigma: sigma, edge: edge)
            let eight = Reference.maxLevelDifference(output, reference, maxLevel: 255)
            let sixteen = Reference.maxLevelDifference(output, reference, maxLevel: 65535)
            #expect(eight.levels <= 1, "8-bit: \(eight.levels) levels at (\(eight.x), \(eight.y)), edge \(edge)")
            #expect(sixteen.levels <= 2, "16-bit: \(sixteen.levels) levels at (\(sixteen.x), \(sixteen.y)), edge \(edge)")
        }
        }
    }

    @Test(arguments: [(6.0, 30.0, nil), (9.5, 200.0, 3), (4.0, 90.0, nil)] as [(Double, Double, Int?)])
    func motionMatchesDoublePrecisionDefinition(radius: Double, angle: Double, samples: Int?) {
        let image = TestImages.random(width: 31, height: 27, seed: 5)
        let n = samples ?? MotionMask.defaultSamples(radius: radius)
        for edge in [EdgeRule.clamp, .mirror, .transparent] {
            let output = Self.render(MotionBlur(radius: radius, angle: angle, samples: samples), image, edge: edge, tile: 8)
            let reference = Reference.motion(image, radius: radius, angle: angle, samples: n, edge: edge)
            let eight = Reference.maxLevelDifference(output, reference, maxLevel: 255)
            let sixteen = Reference.maxLevelDifference(output, reference, maxLevel: 65535)
            #expect(eight.levels <= 1, "8-bit: \(eight.levels) levels at (\(eight.x), \(eight.y)), edge \(edge)")
            #expect(sixteen.levels <= 2, "16-bit: \(sixteen.levels) levels at (\(sixteen.x), \(sixteen.y)), edge \(edge)")
        }
    }
}
