import BlurfarmImageIO
import Foundation
import Testing

@Suite("libvips reference filters")
struct LibvipsReferenceTests {
    /// A deterministic pseudo-random image.
    func noise(width: Int, height: Int, bands: Int, isFloat: Bool, seed: UInt64 = 42) -> LibvipsReference.Image {
        var state = seed
        func next() -> UInt64 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return state >> 33
        }
        let count = width * height * bands
        let data: [UInt8]
        if isFloat {
            let floats = (0..<count).map { _ in Float(next() % 10_000) / 10_000 }
            data = floats.withUnsafeBytes { Array($0) }
        } else {
            data = (0..<count).map { _ in UInt8(next() % 256) }
        }
        return LibvipsReference.Image(width: width, height: height, bands: bands, isFloat: isFloat, data: data)
    }

    func floats(_ image: LibvipsReference.Image) -> [Float] {
        image.data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    @Test(arguments: [(3, false), (4, false), (3, true), (4, true)])
    func identityConvolutionReturnsTheInputExactly(bands: Int, isFloat: Bool) throws {
        let input = noise(width: 37, height: 23, bands: bands, isFloat: isFloat)
        for precision in [LibvipsReference.Precision.integer, .float] {
            let output = try LibvipsReference.convolve(input, mask: [1], maskWidth: 1, maskHeight: 1, precision: precision)
            #expect(output == input)
        }
    }

    @Test func boxConvolutionOfAConstantIsTheConstant() throws {
        let value: Float = 0.375
        let data = [Float](repeating: value, count: 20 * 10 * 3).withUnsafeBytes { Array($0) }
        let input = LibvipsReference.Image(width: 20, height: 10, bands: 3, isFloat: true, data: data)
        let output = try LibvipsReference.convolve(
            input, mask: [Double](repeating: 1.0 / 9, count: 9), maskWidth: 3, maskHeight: 3, precision: .float)
        #expect(output.width == 20 && output.height == 10 && output.bands == 3 && output.isFloat)
        for v in floats(output) { #expect(abs(v - value) < 1e-5) }
    }

    @Test func shiftMaskMovesPixelsByOne() throws {
        let input = noise(width: 16, height: 8, bands: 3, isFloat: false)
        let output = try LibvipsReference.convolve(input, mask: [0, 0, 1], maskWidth: 3, maskHeight: 1, precision: .integer)
        // One of the two neighbours, consistently, away from the edges.
        let pixel = { (image: LibvipsReference.Image, x: Int, y: Int) in
            Array(image.data[(y * 16 + x) * 3..<(y * 16 + x) * 3 + 3])
        }
        let fromRight = (1..<15).allSatisfy { x in (0..<8).allSatisfy { y in pixel(output, x, y) == pixel(input, x + 1, y) } }
        let fromLeft = (1..<15).allSatisfy { x in (0..<8).allSatisfy { y in pixel(output, x, y) == pixel(input, x - 1, y) } }
        #expect(fromRight != fromLeft)
    }

    @Test func gaussianBlurOfAConstantIsTheConstant() throws {
        let data = [UInt8](repeating: 200, count: 50 * 40 * 4)
        let input = LibvipsReference.Image(width: 50, height: 40, bands: 4, isFloat: false, data: data)
        for precision in [LibvipsReference.Precision.integer, .float] {
            let output = try LibvipsReference.gaussianBlur(input, sigma: 3, precision: precision)
            #expect(output.width == 50 && output.height == 40 && output.bands == 4 && !output.isFloat)
            // Float arithmetic keeps the constant. Integer arithmetic rounds the mask to integers
            // whose sum is not exactly the scale: libvips 8.14 gives 202 here (so does
            // `vips gaussblur c.v g.v 3 --precision integer`).
            let tolerance = precision == .float ? 0 : 2
            let worst = output.data.map { abs(Int($0) - 200) }.max()!
            #expect(worst <= tolerance, "precision \(precision): off by \(worst)")
        }
    }

    @Test func gaussianBlurSpreadsAnImpulseSymmetricallyAndKeepsItsSum() throws {
        let size = 41, centre = 20
        var values = [Float](repeating: 0, count: size * size * 3)
        for c in 0..<3 { values[(centre * size + centre) * 3 + c] = 1 }
        let input = LibvipsReference.Image(
            width: size, height: size, bands: 3, isFloat: true, data: values.withUnsafeBytes { Array($0) })
        let output = try LibvipsReference.gaussianBlur(input, sigma: 2, precision: .float)
        let out = floats(output)
        func at(_ x: Int, _ y: Int) -> Float { out[(y * size + x) * 3] }
        #expect(at(centre, centre) < 0.1 && at(centre, centre) > 0.01)
        #expect(at(centre + 2, centre) > 0.001)
        #expect(abs(at(centre + 3, centre) - at(centre - 3, centre)) < 1e-6)
        #expect(abs(at(centre, centre + 3) - at(centre + 3, centre)) < 1e-6)
        #expect(at(centre + 1, centre) < at(centre, centre))
        var sum: Float = 0
        for i in stride(from: 0, to: out.count, by: 3) { sum += out[i] }
        #expect(abs(sum - 1) < 0.01, "sum \(sum)")
    }

    @Test func badArgumentsAreRefused() {
        let image = LibvipsReference.Image(width: 4, height: 4, bands: 3, isFloat: false, data: [0, 1, 2])
        #expect(failure { try LibvipsReference.gaussianBlur(image, sigma: 1, precision: .integer) }?.code == .invalidArgument)
        let good = noise(width: 4, height: 4, bands: 3, isFloat: false)
        #expect(failure { try LibvipsReference.gaussianBlur(good, sigma: 0, precision: .integer) }?.code == .invalidArgument)
        #expect(
            failure { try LibvipsReference.convolve(good, mask: [1, 2], maskWidth: 3, maskHeight: 1, precision: .float) }?
                .code == .invalidArgument)
        let twoBands = LibvipsReference.Image(width: 2, height: 2, bands: 2, isFloat: false, data: [UInt8](repeating: 0, count: 8))
        #expect(failure { try LibvipsReference.gaussianBlur(twoBands, sigma: 1, precision: .integer) }?.code == .invalidArgument)
    }

    @Test func concurrencyCanBeSet() throws {
        LibvipsReference.setConcurrency(1)
        let input = noise(width: 64, height: 64, bands: 3, isFloat: false)
        let one = try LibvipsReference.gaussianBlur(input, sigma: 1.5, precision: .integer)
        LibvipsReference.setConcurrency(0)
        let all = try LibvipsReference.gaussianBlur(input, sigma: 1.5, precision: .integer)
        #expect(one == all)
    }
}
