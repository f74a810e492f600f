import BlurfarmCore
import BlurfarmEngine
import BlurfarmKernels
import BlurfarmTestSupport
import PropertyBased
import Synchronization
import Testing

/// Band invariance: an image rendered band by band (``BandedRender``: decoded in bands on a
/// thread of its own, each band's tiles rendered from a window of the source) is the whole
/// image's render, bit for bit, whatever the band height, tile size, depth and threads.
@Suite struct BandInvarianceTests {
    /// A chain of a gaussian and a motion blur with random parameters, edge rule and colour mode.
    static func twoFilters(seed: UInt64, edge: EdgeRule) -> FilterChain {
        var rng = SplitMix(seed: seed)
        let gaussian = GaussianBlur(sigma: Double.random(in: 0.1...6, using: &rng))
        let motion = MotionBlur(
            radius: Double.random(in: 0...9, using: &rng), angle: Double.random(in: -180...180, using: &rng),
            samples: rng.next() % 2 == 0 ? nil : Int(rng.next() % 9) + 1)
        let filters: [any Filter] = rng.next() % 2 == 0 ? [gaussian, motion] : [motion, gaussian]
        return FilterChain(filters: filters, edge: edge, colour: ColourMode.allCases[Int(rng.next() % 2)])
    }

    /// `source` rendered by a ``BandedRender`` whose reads copy rows from `source`, its output
    /// bands (in `output`'s layout: nil, `Float32`) gathered into one buffer; also checks that
    /// the rows are read once, in order.
    static func renderedInBands(
        _ source: AnyPixels, chain: FilterChain, tile: Int, threads: Int, bandHeight: Int, depth: Int,
        inFlight: Int = 1, output layout: SampleLayout? = nil, background: SIMD3<Float> = .zero, decodeAhead: Bool = true
    ) throws -> AnyPixels {
        let banded = BandedRender(chains: [chain], tileSize: tile, image: source.rect, bandHeight: bandHeight, depth: depth)
        let layout = layout ?? SampleLayout(format: .float32, channels: chain.channels(forSource: source.channels))
        let output = AnyPixels.uninitialized(banded.output, channels: layout.channels, format: layout.format)
        let nextRow = Mutex(0)
        var written = banded.output.y
        try banded.run(
            source: source.layout, outputs: [layout],
            bandsInFlight: inFlight, decodeAhead: decodeAhead,
            read: { band in
                nextRow.withLock { row in
                    #expect(band.rect.y == row && band.rect.x == 0 && band.rect.width == source.rect.width)
                    row = band.rect.maxY
                }
                band.copy(band.rect, from: source)
            }, render: banded.rendering(with: ThreadedTileExecutor(threads: threads), backgrounds: [background])
        ) { _, band in
            #expect(band.rect.y == written && band.rect.width == banded.output.width)
            written = band.rect.maxY
            output.copy(band.rect, from: band)
        }
        #expect(written == banded.output.maxY)
        return output
    }

    /// ``renderedInBands(_:chain:tile:threads:bandHeight:depth:inFlight:output:background:)`` of `Float32` pixels.
    static func renderedInBands(
        _ source: PixelBuffer, chain: FilterChain, tile: Int, threads: Int, bandHeight: Int, depth: Int,
        inFlight: Int = 1, decodeAhead: Bool = true
    ) throws -> PixelBuffer {
        let banded = try renderedInBands(
            .float32(source), chain: chain, tile: tile, threads: threads, bandHeight: bandHeight, depth: depth,
            inFlight: inFlight, decodeAhead: decodeAhead)
        guard case .float32(let pixels) = banded else { preconditionFailure("Float32 in, Float32 out") }
        return pixels
    }

    /// The first row, top to bottom, whose bytes differ between `a` and `b` (the same
    /// rectangle, channels and format), or nil.
    static func firstDifferentRow(_ a: AnyPixels, _ b: AnyPixels) -> Int? {
        precondition(a.rect == b.rect && a.channels == b.channels && a.format == b.format)
        var rowsOfA: [[UInt8]] = []
        a.forEachRow(in: a.rect) { row, bytes in rowsOfA.append(Array(UnsafeRawBufferPointer(start: row, count: bytes))) }
        var y = a.rect.y, found: Int?
        b.forEachRow(in: b.rect) { row, bytes in
            if found == nil, rowsOfA[y - a.rect.y] != Array(UnsafeRawBufferPointer(start: row, count: bytes)) { found = y }
            y += 1
        }
        return found
    }

