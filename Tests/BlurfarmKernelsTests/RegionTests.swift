import BlurfarmCore
import BlurfarmEngine
import BlurfarmKernels
import BlurfarmTestSupport
import PropertyBased
import Testing

/// Regions: where a chain's filters apply. Outside every region (and its feather) the source
/// passes through bit for bit, inside the whole-image filter's output, on the feather the
/// documented blend (RegionBlend.swift); the same bits in any tiles and bands.
@Suite struct RegionTests {
    static let image = Rect(width: 40, height: 30)

    /// The pixels whose coverage is 1, as a set of (x, y).
    static func covered(_ mask: RegionMask, in image: Rect = image) -> Set<[Int]> {
        var set: Set<[Int]> = []
        for y in image.y..<image.maxY {
            for x in image.x..<image.maxX where mask.coverage(x: x, y: y, in: image) == 1 { set.insert([x, y]) }
        }
        return set
    }

    static func box(_ x0: Int, _ y0: Int, _ w: Int, _ h: Int) -> Set<[Int]> {
        var set: Set<[Int]> = []
        for y in y0..<(y0 + h) { for x in x0..<(x0 + w) { set.insert([x, y]) } }
        return set
    }

    @Test func aRectangleCoversItsPixelsExactly() {
        let rect = Region(x: .pixels(10), y: .pixels(5), width: .pixels(20), height: .pixels(10))
        let mask = RegionMask(regions: [rect])
        #expect(Self.covered(mask) == Self.box(10, 5, 20, 10))
        // Nothing between 0 and 1 without a feather.
        for y in 0..<30 {
            for x in 0..<40 { #expect([0, 1].contains(mask.coverage(x: x, y: y, in: Self.image))) }
        }
    }

    @Test func percentagesAreOfTheImagesWidthAndHeight() {
        let percent = Region(x: .percent(25), y: .percent(10), width: .percent(50), height: .percent(50))
        #expect(Self.covered(RegionMask(regions: [percent])) == Self.box(10, 3, 20, 15))
        // The same region on another image scales with it.
        let wide = Rect(width: 80, height: 60)
        #expect(Self.covered(RegionMask(regions: [percent]), in: wide) == Self.box(20, 6, 40, 30))
    }

    @Test func roundedCornersAndEllipsesLeaveTheCornersOfTheBoxOut() {
        let rounded = Region(x: .pixels(10), y: .pixels(5), width: .pixels(20), height: .pixels(10), cornerRadius: 4)
        let r = Self.covered(RegionMask(regions: [rounded]))
        #expect(!r.contains([10, 5]) && !r.contains([29, 5]) && !r.contains([10, 14]) && !r.contains([29, 14]))
        #expect(r.contains([20, 5]) && r.contains([10, 10]) && r.contains([20, 10]))
        #expect(r.isSubset(of: Self.box(10, 5, 20, 10)) && r.count < 200)
        // A circle: the pixels whose centre lies inside it.
        let circle = Region(shape: .ellipse, x: .pixels(5), y: .pixels(5), width: .pixels(16), height: .pixels(16))
        var expected: Set<[Int]> = []
        for y in 0..<30 {
            for x in 0..<40 {
                let dx = Double(x) + 0.5 - 13, dy = Double(y) + 0.5 - 13
                if (dx * dx + dy * dy).squareRoot() < 8 { expected.insert([x, y]) }
            }
        }
        #expect(Self.covered(RegionMask(regions: [circle])) == expected)
        // An ellipse: its centre and axes in, the box's corners out.
        let ellipse = Region(shape: .ellipse, x: .pixels(0), y: .pixels(10), width: .pixels(40), height: .pixels(10))
        let e = Self.covered(RegionMask(regions: [ellipse]))
        #expect(e.contains([20, 15]) && e.contains([1, 15]) && e.contains([38, 15]) && e.contains([20, 10]))
        #expect(!e.contains([0, 10]) && !e.contains([39, 19]) && e.isSubset(of: Self.box(0, 10, 40, 10)))
    }

    @Test func theFeatherRampsInsideTheOutlineAsDocumented() {
        let feather = 4.0
        let rect = Region(x: .pixels(10), y: .pixels(5), width: .pixels(20), height: .pixels(20), feather: feather)
        let mask = RegionMask(regions: [rect])
        // Along row 15 (10 pixels from the top and bottom): the distance to the left edge.
        for x in 0..<40 {
            let c = mask.coverage(x: x, y: 15, in: Self.image)
            let depth = min(Double(x) + 0.5 - 10, 30 - (Double(x) + 0.5))
            let t = min(max(depth / feather, 0), 1)
            #expect(c == (depth <= 0 ? 0 : t * t * (3 - 2 * t)), "x \(x)")
        }
        #expect(mask.coverage(x: 9, y: 15, in: Self.image) == 0)
        #expect(mask.coverage(x: 10, y: 15, in: Self.image) > 0 && mask.coverage(x: 10, y: 15, in: Self.image) < 0.1)
        #expect(mask.coverage(x: 14, y: 15, in: Self.image) == 1)
    }

    @Test func overlappingRegionsTakeTheLargerCoverageAndInvertTakesTheRest() {
        let a = Region(x: .pixels(0), y: .pixels(0), width: .pixels(20), height: .pixels(20), feather: 6)
        let b = Region(shape: .ellipse, x: .pixels(10), y: .pixels(5), width: .pixels(25), height: .pixels(20), feather: 3)
        let both = RegionMask(regions: [a, b]), inverted = RegionMask(regions: [a, b], invert: true)
        for y in 0..<30 {
            for x in 0..<40 {
                let ca = RegionMask(regions: [a]).coverage(x: x, y: y, in: Self.image)
                let cb = RegionMask(regions: [b]).coverage(x: x, y: y, in: Self.image)
                #expect(both.coverage(x: x, y: y, in: Self.image) == max(ca, cb))
                #expect(inverted.coverage(x: x, y: y, in: Self.image) == 1 - max(ca, cb))
            }
        }
    }

    @Test func aRegionBeyondTheImageIsClippedToIt() {
        let overTheEdge = Region(x: .pixels(-10), y: .pixels(25), width: .pixels(20), height: .pixels(100))
        #expect(Self.covered(RegionMask(regions: [overTheEdge])) == Self.box(0, 25, 10, 5))
        #expect(overTheEdge.placement(in: Self.image) == (partlyOutside: true, whollyOutside: false))
        let away = Region(x: .percent(100), y: .pixels(0), width: .pixels(5), height: .pixels(5))
        #expect(Self.covered(RegionMask(regions: [away])).isEmpty)
        #expect(away.placement(in: Self.image) == (partlyOutside: true, whollyOutside: true))
        let inside = Region(x: .pixels(0), y: .pixels(0), width: .percent(100), height: .percent(100))
        #expect(inside.placement(in: Self.image) == (partlyOutside: false, whollyOutside: false))
        // A region file's box that ends at the image's edge, as its shares of 1920 x 1280,
        // at every width: on the edge, not beyond it (its pixels sum one rounding step past).
        let share = { (value: Double, extent: Double) in RegionLength.percent(value / extent * 100) }
        let atTheEdge = Region(
            x: share(1000, 1920), y: share(1000, 1280), width: share(920, 1920), height: share(280, 1280))
        for width in [320, 641, 1000, 1280, 1919, 1920] {
            let image = Rect(width: width, height: width * 2 / 3)
            #expect(atTheEdge.placement(in: image) == (partlyOutside: false, whollyOutside: false), "\(width)")
        }
        let beyond = Region(x: share(1000, 1920), y: .pixels(0), width: share(921, 1920), height: .pixels(1))
        #expect(beyond.placement(in: Rect(width: 1920, height: 10)) == (partlyOutside: true, whollyOutside: false))
    }

    /// `output: region` with no box says why: the regions lie outside the image, or inside
    /// it each is too thin to hold a pixel's centre.
    @Test func anEmptyRegionOutputSaysWhetherItsRegionsAreOutsideOrTooThin() throws {
        let chain = { (region: Region) in
            FilterChain(filters: [], regions: RegionMask(regions: [region], extent: .box))
        }
        let thin = Region(x: .pixels(10.6), y: .pixels(5), width: .pixels(0.8), height: .pixels(10))
        let away = Region(x: .pixels(50), y: .pixels(5), width: .pixels(5), height: .pixels(10))
        let thinProblem = try #require(chain(thin).regionProblem(forImage: Self.image))
        #expect(thinProblem.contains("no region holds a whole pixel's centre of the 40x30 image"), "\(thinProblem)")
        let awayProblem = try #require(chain(away).regionProblem(forImage: Self.image))
        #expect(awayProblem.contains("every region lies outside the 40x30 image"), "\(awayProblem)")
        #expect(chain(Region(x: .pixels(1), y: .pixels(1), width: .pixels(3), height: .pixels(3))).regionProblem(forImage: Self.image) == nil)
    }

    @Test func aRowsCoverageIsEachPixelsCoverage() async {
        await propertyCheck(count: 300, input: Gen.int(in: 1...60), Gen.int(in: 1...60), Gen.uint64()) { width, height, seed in
            let mask = randomRegionMask(width: width, height: height, seed: seed)
            let image = Rect(width: width, height: height)
            var row: [Float] = []
            for y in 0..<height {
                mask.coverage(row: y, from: 0, count: width, in: image, into: &row)
                for x in 0..<width where row[x] != Float(mask.coverage(x: x, y: y, in: image)) {
                    Issue.record("\(mask) at (\(x), \(y)): row \(row[x]), pixel \(mask.coverage(x: x, y: y, in: image))")
                    return
                }
            }
        }
    }

    /// The shortcut of a tile wholly outside or inside the regions: when it names a coverage,
    /// it is every pixel's, for random masks (rounded, feathered, ellipses, inverted) and tiles.
    @Test func aTilesUniformCoverageIsEachPixelsCoverage() async {
        var uniformTiles = 0  // the cases that check something: a tile with no uniform coverage checks nothing
        await propertyCheck(count: 400, input: Gen.int(in: 1...60), Gen.int(in: 1...60), Gen.uint64()) { width, height, seed in
            let mask = randomRegionMask(width: width, height: height, seed: seed)
            let image = Rect(width: width, height: height)
            var rng = SplitMix(seed: seed &+ 1)
            let x = Int(rng.next() % UInt64(width)), y = Int(rng.next() % UInt64(height))
            let tile = Rect(
                x: x, y: y, width: 1 + Int(rng.next() % UInt64(width - x)), height: 1 + Int(rng.next() % UInt64(height - y)))
            guard let uniform = mask.uniformCoverage(of: tile, in: image) else { return }
            uniformTiles += 1
            for j in tile.y..<tile.maxY {
                for i in tile.x..<tile.maxX where Float(mask.coverage(x: i, y: j, in: image)) != uniform {
                    Issue.record("\(mask), tile \(tile): (\(i), \(j)) has \(mask.coverage(x: i, y: j, in: image)), not \(uniform)")
                    return
                }
            }
        }
        #expect(uniformTiles > 0, "no random tile had a uniform coverage: nothing was checked")
    }

    /// `output: region`'s box holds every pixel a region covers, and is the smallest rectangle
    /// that does so with every region's box: each of its four edges has a pixel whose centre
    /// lies strictly inside some region's box.
    @Test func theRegionsBoxHoldsEveryCoveredPixelAndNoMore() async {
        await propertyCheck(count: 400, input: Gen.int(in: 1...60), Gen.int(in: 1...60), Gen.uint64()) { width, height, seed in
            var mask = randomRegionMask(width: width, height: height, seed: seed)
            mask.invert = false
            let image = Rect(width: width, height: height)
            let box = mask.box(in: image)
            #expect(image.contains(box))
            func inAnyBox(_ i: Int, _ j: Int) -> Bool {
                mask.regions.contains { r in
                    let b = r.box(in: image)
                    return b.left < Double(i) + 0.5 && Double(i) + 0.5 < b.right && b.top < Double(j) + 0.5 && Double(j) + 0.5 < b.bottom
                }
            }
            for j in 0..<height {
                for i in 0..<width where mask.coverage(x: i, y: j, in: image) > 0 || inAnyBox(i, j) {
                    guard box.contains(x: i, y: j) else {
                        Issue.record("\(mask): (\(i), \(j)) is covered, outside the box \(box)")
                        return
                    }
                }
            }
            guard !box.isEmpty else { return }
            let edges = [
                (box.x..<box.maxX).map { ($0, box.y) }, (box.x..<box.maxX).map { ($0, box.maxY - 1) },
                (box.y..<box.maxY).map { (box.x, $0) }, (box.y..<box.maxY).map { (box.maxX - 1, $0) },
            ]
            #expect(edges.allSatisfy { $0.contains { inAnyBox($0.0, $0.1) } }, "\(mask): \(box) is larger than the regions' boxes")
        }
    }

    /// A centre on a box's edge is outside the shape, whatever the signed distance's last bit
    /// says there (the case a random mask found: a box from 7.5 whose centre-to-edge distance
    /// rounded below zero): the pixel's, the row's and the tile's coverage agree.
    @Test func aCentreOnTheBoxsEdgeIsOutsideForPixelRowAndTile() {
        let mask = randomRegionMask(width: 25, height: 4, seed: 18123777502872028808)
        let image = Rect(width: 25, height: 4)
        #expect(mask.regions.contains { $0.box(in: image).left == 7.5 })
        var row: [Float] = []
        mask.coverage(row: 2, from: 0, count: 25, in: image, into: &row)
        #expect(Float(mask.coverage(x: 7, y: 2, in: image)) == row[7])
        #expect(mask.uniformCoverage(of: Rect(x: 0, y: 2, width: 8, height: 1), in: image) == row[7])
    }

    /// Tiles outside a rounded, feathered rectangle, inside it past its feather, and across its
    /// edge: 0, 1 and measured pixel by pixel; swapped when inverted.
    @Test func tilesOutsideAndInsideARegionAreKnownWithoutMeasuring() {
        let image = Rect(width: 100, height: 100)
        let region = Region(
            x: .pixels(20), y: .pixels(20), width: .pixels(60), height: .pixels(60), cornerRadius: 10, feather: 5)
        let outside = Rect(x: 0, y: 0, width: 20, height: 100)
        let inside = Rect(x: 30, y: 30, width: 40, height: 40)
        let across = Rect(x: 15, y: 15, width: 10, height: 10)
        let mask = RegionMask(regions: [region]), inverted = RegionMask(regions: [region], invert: true)
        #expect(mask.uniformCoverage(of: outside, in: image) == 0 && inverted.uniformCoverage(of: outside, in: image) == 1)
        #expect(mask.uniformCoverage(of: inside, in: image) == 1 && inverted.uniformCoverage(of: inside, in: image) == 0)
        #expect(mask.uniformCoverage(of: across, in: image) == nil && inverted.uniformCoverage(of: across, in: image) == nil)
        // Within the feather: not wholly covered.
        #expect(mask.uniformCoverage(of: Rect(x: 22, y: 40, width: 10, height: 10), in: image) == nil)
        #expect(RegionMask.everywhere.uniformCoverage(of: across, in: image) == 1)
    }

    /// A random chain that keeps the image's size (regions refuse `grow`).
    static func chain(seed: UInt64, regions: RegionMask) -> FilterChain {
        var rng = SplitMix(seed: seed)
        var filters: [any Filter] = [GaussianBlur(sigma: Double.random(in: 0.3...5, using: &rng))]
        if rng.next() % 2 == 0 {
            filters.append(MotionBlur(radius: Double.random(in: 0...6, using: &rng), angle: 30, samples: nil))
        }
        if rng.next() % 3 == 0 { filters.append(TintFilter(style: FrostStyle.allCases[Int(rng.next() % 3)])) }
        // Now and then one filter placed in regions of its own.
        if rng.next() % 3 == 0 {
            let i = Int(rng.next() % UInt64(filters.count))
            let own = randomRegionMask(width: 40, height: 50, seed: rng.next())
            filters[i] = RegionFilter.placing(filters[i], in: own)
        }
        let edges: [EdgeRule] = [.clamp, .mirror, .transparent]
        return FilterChain(
            filters: filters, edge: edges[Int(rng.next() % 3)], colour: ColourMode.allCases[Int(rng.next() % 2)],
            regions: regions)
    }

    /// A filter placed in regions of its own blends its output with its input, as the
    /// chain cut there would: the gaussian in the mask, then the tint everywhere, is the
    /// gaussian's chain with the mask as its regions followed by the tint's chain, bit for bit,
    /// whatever the tiles.
    @Test func aFiltersOwnRegionsBlendItsOutputWithItsInputAsTheChainCutThere() async {
        await propertyCheck(count: 150, input: Gen.int(in: 1...40), Gen.int(in: 1...40), Gen.int(in: 0...12), Gen.uint64()) {
            width, height, tile, seed in
            let source = TestImages.random(width: width, height: height, seed: seed, opaque: seed % 2 == 0)
            let mask = randomRegionMask(width: width, height: height, seed: seed &+ 3)
            let gaussian = GaussianBlur(sigma: Double(seed % 40) / 10 + 0.3), tint = TintFilter(style: .dark)
            let executor = ThreadedTileExecutor(threads: 2)
            let placed = FilterChain(filters: [RegionFilter.placing(gaussian, in: mask), tint])
            let whole = Renderer(chain: placed, tileSize: tile, executor: executor).render(source)
            let first = Renderer(chain: FilterChain(filters: [gaussian], regions: mask), tileSize: 0, executor: executor).render(source)
            let cut = Renderer(chain: FilterChain(filters: [tint]), tileSize: 0, executor: executor).render(first)
            #expect(whole.isBitIdentical(to: cut), "\(width)x\(height), \(mask), tile \(tile): \(whole.firstDifference(from: cut).map { "\($0)" } ?? "")")
            #expect(placed.filters[0].spec.regions == mask && placed.reach(in: Rect(width: width, height: height)) == gaussian.reach + tint.reach)
        }
    }

    @Test func outsideIsTheSourceInsideTheFilterAndOnTheFeatherTheBlend() async {
        await propertyCheck(count: 150, input: Gen.int(in: 1...40), Gen.int(in: 1...40), Gen.int(in: 0...12), Gen.uint64()) {
            width, height, tile, seed in
            let source = TestImages.random(width: width, height: height, seed: seed, opaque: seed % 2 == 0)
            let mask = randomRegionMask(width: width, height: height, seed: seed &+ 7)
            let regional = Self.chain(seed: seed, regions: mask)
            let everywhere = FilterChain(filters: regional.filters, edge: regional.edge, colour: regional.colour)
            let executor = ThreadedTileExecutor(threads: 2)
            let filtered = Renderer(chain: everywhere, tileSize: 0, executor: executor).render(source)
            let out = Renderer(chain: regional, tileSize: tile, executor: executor).render(source)
            let n = out.channels
            for y in 0..<height {
                for x in 0..<width {
                    let c = Float(mask.coverage(x: x, y: y, in: source.rect))
                    let s = source[x, y], f = filtered[x, y], o = out[x, y]
                    let expected = c == 0 ? s : c == 1 ? f : s + (f - s) * c
                    for k in 0..<n where o[k] != expected[k] && !(c > 0 && c < 1 && abs(o[k] - expected[k]) <= 1e-6) {
                        Issue.record("\(width)x\(height) tile \(tile) (\(x), \(y)) coverage \(c): \(o) is not \(expected)")
                        return
                    }
                }
            }
        }
    }

    @Test func eightBitFixedPointGaussianBlendsAtTheFilesDepth() async {
        await propertyCheck(count: 100, input: Gen.int(in: 1...40), Gen.int(in: 1...40), Gen.int(in: 0...12), Gen.uint64()) {
            width, height, tile, seed in
            let mask = randomRegionMask(width: width, height: height, seed: seed)
            let gaussian = GaussianBlur(sigma: Double(seed % 60) / 10 + 0.5)
            let regional = FilterChain(filters: [gaussian], edge: seed % 2 == 0 ? .clamp : .mirror, regions: mask)
            #expect(regional.fixedPointFilter(forSourceChannels: 3) != nil)
            let source = randomSamples(width: width, height: height, bands: 3, format: .uint8, seed: seed)
            let s = try #require(source.uint8Samples, "8-bit random samples came as \(source.layout.format)")
            let filtered = SampleBuffer<UInt8>(rect: source.rect, channels: 3)
            gaussian.render(tile: source.rect, source: s, image: source.rect, edge: regional.edge, into: filtered)
            let out = AnyPixels.uninitialized(source.rect, channels: 3, format: .uint8)
            Renderer(chain: regional, tileSize: tile, executor: ThreadedTileExecutor(threads: 1)).render(
                source.rect, from: source, image: source.rect, into: out, background: .zero)
            let o = try #require(out.uint8Samples, "an 8-bit output came as \(out.layout.format)")
            for y in 0..<height {
                for x in 0..<width {
                    let c = mask.coverage(x: x, y: y, in: source.rect)
                    for k in 0..<3 {
                        let sv = Double(s[x, y][k]), fv = Double(filtered[x, y][k]), ov = Double(o[x, y][k])
                        let ok = c == 0 ? ov == sv : c == 1 ? ov == fv : abs(ov - (sv + (fv - sv) * c)) <= 1
                        if !ok {
                            Issue.record("\(width)x\(height) tile \(tile) (\(x), \(y)) coverage \(c): \(ov), source \(sv), filtered \(fv)")
                            return
                        }
                    }
                }
            }
        }
    }

    @Test func regionsRenderTheSameBitsInAnyTilesAndBandsAtEveryDepth() async {
        await propertyCheck(
            count: 150, input: Gen.int(in: 1...40), Gen.int(in: 1...50), Gen.int(in: 1...20), Gen.int(in: 0...16),
            Gen.int(in: 1...3), Gen.uint64()
        ) { width, height, bandHeight, tile, threads, seed in
            var mask = randomRegionMask(width: width, height: height, seed: seed)
            // Now and then only the regions' box (`output: region`), blended or a cutout.
            if !mask.invert, seed % 3 == 1 { mask.extent = seed % 2 == 0 ? .box : .cutout }
            if mask.extent != .image, mask.box(in: Rect(width: width, height: height)).isEmpty { return }
            // Now and then the lone gaussian over 8-bit RGB that renders in fixed point.
            let fixedPoint = seed % 4 == 0
            let chain = fixedPoint
                ? FilterChain(filters: [GaussianBlur(sigma: Double(seed % 50) / 10 + 0.4)], regions: mask)
                : Self.chain(seed: seed, regions: mask)
            let format: SampleFormat = fixedPoint ? .uint8 : [.uint8, .uint16, .float32][Int(seed % 3)]
            let source: AnyPixels = format == .float32
                ? .float32(TestImages.random(width: width, height: height, seed: seed, opaque: seed % 5 == 0))
                : randomSamples(width: width, height: height, bands: fixedPoint || seed % 5 == 0 ? 3 : 4, format: format, seed: seed)
            let layout = SampleLayout(format: format, channels: chain.channels(forSource: source.channels))
            let output = chain.outputRect(forImage: source.rect)
            let whole = AnyPixels.uninitialized(output, layout)
            Renderer(chain: chain, tileSize: 0, executor: ThreadedTileExecutor(threads: 1)).render(
                output, from: source, image: source.rect, into: whole, background: SIMD3(0.5, 0.25, 1))
            let banded = try! BandInvarianceTests.renderedInBands(
                source, chain: chain, tile: tile, threads: threads, bandHeight: bandHeight, depth: Int(seed % 3) + 1,
                inFlight: Int(seed % 5 / 3) + 1, output: layout, background: SIMD3(0.5, 0.25, 1))
            if let y = BandInvarianceTests.firstDifferentRow(banded, whole) {
                Issue.record(
                    "\(width)x\(height)x\(source.channels) \(format), \(mask), bands of \(bandHeight), tile \(tile): first difference in row \(y)")
            }
        }
    }

    @Test func theTintIsDrawnOverTheFilteredRegionOnly() {
        let source = TestImages.random(width: 24, height: 16, seed: 5, opaque: true)
        let region = Region(x: .pixels(4), y: .pixels(4), width: .pixels(10), height: .pixels(8), cornerRadius: 3)
        let blur = GaussianBlur(sigma: 2)
        let tinted = FilterChain(
            filters: [blur, TintFilter(colour: RGBAColour("#ffffff")!, alpha: 0.3)], regions: RegionMask(regions: [region]))
        let executor = ThreadedTileExecutor(threads: 1)
        let out = Renderer(chain: tinted, tileSize: 5, executor: executor).render(source)
        let blurred = Renderer(chain: FilterChain(filters: [blur]), tileSize: 0, executor: executor).render(source)
        for y in 0..<16 {
            for x in 0..<24 {
                let c = RegionMask(regions: [region]).coverage(x: x, y: y, in: source.rect)
                if c == 0 {
                    #expect(out[x, y] == source[x, y], "(\(x), \(y))")
                } else {
                    // White at 0.3 drawn source-over the blur, premultiplied, in Float.
                    let f = blurred[x, y], alpha: Float = 0.3
                    for k in 0..<3 { #expect(out[x, y][k] == alpha + (1 - alpha) * f[k], "(\(x), \(y))") }
                }
            }
        }
    }

    @Test func theTintsPresetsAreFrostsColours() {
        for style in FrostStyle.allCases {
            #expect(TintFilter(style: style).tint == style.tint)
            #expect(TintFilter(TintFilter(style: style).spec).tint == style.tint)
        }
        #expect(TintFilter(colour: RGBAColour("#336699")!).tint == SIMD4(0.2, 0.4, 0.6, 1))
        #expect(TintFilter(colour: RGBAColour("#33669980")!).tint.w == 128.0 / 255)
        #expect(TintFilter(style: .dark, alpha: 0.5).tint == SIMD4(0.11, 0.11, 0.11, 0.5))
        let spec = TintFilter(colour: RGBAColour("#102030")!, alpha: 0.25).spec
        #expect(TintFilter(spec).tint == TintFilter(colour: RGBAColour("#102030")!, alpha: 0.25).tint)
        // A tint is pointwise.
        #expect(FilterChain(filters: [TintFilter()]).reach(in: Rect(width: 8, height: 8)) == .zero)
    }
}
