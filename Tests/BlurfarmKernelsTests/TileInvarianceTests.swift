import BlurfarmCore
import BlurfarmEngine
import BlurfarmKernels
import BlurfarmPlugins
import BlurfarmTestSupport
import PropertyBased
import Synchronization
import Testing

/// The tile-invariance guarantee: for any tile size and thread count, tiled output equals
/// the untiled output bit for bit, for the built-in filters and the example plugins alike.
@Suite struct TileInvarianceTests {
    /// The example plugins `swift build` built beside the executable, loaded to run in this
    /// process (the farm runs them in workers; the arithmetic is the same).
    static let plugins = PluginLoader(folders: [BuiltExecutable.url.deletingLastPathComponent().path])

    static func plugin(_ name: String, _ arguments: [String: ParameterValue]) -> any Filter {
        let plugin = try! plugins.load(named: name)
        let spec = try! plugin.descriptor.resolve(arguments.map { (name: $0.key, value: $0.value) }).get()
        return PluginFilter(plugin: plugin, spec: spec, mayRun: true)
    }

    /// A random chain of up to three gaussian, motion, vignette and zoom filters.
    static func randomChain(seed: UInt64) -> FilterChain {
        var rng = SplitMix(seed: seed)
        var filters: [any Filter] = []
        for _ in 0..<Int(rng.next() % 4) {
            let kind = rng.next() % 4
            if kind == 2 {
                filters.append(plugin("vignette", [
                    "strength": .number(Double.random(in: 0...1, using: &rng)),
                    "radius": .number(Double.random(in: 0...1, using: &rng)),
                ]))
            } else if kind == 3 {
                filters.append(plugin("zoom", [
                    "amount": .number(Double.random(in: 0...50, using: &rng)),
                    "centre-x": .number(Double.random(in: 0...1, using: &rng)),
                    "centre-y": .number(Double.random(in: 0...1, using: &rng)),
                ]))
            } else if kind == 0 {
                filters.append(GaussianBlur(sigma: Double.random(in: 0.1...6, using: &rng)))
            } else {
                let samples: Int? = rng.next() % 2 == 0 ? nil : Int(rng.next() % 9) + 1
                filters.append(MotionBlur(
                    radius: Double.random(in: 0...9, using: &rng), angle: Double.random(in: -180...180, using: &rng),
                    samples: samples))
            }
        }
        let edge = EdgeRule.allCases[Int(rng.next() % 4)]
        let colour = ColourMode.allCases[Int(rng.next() % 2)]
        return FilterChain(filters: filters, edge: edge, colour: colour)
    }

    /// `image` rendered as ``Renderer/render(_:)`` renders it (the same tiles on the same
    /// threads), except that a filter's failure (a plugin's) is returned, tile and message,
    /// instead of trapping: a failing random case then says which case it was.
    static func rendered(
        _ image: PixelBuffer, chain: FilterChain, tileSize: Int, threads: Int
    ) -> (pixels: PixelBuffer, failures: [String]) {
        let renderer = Renderer(chain: chain, tileSize: tileSize, executor: ThreadedTileExecutor(threads: threads))
        let output = PixelBuffer(rect: chain.outputRect(forImage: image.rect), channels: chain.channels(forSource: image.channels))
        let failures = Mutex<[String]>([])
        renderer.executor.run(tiles: renderer.tiles(forImage: image.rect)) { tile in
            do throws(FilterFailure) {
                try chain.render(tile: tile, source: image, into: output)
            } catch {
                failures.withLock { $0.append("tile \(tile): \(error.message)") }
            }
        }
        return (output, failures.withLock { $0 })
    }

