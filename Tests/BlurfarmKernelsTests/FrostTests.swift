import BlurfarmCore
import BlurfarmEngine
import BlurfarmKernels
import BlurfarmTestSupport
import Testing

/// `frost` (UIImageEffects' light, extraLight and dark) against its double-precision
/// definition on corpus photos, tile invariance, and its parameters.
@Suite struct FrostTests {
    @Test(arguments: FrostStyle.allCases)
    func eachPresetOnAPhotoMatchesTheDefinition(style: FrostStyle) throws {
        let (image, depth) = try CorpusAccuracyTests.crop("photos/plasma-ColorfulCups.jpg", x: 1100, y: 650, size: 120)
        #expect(depth == 8)
        let output = CorpusAccuracyTests.render(FrostBlur(style: style), image, edge: .clamp)
        let reference = Reference.frost(
            image, sigma: style.sigma, saturation: style.saturation, tint: style.tint, edge: .clamp)
        let worst = Reference.maxLevelDifference(output, reference, maxLevel: 255)
        #expect(worst.levels <= 1, "\(style): \(worst.levels) levels at (\(worst.x), \(worst.y))")
        // The effect is there: the preset's tint moved the image (a sanity check on the oracle).
        let plainBlur = CorpusAccuracyTests.render(GaussianBlur(sigma: style.sigma), image, edge: .clamp)
        #expect(plainBlur.firstDifference(from: output) != nil)
    }

    @Test func overridesOnATranslucentImageMatchTheDefinition() throws {
        let (image, depth) = try CorpusAccuracyTests.crop("special/alpha-garbage-under-transparent.png", x: 540, y: 310, size: 90)
        #expect(image.channels == 4 && depth == 8)
        let tint = try #require(RGBAColour("#ff400080"))
        for edge in [EdgeRule.clamp, .transparent] {
            let frost = FrostBlur(style: .dark, sigma: 5.5, saturation: 0.4, tint: tint)
            let output = CorpusAccuracyTests.render(frost, image, edge: edge)
            let reference = Reference.frost(
                image, sigma: 5.5, saturation: 0.4, tint: SIMD4(255, 64, 0, 128) / 255, edge: edge)
            let worst = Reference.maxLevelDifference(output, reference, maxLevel: 255)
            #expect(worst.levels <= 1, "\(edge): \(worst.levels) levels at (\(worst.x), \(worst.y))")
        }
    }

    /// Under `colour: linear` the pixels are linear light and so is the tint drawn over them:
    /// the reference runs the definition on the linearised image with the tint linearised, then
    /// encodes; under `gamma`, the definition as it stands.
    @Test(arguments: FrostStyle.allCases)
    func eachPresetMatchesTheDefinitionInBothColourModes(style: FrostStyle) throws {
        let (image, _) = try CorpusAccuracyTests.crop("photos/plasma-ColorfulCups.jpg", x: 300, y: 200, size: 64)
        let tint = try #require(RGBAColour("#3080c0b0"))
        for (frost, tintValues) in [
            (FrostBlur(style: style, sigma: 3), style.tint), (FrostBlur(style: style, sigma: 3, tint: tint), SIMD4(48, 128, 192, 176) / 255),
        ] {
            for colour in ColourMode.allCases {
                let chain = FilterChain(filters: [frost], edge: .clamp, colour: colour)
                let output = Renderer(chain: chain, tileSize: 24, executor: ThreadedTileExecutor(threads: 2)).render(image)
                let reference: [SIMD4<Double>]
                switch colour {
                case .gamma:
                    reference = Reference.frost(image, sigma: 3, saturation: style.saturation, tint: tintValues, edge: .clamp)
                case .linear:
                    reference = Reference.frost(
                        Reference.linearised(image), sigma: 3, saturation: style.saturation,
                        tint: Reference.linearised(tintValues), edge: .clamp
                    ).map(Reference.encoded)
                }
                let worst = Reference.maxLevelDifference(output, reference, maxLevel: 255)
                #expect(worst.levels <= 1, "\(frost.spec) \(colour): \(worst.levels) levels at (\(worst.x), \(worst.y))")
            }
        }
    }