    @Test func bandedEqualsWholeBitForBit() async {
        await propertyCheck(
            count: 200, input: Gen.int(in: 1...48), Gen.int(in: 1...60), Gen.int(in: 1...20), Gen.int(in: 0...16),
            Gen.int(in: 1...3), Gen.uint64()
        ) { width, height, bandHeight, tile, threads, seed in
            let edge = EdgeRule.allCases[Int(seed % UInt64(EdgeRule.allCases.count))]
            let image = TestImages.random(width: width, height: height, seed: seed, opaque: seed % 3 == 1)
            let chain = Self.twoFilters(seed: seed, edge: edge)
            let whole = Renderer(chain: chain, tileSize: 0, executor: ThreadedTileExecutor(threads: 1)).render(image)
            let depth = Int(seed % 3) + 1
            let inFlight = Int(seed % 5 / 3) + 1
            // Decoded ahead on a thread of its own, or on the calling thread (a worker's).
            let ahead = seed % 7 < 4
            let banded = try! Self.renderedInBands(
                image, chain: chain, tile: tile, threads: threads, bandHeight: bandHeight, depth: depth, inFlight: inFlight,
                decodeAhead: ahead)
            #expect(banded.rect == whole.rect)
            if let d = banded.firstDifference(from: whole) {
                let chainWords = "\(chain.filters.map(\.spec)) \(chain.edge) \(chain.colour)"
                Issue.record(
                    "\(width)x\(height)x\(image.channels), bands of \(bandHeight), tile \(tile), depth \(depth), ahead \(ahead), chain \(chainWords): first difference at (\(d.x), \(d.y))")
            }
        }
    }

    @Test func bandsAtTheFilesDepthEqualTheWholeRenderStoredAsTheEncoderStoresIt() async {
        // Windows of 8- or 16-bit samples, converted a tile at a time; output bands of 8- or
        // 16-bit samples, 3 bands (composited over a background) or 4: the same bytes as the
        // whole image converted to floats, rendered, and converted back in one piece.
        await propertyCheck(
            count: 150, input: Gen.int(in: 1...40), Gen.int(in: 1...50), Gen.int(in: 1...20), Gen.int(in: 0...16),
            Gen.int(in: 1...3), Gen.uint64()
        ) { width, height, bandHeight, tile, threads, seed in
            let edge = EdgeRule.allCases[Int(seed % UInt64(EdgeRule.allCases.count))]
            let sourceFormat: SampleFormat = seed % 2 == 0 ? .uint8 : .uint16
            let outputFormat: SampleFormat = seed % 5 < 3 ? sourceFormat : (sourceFormat == .uint8 ? .uint16 : .uint8)
            let source = randomSamples(
                width: width, height: height, bands: seed % 3 == 1 ? 3 : 4, format: sourceFormat, seed: seed)
            let chain = Self.twoFilters(seed: seed, edge: edge)
            let bands = seed % 7 < 4 ? chain.channels(forSource: source.channels) : 3
            let background = SIMD3<Float>(Float(seed % 11) / 10, 0.25, 1)
            let wholeFloats = Renderer(chain: chain, tileSize: 0, executor: ThreadedTileExecutor(threads: 1))
                .render(source.floats(in: source.rect))
            let whole = AnyPixels.uninitialized(wholeFloats.rect, channels: bands, format: outputFormat)
            whole.store(wholeFloats, in: wholeFloats.rect, background: background)
            let banded = try! Self.renderedInBands(
                source, chain: chain, tile: tile, threads: threads, bandHeight: bandHeight, depth: Int(seed % 3) + 1,
                inFlight: Int(seed % 5 / 3) + 1, output: SampleLayout(format: outputFormat, channels: bands),
                background: background)
            #expect(banded.rect == whole.rect)
            if banded.rect == whole.rect, let y = Self.firstDifferentRow(banded, whole) {
                let what = "\(width)x\(height)x\(source.channels) \(sourceFormat) to \(bands) \(outputFormat)"
                let chainWords = "\(chain.filters.map(\.spec)) \(chain.edge) \(chain.colour)"
                Issue.record(
                    "\(what), bands of \(bandHeight), tile \(tile), chain \(chainWords): first difference in row \(y)")
            }
        }
    }