    @Test func tiledEqualsUntiledBitForBit() async {
        await propertyCheck(
            count: 150, input: Gen.int(in: 1...48), Gen.int(in: 1...40), Gen.int(in: 1...60), Gen.int(in: 1...3),
            Gen.uint64()
        ) { width, height, tile, threads, seed in
            // Odd seeds make opaque (3-channel) images, even ones premultiplied RGBA.
            let image = TestImages.random(width: width, height: height, seed: seed, opaque: seed % 2 == 1)
            let chain = Self.randomChain(seed: seed)
            let what = "\(width)x\(height)x\(image.channels), tile \(tile), chain \(chain.filters.map(\.spec)) \(chain.edge) \(chain.colour)"
            let (untiled, untiledFailures) = Self.rendered(image, chain: chain, tileSize: 0, threads: 1)
            let (tiled, tiledFailures) = Self.rendered(image, chain: chain, tileSize: tile, threads: threads)
            for failure in untiledFailures + tiledFailures { Issue.record("\(what): \(failure)") }
            #expect(tiled.rect == untiled.rect)
            if untiledFailures.isEmpty, tiledFailures.isEmpty, let d = tiled.firstDifference(from: untiled) {
                Issue.record("\(what): first difference at (\(d.x), \(d.y))")
            }
        }
    }

    /// Found by the property above (a CI run, 2026-11-23): under `grow`, the second `zoom`'s
    /// tiles lie far outside a 1 × 3 image, and `zoom` reads from a tile toward the image's
    /// centre, farther than the tile's or the image's size: the plugin rectangle bound takes
    /// the image in, not only the tile.
    @Test func aZoomReadingTowardATinyImageFromFarOutsideItIsWithinBounds() {
        let image = TestImages.random(width: 1, height: 3, seed: 1, opaque: true)
        let chain = FilterChain(
            filters: [
                Self.plugin("zoom", ["amount": .number(43.21834165838496), "centre-x": .number(0.2909601943115462), "centre-y": .number(0.9817056941808072)]),
                GaussianBlur(sigma: 3.1699289195273455),
                Self.plugin("zoom", ["amount": .number(47.82766187564602), "centre-x": .number(0.08674584579292721), "centre-y": .number(0.9360429307427112)]),
            ],
            edge: .grow, colour: .linear)
        #expect(chain.problem(forImage: image.rect) == nil)
        let (untiled, untiledFailures) = Self.rendered(image, chain: chain, tileSize: 0, threads: 1)
        let (tiled, tiledFailures) = Self.rendered(image, chain: chain, tileSize: 1, threads: 2)
        #expect(untiledFailures.isEmpty && tiledFailures.isEmpty, "\(untiledFailures.prefix(1)) \(tiledFailures.prefix(1))")
        #expect(tiled.firstDifference(from: untiled) == nil)
    }

    @Test(arguments: [(1, 1), (1, 17), (17, 1), (2, 2)])
    func degenerateImagesAreTileInvariant(width: Int, height: Int) {
        for opaque in [false, true] {
        let image = TestImages.random(width: width, height: height, seed: 99, opaque: opaque)
        for edge in EdgeRule.allCases {
            let chain = FilterChain(
                filters: [
                    GaussianBlur(sigma: 2.5), Self.plugin("zoom", ["amount": .number(45)]), MotionBlur(radius: 4, angle: 20),
                    Self.plugin("vignette", ["strength": .number(0.9)]),
                ], edge: edge, colour: .linear)
            let untiled = Renderer(chain: chain, tileSize: 0, executor: ThreadedTileExecutor(threads: 1)).render(image)
            for tile in [1, 2, 3, 100] {
                let tiled = Renderer(chain: chain, tileSize: tile, executor: ThreadedTileExecutor(threads: 2)).render(image)
                #expect(tiled.isBitIdentical(to: untiled), "\(width)x\(height) opaque \(opaque) tile \(tile) edge \(edge)")
            }
        }
        }
    }

    @Test func tileGridCoversTheOutputExactlyOnce() async {
        await propertyCheck(count: 200, input: Gen.int(in: 0...70), Gen.int(in: 0...70), Gen.int(in: 0...30)) { w, h, t in
            let bounds = Rect(x: -3, y: 5, width: w, height: h)
            var covered = [Int](repeating: 0, count: w * h)
            for tile in TileGrid(bounds: bounds, tileSize: t).tiles {
                #expect(bounds.contains(tile) && !tile.isEmpty)
                for y in tile.y..<tile.maxY { for x in tile.x..<tile.maxX { covered[(y - 5) * w + x + 3] += 1 } }
            }
            #expect(covered.allSatisfy { $0 == 1 })
        }
    }
}