    /// The issue's case: `dark` on black is a dark veil in both modes (20 20 20 in gamma,
    /// 23 23 23 in linear light), not a mid-grey one (80 80 80).
    @Test func darkOnBlackStaysDarkInLinearLight() {
        let black = PixelBuffer(rect: Rect(width: 8, height: 8), channels: 3)
        for (colour, expected) in [(ColourMode.gamma, 20), (.linear, 23)] {
            let chain = FilterChain(filters: [FrostBlur(style: .dark)], edge: .clamp, colour: colour)
            let output = Renderer(chain: chain, tileSize: 0, executor: ThreadedTileExecutor(threads: 1)).render(black)
            let level = Int((output[4, 4][0] * 255).rounded())
            #expect(level == expected, "\(colour): \(level)")
        }
    }

    @Test func tiledEqualsUntiledBitForBit() {
        var random = SplitMix(seed: 61)
        for round in 0..<40 {
            let width = Int(random.next() % 50) + 1, height = Int(random.next() % 40) + 1
            let image = TestImages.random(width: width, height: height, seed: random.next(), opaque: round % 2 == 0)
            let style = FrostStyle.allCases[round % 3]
            let frost = FrostBlur(
                style: style, sigma: Double(random.next() % 60) / 10 + 0.1, saturation: Double(random.next() % 30) / 10)
            let chain = FilterChain(
                filters: [frost], edge: EdgeRule.allCases[Int(random.next() % 4)],
                colour: ColourMode.allCases[round % 2])
            let tile = Int(random.next() % 30) + 1
            let untiled = Renderer(chain: chain, tileSize: 0, executor: ThreadedTileExecutor(threads: 1)).render(image)
            let tiled = Renderer(chain: chain, tileSize: tile, executor: ThreadedTileExecutor(threads: 2)).render(image)
            #expect(tiled.rect == untiled.rect)
            if let d = tiled.firstDifference(from: untiled) {
                Issue.record("\(width)x\(height)x\(image.channels) \(frost.spec) \(chain.edge) tile \(tile): first difference at (\(d.x), \(d.y))")
            }
        }
    }

    @Test func theRegistryMakesTheSameFilterFromItsSpec() throws {
        let registry = FilterRegistry.builtIn
        let descriptor = try #require(registry.descriptor(named: "frost"))
        let spec = try descriptor.resolve([("style", .string("extraLight")), ("tint", .string("#FF000080"))]).get()
        #expect(spec.arguments["tint"] == .string("#ff000080"))
        let made = try #require(registry.makeFilter(spec) as? FrostBlur)
        #expect(made.style == .extraLight && made.blur.mask.sigma == 20 && made.saturation == 1.8)
        #expect(made.tint == SIMD4(1, 0, 0, 128.0 / 255))
        // Worker processes get the filter's spec: it must make the same filter again.
        let again = try #require(registry.makeFilter(made.spec) as? FrostBlur)
        #expect(again.spec == made.spec && again.tint == made.tint)
        let preset = try #require(registry.makeFilter(descriptor.resolve([]).get()) as? FrostBlur)
        #expect(preset.style == .light && preset.tint == SIMD4(1, 1, 1, 0.3) && preset.blur.mask.sigma == 30)
    }

    @Test func aBadTintOrStyleIsRefusedInWords() throws {
        let descriptor = try #require(FilterRegistry.builtIn.descriptor(named: "frost"))
        for (name, value, expected) in [
            ("tint", "#ff00", "'tint' must be a colour '#rrggbbaa' or '#rrggbb'"),
            ("tint", "white", "'tint' must be a colour '#rrggbbaa' or '#rrggbb'"),
            ("style", "medium", "'style' must be one of 'light', 'extraLight', 'dark'"),
        ] {
            switch descriptor.resolve([(name, .string(value))]) {
            case .success: Issue.record("\(name)=\(value) was accepted")
            case .failure(let problems): #expect(problems.problems.map(\.description) == [expected])
            }
        }
    }
}