    /// A redaction (random style, random regions: some beyond the image, some in percent, some
    /// inverted) streamed at the file's depth, the tiles no region reaches copied as samples and
    /// the others converted with each box they meet whole in their window: the same bytes as
    /// the whole image converted to floats, rendered, and stored in one piece, in any bands,
    /// tiles and threads (how `--redact faces` photos are made since they stream).
    @Test func aRedactionStreamedInBandsIsTheWholeRenderStoredAsTheEncoderStoresIt() async {
        await propertyCheck(
            count: 150, input: Gen.int(in: 1...48), Gen.int(in: 1...60), Gen.int(in: 1...20), Gen.int(in: 0...16),
            Gen.int(in: 1...3), Gen.uint64()
        ) { width, height, bandHeight, tile, threads, seed in
            var rng = SplitMix(seed: seed)
            let style = RedactFilter.Style.allCases[Int(rng.next() % 3)]
            let redact = RedactFilter(style: style, cells: Int(rng.next() % 7) + 2, colour: RGBAColour("#20406080")!)
            let edge: EdgeRule = rng.next() % 2 == 0 ? .clamp : .mirror
            let chain = FilterChain(
                filters: [redact], edge: edge, colour: ColourMode.allCases[Int(rng.next() % 2)],
                regions: randomRegionMask(width: width, height: height, seed: seed))
            let format: SampleFormat = rng.next() % 4 == 0 ? .uint16 : .uint8
            let source = randomSamples(width: width, height: height, bands: rng.next() % 3 == 0 ? 4 : 3, format: format, seed: seed)
            let bands = chain.channels(forSource: source.channels)
            let wholeFloats = Renderer(chain: chain, tileSize: 0, executor: ThreadedTileExecutor(threads: 1))
                .render(source.floats(in: source.rect))
            let whole = AnyPixels.uninitialized(wholeFloats.rect, channels: bands, format: format)
            whole.store(wholeFloats, in: wholeFloats.rect, background: .zero)
            let banded = try! Self.renderedInBands(
                source, chain: chain, tile: tile, threads: threads, bandHeight: bandHeight, depth: Int(seed % 3) + 1,
                inFlight: Int(seed % 5 / 3) + 1, output: SampleLayout(format: format, channels: bands))
            if let y = Self.firstDifferentRow(banded, whole) {
                Issue.record(
                    "\(width)x\(height)x\(source.channels) \(format), \(redact.spec) in \(chain.regions), bands of \(bandHeight), tile \(tile): first difference in row \(y)")
            }
        }
    }

    /// A lone gaussian over 8-bit opaque RGB or RGBA, or a lone motion blur or frost over 8-bit
    /// opaque RGB, under `clamp` or `mirror`, renders the file's samples directly
    /// (``FilterChain/fixedPointFilter(forSourceChannels:)``; RGBA in fixed point where a
    /// pixel's window is opaque): in any bands, tiles and threads, the same bits as the kernel
    /// over the whole image.
    @Test func aLoneFixedPointFilterOverEightBitSamplesIsTheKernelInAnyBands() async {
        await propertyCheck(
            count: 120, input: Gen.int(in: 1...60), Gen.int(in: 1...50), Gen.int(in: 1...20), Gen.int(in: 0...16),
            Gen.int(in: 1...3), Gen.uint64()
        ) { width, height, bandHeight, tile, threads, seed in
            var rng = SplitMix(seed: seed)
            let gaussian = GaussianBlur(sigma: Double.random(in: 0.3...24, using: &rng))
            let edge: EdgeRule = rng.next() % 2 == 0 ? .clamp : .mirror
            let bands = rng.next() % 2 == 0 ? 3 : 4
            let filter: any SampleRenderingFilter =
                switch bands == 3 ? rng.next() % 3 : 0 {
                case 1: MotionBlur(radius: Double.random(in: 0...15, using: &rng), angle: Double.random(in: -180...180, using: &rng))
                case 2: FrostBlur(style: .dark, sigma: gaussian.mask.sigma)
                default: gaussian
                }
            let chain = FilterChain(filters: [filter], edge: edge, colour: .gamma)
            #expect(chain.fixedPointFilter(forSourceChannels: bands) != nil, "\(filter.spec)")
            let source =
                bands == 3
                ? randomSamples(width: width, height: height, bands: 3, format: .uint8, seed: seed)
                : randomSpottedRGBA(width: width, height: height, spots: Int(rng.next() % 4), seed: seed)
            let samples = try #require(source.uint8Samples, "8-bit random samples came as \(source.layout.format)")
            let whole = SampleBuffer<UInt8>(rect: source.rect, channels: bands)
            filter.render(tile: source.rect, source: samples, image: source.rect, edge: edge, into: whole)
            let banded = try! Self.renderedInBands(
                source, chain: chain, tile: tile, threads: threads, bandHeight: bandHeight, depth: Int(seed % 3) + 1,
                inFlight: Int(seed % 5 / 3) + 1, output: SampleLayout(format: .uint8, channels: bands))
            if let y = Self.firstDifferentRow(banded, .uint8(whole)) {
                Issue.record(
                    "\(width)x\(height)x\(bands), \(filter.spec), \(edge), bands of \(bandHeight), tile \(tile): first difference in row \(y)")
            }
        }
    }

