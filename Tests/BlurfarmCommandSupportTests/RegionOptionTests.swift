import BlurfarmCommandSupport
import BlurfarmCore
import BlurfarmFarm
import BlurfarmKernels
import BlurfarmManifest
import Testing

/// `apply`'s chain in words (BlurfarmFarm's `RegionOption`, `GlobPattern.ofArgument`), by value.
@Suite struct RegionOptionTests {
    func chain(_ filters: [String], regions: [String] = [], invert: Bool = false, regionOnly: Bool = false) throws(OptionError)
        -> ([FilterSpec], RegionMask)
    {
        try RegionOption.chain(
            filters: filters, regions: regions, file: nil, shape: .rect, feather: 0, invert: invert, regionOnly: regionOnly,
            edge: .clamp, registry: .builtIn)
    }

    @Test func aRegionIsPixelsOrPercentWithItsRadiusAndFeather() throws {
        let region = try RegionOption.parse("10%,20,30,40%,4,2").get()
        #expect(region.x == .percent(10) && region.y == .pixels(20) && region.height == .percent(40))
        #expect(region.cornerRadius == 4 && region.feather == 2)
    }

    @Test func theFiltersApplyInTheRegionsAndRegionOnlyWritesTheirBox() throws {
        let (specs, mask) = try chain(["gaussian sigma=8"], regions: ["0,0,10,10"], regionOnly: true)
        #expect(specs.map(\.name) == ["gaussian"])
        #expect(mask.regions.count == 1 && mask.extent == .box && !mask.invert)
    }

    @Test func eachMistakeIsOneLineNamingTheOption() {
        do {
            _ = try chain(["gaussian sigma=8"], regions: ["0,0,10,10"], invert: true, regionOnly: true)
            Issue.record("accepted")
        } catch {
            #expect(error.message == "--region-only writes the regions' box: not with --invert-regions")
        }
        #expect(throws: OptionError.self) { try chain([], regions: ["0,0,10,10"]) }
        #expect(throws: OptionError.self) { try GlobPattern.ofArgument("in/[a") }
    }

    @Test func anArgumentDropsEmptyAndDotSegments() throws {
        #expect(try GlobPattern.ofArgument("./in//./*.jpg") == "in/*.jpg")
    }
}

/// `apply -o`'s template (``PathTemplate/ofOutputOption(_:)``).
@Suite struct OutputOptionTests {
    @Test func aTemplateWithSizeOrNoneIsOneLineNamingO() throws {
        _ = try PathTemplate.ofOutputOption("out/{stem}.webp")
        #expect(throws: OptionError.self) { try PathTemplate.ofOutputOption("out/{size}/{stem}.jpg") }
        #expect(throws: OptionError.self) { try PathTemplate.ofOutputOption("out/{nope}.jpg") }
    }
}
