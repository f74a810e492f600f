import BlurfarmCore
import BlurfarmTestSupport
import PropertyBased
import Testing

/// The encoder's conversion of opaque pixels, eight floats at a time, gives the samples of the
/// definition (`SampleConversion.quantize`: the float times the maximum plus a half, its floor,
/// clamped; NaN 0) for every float, the awkward ones included.
@Suite struct SampleConversionTests {
    /// Floats near every rounding boundary of both depths, and the ones no pixel should hold.
    static func awkwardFloats(count: Int, seed: UInt64) -> [Float] {
        var rng = SplitMix(seed: seed)
        return (0..<count).map { _ in
            switch rng.next() % 8 {
            case 0: return [Float.nan, -.infinity, .infinity, -0.0, 0, 1, -1e-30, 2][Int(rng.next() % 8)]
            case 1, 2:
                // A level's midpoint, a few ulps either side.
                let maximum: Float = rng.next() % 2 == 0 ? 255 : 65535
                var v = (Float(rng.next() % UInt64(maximum)) + 0.5) / maximum
                for _ in 0..<(rng.next() % 4) { v = rng.next() % 2 == 0 ? v.nextUp : v.nextDown }
                return v
            case 3: return Float(rng.next() % 256) / 255
            case 4: return Float(rng.next() % 65536) / 65535
            default: return Float.random(in: -0.1...1.1, using: &rng)
            }
        }
    }

    @Test func opaquePixelsBecomeTheSamplesOfTheDefinition() async {
        await propertyCheck(count: 300, input: Gen.int(in: 1...70), Gen.uint64()) { pixels, seed in
            let floats = Self.awkwardFloats(count: pixels * 3, seed: seed)
            var bytes = [UInt8](repeating: 0, count: floats.count)
            var words = [UInt16](repeating: 0, count: floats.count)
            floats.withUnsafeBufferPointer { f in
                SampleConversion.unpremultiply(
                    f.baseAddress!, channels: 3, pixelCount: pixels, bands: 3, background: .zero, into: &bytes)
                SampleConversion.unpremultiply(
                    f.baseAddress!, channels: 3, pixelCount: pixels, bands: 3, background: .zero, into: &words)
            }
            for (i, value) in floats.enumerated() {
                let byte = UInt8(SampleConversion.quantize(value, 255)), word = UInt16(SampleConversion.quantize(value, 65535))
                if bytes[i] != byte || words[i] != word {
                    Issue.record("\(value) (bits \(String(value.bitPattern, radix: 16))): 8-bit \(bytes[i]) not \(byte), 16-bit \(words[i]) not \(word)")
                    return
                }
            }
        }
    }
}