    /// The fixed-point route is taken by a chain of one gaussian (with a fixed-point mask),
    /// colour mode `gamma`, edge `clamp` or `mirror`, over 3 or 4 channels (RGBA under no
    /// region), or of one motion blur or frost over 3, and by no other chain.
    @Test func onlyALoneSampleRenderingFilterUnderClampOrMirrorTakesTheFixedPointRoute() {
        let gaussian = GaussianBlur(sigma: 3)
        #expect(FilterChain(filters: [gaussian], edge: .clamp).fixedPointFilter(forSourceChannels: 3) != nil)
        #expect(FilterChain(filters: [gaussian], edge: .mirror).fixedPointFilter(forSourceChannels: 3) != nil)
        #expect(FilterChain(filters: [gaussian], edge: .clamp).fixedPointFilter(forSourceChannels: 4) != nil)
        let regions = RegionMask(regions: [Region(x: .pixels(2), y: .pixels(2), width: .pixels(5), height: .pixels(5))])
        #expect(FilterChain(filters: [gaussian], edge: .clamp, regions: regions).fixedPointFilter(forSourceChannels: 3) != nil)
        #expect(FilterChain(filters: [gaussian], edge: .clamp, regions: regions).fixedPointFilter(forSourceChannels: 4) == nil)
        #expect(FilterChain(filters: [gaussian], edge: .transparent).fixedPointFilter(forSourceChannels: 3) == nil)
        #expect(FilterChain(filters: [gaussian], edge: .grow).fixedPointFilter(forSourceChannels: 3) == nil)
        #expect(FilterChain(filters: [gaussian], edge: .clamp, colour: .linear).fixedPointFilter(forSourceChannels: 3) == nil)
        #expect(FilterChain(filters: [gaussian, gaussian], edge: .clamp).fixedPointFilter(forSourceChannels: 3) == nil)
        #expect(
            FilterChain(filters: [MotionBlur(radius: 3, angle: 0, samples: nil)], edge: .clamp)
                .fixedPointFilter(forSourceChannels: 3) != nil)
        #expect(
            FilterChain(filters: [MotionBlur(radius: 3, angle: 0, samples: nil)], edge: .mirror)
                .fixedPointFilter(forSourceChannels: 4) == nil)
        #expect(
            FilterChain(filters: [MotionBlur(radius: 3, angle: 0, samples: nil)], edge: .transparent)
                .fixedPointFilter(forSourceChannels: 3) == nil)
        #expect(FilterChain(filters: [FrostBlur()], edge: .clamp).fixedPointFilter(forSourceChannels: 3) != nil)
        #expect(FilterChain(filters: [FrostBlur()], edge: .grow).fixedPointFilter(forSourceChannels: 3) == nil)
        // Wide sigmas have a fixed-point mask too (32-bit sums).
        #expect(FilterChain(filters: [GaussianBlur(sigma: 32)], edge: .clamp).fixedPointFilter(forSourceChannels: 3) != nil)
        #expect(FilterChain(filters: [GaussianBlur(sigma: 64)], edge: .mirror).fixedPointFilter(forSourceChannels: 3) != nil)
    }

    @Test(arguments: EdgeRule.allCases)
    func everyEdgeRuleAtTheTopAndBottomOfATallImage(edge: EdgeRule) throws {
        // Reaches longer than a band, bands of one row: windows span many bands.
        let image = TestImages.random(width: 9, height: 70, seed: 3, opaque: false)
        let chain = FilterChain(filters: [GaussianBlur(sigma: 4), MotionBlur(radius: 7, angle: 90, samples: nil)], edge: edge)
        let whole = Renderer(chain: chain, tileSize: 0, executor: ThreadedTileExecutor(threads: 1)).render(image)
        for bandHeight in [1, 5, 64, 200] {
            let banded = try Self.renderedInBands(image, chain: chain, tile: 4, threads: 2, bandHeight: bandHeight, depth: 1)
            #expect(banded.isBitIdentical(to: whole), "bands of \(bandHeight)")
        }
    }

    @Test(arguments: [true, false])
    func aReadFailureStopsTheRenderAndIsRethrown(decodeAhead: Bool) {
        struct Broken: Error {}
        let image = TestImages.random(width: 16, height: 64, seed: 1, opaque: true)
        let banded = BandedRender(
            chains: [FilterChain(filters: [GaussianBlur(sigma: 1)])], tileSize: 8, image: image.rect, bandHeight: 8)
        let reads = Mutex(0)
        var written = 0
        #expect(throws: Broken.self) {
            try banded.run(
                source: SampleLayout(format: .float32, channels: 3), bandsInFlight: 2, decodeAhead: decodeAhead,
                read: { band in
                    let count = reads.withLock { $0 += 1; return $0 }
                    if count == 3 { throw Broken() }
                    band.copy(band.rect, from: .float32(image))
                }, render: banded.rendering(with: ThreadedTileExecutor(threads: 2))
            ) { _, band in
                written = band.rect.maxY
            }
        }
        #expect(written < 64)
        #expect(reads.withLock { $0 } == 3, "no read after the failure")
    }
}
