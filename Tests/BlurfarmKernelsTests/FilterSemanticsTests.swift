import Foundation
import BlurfarmCore
import BlurfarmEngine
import BlurfarmKernels
import Testing

@Suite struct FilterSemanticsTests {
    func render(_ filters: [any Filter], _ image: PixelBuffer, edge: EdgeRule = .clamp, colour: ColourMode = .gamma)
        -> PixelBuffer
    {
        Renderer(chain: FilterChain(filters: filters, edge: edge, colour: colour), tileSize: 0, executor: ThreadedTileExecutor(threads: 1))
            .render(image)
    }

    @Test func gaussianMaskFollowsTheDefinition() {
        let mask = GaussianMask(sigma: 2)
        #expect(mask.radius == 6)
        #expect(abs(mask.fullWeights.reduce(0, +) - 1) < 1e-12)
        #expect(abs(mask.halfWeights[1] / mask.halfWeights[0] - exp(-1.0 / 8)) < 1e-12)
        #expect(GaussianMask(sigma: 8).radius == 24)
        #expect(GaussianMask(sigma: 0.5).radius == 2)
        #expect(GaussianBlur(sigma: 32).reach == Reach(x: 96, y: 96))
    }

    @Test func tinySigmaReturnsTheInput() {
        let image = TestImages.random(width: 9, height: 7, seed: 1)
        let output = render([GaussianBlur(sigma: 0.1)], image)
        #expect(output.isBitIdentical(to: image))
        #expect(GaussianBlur(sigma: 0.1).reach == .zero)
    }

    @Test func mirrorReflectsWithoutRepeatingTheEdgePixel() {
        // ... 2, 1 | 0, 1, 2 ... and periodically beyond the image.
        let mirror = EdgeRule.mirror
        #expect((-3...6).map { mirror.sourceCoordinate($0, length: 4)! } == [3, 2, 1, 0, 1, 2, 3, 2, 1, 0])
        #expect(mirror.sourceCoordinate(-7, length: 4) == 1)
        #expect(mirror.sourceCoordinate(5, length: 1) == 0)
        #expect(EdgeRule.clamp.sourceCoordinate(-5, length: 4) == 0)
        #expect(EdgeRule.clamp.sourceCoordinate(9, length: 4) == 3)
        #expect(EdgeRule.transparent.sourceCoordinate(-1, length: 4) == nil)
    }

    @Test func motionAngleIsCounterClockwiseAsDisplayed() {
        // angle 90 points up on screen: v = (0, -r), so the taps lie on a vertical line.
        let up = MotionMask(radius: 4, angle: 90, samples: nil)
        #expect(up.taps.allSatisfy { $0.dx == 0 })
        #expect(up.reach == Reach(x: 0, y: 4))
        let along = MotionMask(radius: 5, angle: 0, samples: nil)
        #expect(along.taps.allSatisfy { $0.dy == 0 })
        #expect(along.taps.count == 11)
        let diagonal = MotionMask(radius: 20, angle: 30, samples: nil)
        #expect(diagonal.samples == 20)
        #expect(abs(diagonal.taps.map(\.weight).reduce(0, +) - 1) < 1e-12)
        #expect(diagonal.reach.x <= 18 && diagonal.reach.y <= 11)
    }

    @Test func motionOfAnImpulseLiesAlongTheVelocity() {
        // A single white pixel smeared by angle 45: the result lies on the anti-diagonal
        // through it (up-right and down-left as displayed).
        let image = PixelBuffer(rect: Rect(width: 21, height: 21))
        image[10, 10] = SIMD4(1, 1, 1, 1)
        let output = render([MotionBlur(radius: 6, angle: 45, samples: 12)], image, edge: .transparent)
        #expect(output[14, 6][3] > 0)
        #expect(output[6, 14][3] > 0)
        #expect(output[14, 14][3] == 0)
        #expect(output[6, 6][3] == 0)
    }

    @Test func growEnlargesTheOutputByTheReach() {
        let image = TestImages.random(width: 10, height: 6, seed: 2)
        let output = render([GaussianBlur(sigma: 1), MotionBlur(radius: 3, angle: 0)], image, edge: .grow)
        #expect(output.rect == Rect(x: -6, y: -3, width: 22, height: 12))
        #expect(render([GaussianBlur(sigma: 1)], image, edge: .transparent).rect == image.rect)
    }

