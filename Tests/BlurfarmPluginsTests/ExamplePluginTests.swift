import BlurfarmCore
import BlurfarmEngine
import BlurfarmKernels
import BlurfarmPlugins
import BlurfarmTestSupport
import Testing

/// The example plugins against plain reference code written from their definitions in
/// docs/plugins.md, run in this process through the same chain the workers use.
@Suite struct ExamplePluginTests {
    static func filter(_ name: String, _ arguments: [String: ParameterValue]) throws -> any Filter {
        let plugin = try TestPlugins.examples.load(named: name)
        let spec = try plugin.descriptor.resolve(arguments.map { (name: $0.key, value: $0.value) }).get()
        return PluginFilter(plugin: plugin, spec: spec, mayRun: true)
    }

    /// A seeded random image: premultiplied RGBA, or opaque RGB with 3 channels.
    static func image(width: Int, height: Int, seed: UInt64, channels: Int = 4) -> PixelBuffer {
        var rng = SplitMix(seed: seed)
        let image = PixelBuffer(rect: Rect(width: width, height: height), channels: channels)
        for y in 0..<height {
            for x in 0..<width {
                let alpha: Float = channels == 3 ? 1 : Float(rng.next() % 256) / 255
                image[x, y] = SIMD4(
                    Float(rng.next() % 256) / 255 * alpha, Float(rng.next() % 256) / 255 * alpha,
                    Float(rng.next() % 256) / 255 * alpha, alpha)
            }
        }
        return image
    }

    static func render(_ filters: [any Filter], _ image: PixelBuffer, edge: EdgeRule = .clamp, tile: Int = 7)
        -> PixelBuffer
    {
        Renderer(chain: FilterChain(filters: filters, edge: edge), tileSize: tile, executor: ThreadedTileExecutor(threads: 2))
            .render(image)
    }

    @Test(arguments: [(0.7, 0.4), (1.0, 0.0), (0.3, 1.0)])
    func vignetteMatchesItsDefinition(strength: Double, radius: Double) throws {
        let image = Self.image(width: 37, height: 23, seed: 5)
        let output = Self.render([try Self.filter("vignette", ["strength": .number(strength), "radius": .number(radius)])], image)
        let halfDiagonal = (37.0 * 37.0 + 23.0 * 23.0).squareRoot() / 2
        for y in 0..<23 {
            for x in 0..<37 {
                let dx = Double(x) + 0.5 - 18.5, dy = Double(y) + 0.5 - 11.5
                let r = (dx * dx + dy * dy).squareRoot() / halfDiagonal
                let t = min(1, max(0, radius < 1 ? (r - radius) / (1 - radius) : 0))
                let factor = Float(1 - strength * t * t)
                let p = image[x, y]
                let expected = SIMD4(p[0] * factor, p[1] * factor, p[2] * factor, p[3])
                #expect(output[x, y] == expected, "(\(x), \(y))")
            }
        }
    }

    /// An opaque image reaches a plugin as RGBA with alpha 1 and comes back as RGB.
    @Test func anOpaqueImageGivesThePluginsRGBAndKeepsTheirColour() throws {
        let opaque = Self.image(width: 19, height: 11, seed: 8, channels: 3)
        let wide = PixelBuffer(rect: opaque.rect, channels: 4)
        for y in 0..<11 { for x in 0..<19 { wide[x, y] = opaque[x, y] } }
        let filters = [try Self.filter("zoom", ["amount": .number(40)]), try Self.filter("vignette", [:])]
        let narrowOut = Self.render(filters, opaque), wideOut = Self.render(filters, wide)
        #expect(narrowOut.channels == 3)
        for y in 0..<11 {
            for x in 0..<19 {
                let a = narrowOut[x, y], b = wideOut[x, y]
                #expect(a[0] == b[0] && a[1] == b[1] && a[2] == b[2], "(\(x), \(y))")
            }
        }
    }

    /// zoom against its definition: the mean of n + 1 bilinear samples on the way to the
    /// centre, n = ceil(length of the streak), the clamp edge rule outside the image.
    @Test(arguments: [(20.0, 0.5, 0.5), (45.0, 0.1, 0.9), (0.0, 0.5, 0.5)])
    func zoomMatchesItsDefinition(amount: Double, centreX: Double, centreY: Double) throws {
        let width = 31, height = 26
        let image = Self.image(width: width, height: height, seed: 11)
        let zoom = try Self.filter("zoom", [
            "amount": .number(amount), "centre-x": .number(centreX), "centre-y": .number(centreY),
        ])
        let output = Self.render([zoom], image)
        func clamped(_ x: Int, _ y: Int) -> SIMD4<Float> { image[min(max(x, 0), width - 1), min(max(y, 0), height - 1)] }
        let cx = centreX * Double(width), cy = centreY * Double(height), a = amount / 100
        for y in 0..<height {
            for x in 0..<width {
                let px = Double(x) + 0.5, py = Double(y) + 0.5
                let dx = a * (cx - px), dy = a * (cy - py)
                let n = max(1, min(512, Int((dx * dx + dy * dy).squareRoot().rounded(.up))))
                var sum = SIMD4<Float>(repeating: 0)
                for k in 0...n {
                    let t = Double(k) / Double(n)
                    let sx = px + t * dx - 0.5, sy = py + t * dy - 0.5
                    let x0 = Int(sx.rounded(.down)), y0 = Int(sy.rounded(.down))
                    let fx = Float(sx - sx.rounded(.down)), fy = Float(sy - sy.rounded(.down))
                    let top = clamped(x0, y0) + (clamped(x0 + 1, y0) - clamped(x0, y0)) * fx
                    let bottom = clamped(x0, y0 + 1) + (clamped(x0 + 1, y0 + 1) - clamped(x0, y0 + 1)) * fx
                    sum += top + (bottom - top) * fy
                }
                let expected = sum / Float(n + 1)
                let actual: SIMD4<Float> = output[x, y]
                let difference = (0..<4).map { abs(actual[$0] - expected[$0]) }.max()!
                #expect(difference <= 1e-6, "(\(x), \(y)): \(output[x, y]) vs \(expected)")
            }
        }
        if amount == 0 { #expect(output.isBitIdentical(to: image)) }
    }

    /// The region a zoom tile reads depends on where the tile lies: a tile far from the centre
    /// reaches towards it, one at the centre barely beyond itself.
    @Test func zoomsRegionOfInterestDependsOnTheTilesPosition() throws {
        let zoom = try Self.filter("zoom", ["amount": .number(50)])
        let image = Rect(width: 200, height: 100)
        let centre = zoom.regionOfInterest(for: Rect(x: 95, y: 45, width: 10, height: 10), image: image)
        let corner = zoom.regionOfInterest(for: Rect(x: 0, y: 0, width: 10, height: 10), image: image)
        #expect(centre == Rect(x: 94, y: 44, width: 13, height: 13))
        // The corner tile's last samples lie halfway to (100, 50), at (54.75, 29.75) in pixel
        // centres: bilinear reads columns to 55 and rows to 30; one more on each side spare.
        #expect(corner == Rect(x: -1, y: -1, width: 58, height: 33))
        // The vignette reads only the pixels it writes.
        let vignette = try Self.filter("vignette", [:])
        #expect(vignette.regionOfInterest(for: Rect(x: 3, y: 4, width: 5, height: 6), image: image)
            == Rect(x: 3, y: 4, width: 5, height: 6))
    }
}
