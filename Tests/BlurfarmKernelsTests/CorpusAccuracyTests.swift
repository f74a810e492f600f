import BlurfarmCore
import BlurfarmEngine
import BlurfarmImageIO
import BlurfarmKernels
import BlurfarmTestSupport
import Foundation
import Testing

/// The kernels on real photos from the shared corpus, against the double-precision
/// definitions: at most 1 level at 8 bits and 2 levels at 16 bits.
@Suite struct CorpusAccuracyTests {
    /// A `size` × `size` crop of a corpus image, as its own image (origin 0, 0): small enough
    /// for the O(R²) reference.
    static func crop(_ file: String, x: Int, y: Int, size: Int) throws -> (PixelBuffer, Int) {
        let decoded = try ImageReader.read(Corpus.path(file))
        let region = Rect(x: x, y: y, width: size, height: size)
        let source = decoded.pixels.view(region)
        let image = PixelBuffer(rect: Rect(width: size, height: size), channels: source.channels)
        for yy in 0..<size { for xx in 0..<size { image[xx, yy] = source[x + xx, y + yy] } }
        return (image, decoded.bitDepth)
    }

    static func render(_ filter: any Filter, _ image: PixelBuffer, edge: EdgeRule) -> PixelBuffer {
        Renderer(chain: FilterChain(filters: [filter], edge: edge), tileSize: 32, executor: ThreadedTileExecutor(threads: 2))
            .render(image)
    }

    @Test(arguments: [
        ("photos/mate-GreenMeadow.jpg", 600, 400), ("photos/plasma-ColorfulCups.jpg", 1200, 700),
        ("special/deep-16bit.png", 500, 300), ("special/alpha-garbage-under-transparent.png", 560, 330),
    ])
    func gaussianOnPhotosMatchesTheDefinition(file: String, x: Int, y: Int) throws {
        let (image, depth) = try Self.crop(file, x: x, y: y, size: 80)
        for sigma in [1.3, 4.0] {
            for edge in [EdgeRule.clamp, .mirror, .transparent] {
                let output = Self.render(GaussianBlur(sigma: sigma), image, edge: edge)
                let reference = Reference.gaussian(image, sigma: sigma, edge: edge)
                let maxLevel = depth == 16 ? 65535.0 : 255.0
                let worst = Reference.maxLevelDifference(output, reference, maxLevel: maxLevel)
                #expect(
                    worst.levels <= (depth == 16 ? 2 : 1),
                    "\(file) sigma \(sigma) \(edge): \(worst.levels) levels at (\(worst.x), \(worst.y))")
            }
        }
    }

    @Test(arguments: [("photos/mate-Storm.jpg", 900, 500), ("special/deep-16bit.png", 300, 200)])
    func motionOnPhotosMatchesTheDefinition(file: String, x: Int, y: Int) throws {
        let (image, depth) = try Self.crop(file, x: x, y: y, size: 72)
        for (radius, angle) in [(9.0, 30.0), (6.5, -100.0)] {
            let output = Self.render(MotionBlur(radius: radius, angle: angle), image, edge: .clamp)
            let reference = Reference.motion(
                image, radius: radius, angle: angle, samples: MotionMask.defaultSamples(radius: radius), edge: .clamp)
            let worst = Reference.maxLevelDifference(output, reference, maxLevel: depth == 16 ? 65535 : 255)
            #expect(
                worst.levels <= (depth == 16 ? 2 : 1),
                "\(file) radius \(radius) angle \(angle): \(worst.levels) levels at (\(worst.x), \(worst.y))")
        }
    }
}