    @Test func noDarkFringeAroundAnOpaqueSquareOnTransparentBlack() {
        let image = PixelBuffer(rect: Rect(width: 40, height: 40))
        for y in 12..<28 { for x in 12..<28 { image[x, y] = SIMD4(1, 0, 0, 1) } }
        for edge in EdgeRule.allCases {
            for colour in ColourMode.allCases {
                let output = render([GaussianBlur(sigma: 4)], image, edge: edge, colour: colour)
                for y in output.rect.y..<output.rect.maxY {
                    for x in output.rect.x..<output.rect.maxX {
                        let p = output[x, y]
                        guard p[3] > 0 else { continue }
                        let colourLevels = (p / p[3]) * 255
                        #expect(
                            abs(colourLevels[0] - 255) <= 1 && colourLevels[1] <= 1 && colourLevels[2] <= 1,
                            "pixel (\(x), \(y)) is \(colourLevels) after unpremultiplying, edge \(edge), colour \(colour)")
                    }
                }
            }
        }
    }

    @Test func linearLightBlursHighlightsBrighter() {
        // Half black, half white: the middle of the blurred edge is brighter in linear light.
        let image = PixelBuffer(rect: Rect(width: 40, height: 4))
        for y in 0..<4 { for x in 0..<40 { image[x, y] = x < 20 ? SIMD4(0, 0, 0, 1) : SIMD4(1, 1, 1, 1) } }
        let gamma = render([GaussianBlur(sigma: 3)], image, colour: .gamma)
        let linear = render([GaussianBlur(sigma: 3)], image, colour: .linear)
        #expect(abs(gamma[19, 1][0] + gamma[20, 1][0] - 1) < 1e-4)
        #expect(linear[19, 1][0] > gamma[19, 1][0] + 0.1)
        // Flat regions are unchanged by the round trip through linear light.
        #expect(abs(linear[2, 1][0]) < 1e-6 && abs(linear[37, 1][0] - 1) < 1e-5)
    }

    @Test func srgbTransferFunctionsAreExactInverses() {
        for i in 0...255 {
            let c = Float(i) / 255
            #expect(abs(SRGB.toEncoded(SRGB.toLinear(c)) - c) < 1e-6)
        }
        #expect(SRGB.toLinear(0.5) > 0.2140 && SRGB.toLinear(0.5) < 0.2141)
    }
}

extension FilterSemanticsTests {
    @Test func aTileReadsItsHaloClippedToTheImage() {
        let image = Rect(width: 100, height: 80)
        let chain = FilterChain(filters: [GaussianBlur(sigma: 2), MotionBlur(radius: 5, angle: 0)], edge: .clamp)
        #expect(chain.reach(in: image) == Reach(x: 11, y: 6))
        // An interior tile reads the tile grown by the chain's reach.
        #expect(chain.sourceRegion(for: Rect(x: 40, y: 30, width: 16, height: 16), image: image)
            == Rect(x: 29, y: 24, width: 38, height: 28))
        // A corner tile's halo is clipped to the image: clamp repeats the edge pixels.
        #expect(chain.sourceRegion(for: Rect(x: 0, y: 0, width: 16, height: 16), image: image)
            == Rect(x: 0, y: 0, width: 27, height: 22))
        // Mirror reads reflected pixels, which lie inside the same span here.
        let mirror = FilterChain(filters: [GaussianBlur(sigma: 2)], edge: .mirror)
        #expect(mirror.sourceRegion(for: Rect(x: 0, y: 0, width: 4, height: 4), image: image)
            == Rect(x: 0, y: 0, width: 10, height: 10))
        // With grow, a tile wholly outside the image reads nothing of it.
        let grow = FilterChain(filters: [GaussianBlur(sigma: 2)], edge: .grow)
        #expect(grow.sourceRegion(for: Rect(x: -9, y: -9, width: 3, height: 3), image: image).isEmpty)
        #expect(grow.sourceRegion(for: Rect(x: -6, y: -6, width: 3, height: 3), image: image)
            == Rect(x: 0, y: 0, width: 3, height: 3))
    }
}
