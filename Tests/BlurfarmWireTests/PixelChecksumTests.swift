import BlurfarmCore
import BlurfarmWire
import Testing

/// The pixel checksum is FNV-1a 64 over the floats' little-endian bytes, in row order.
@Suite struct PixelChecksumTests {
    /// The test's reference is FNV-1a 64 (published test vectors).
    @Test func referenceMatchesTheFNVTestVectors() {
        #expect(referenceFNV1a64([]) == 0xCBF2_9CE4_8422_2325)
        #expect(referenceFNV1a64(Array("a".utf8)) == 0xAF63_DC4C_8601_EC8C)
        #expect(referenceFNV1a64(Array("foobar".utf8)) == 0x8594_4171_F739_67E8)
    }

    /// A fixed input and its value, computed outside Swift (Python's struct and a loop) and
    /// by the reference from bytes written out by hand.
    @Test func aFixedInputHasAFixedValue() {
        let samples: [Float] = [1, -0.0, Float(bitPattern: 0x7FC0_0001), 0.5]
        let bytes: [UInt8] = [0x00, 0x00, 0x80, 0x3F, 0x00, 0x00, 0x00, 0x80, 0x01, 0x00, 0xC0, 0x7F, 0x00, 0x00, 0x00, 0x3F]
        #expect(referenceFNV1a64(bytes) == 0x8BE9_E7C3_D885_4EE9)
        #expect(PixelChecksum.of(samples) == 0x8BE9_E7C3_D885_4EE9)
        var running = PixelChecksum()
        for s in samples { running.combine(s) }
        #expect(running.value == 0x8BE9_E7C3_D885_4EE9)
        #expect(PixelChecksum().value == PixelChecksum.offsetBasis)
        #expect(PixelChecksum.of([]) == 0xCBF2_9CE4_8422_2325)
    }

    @Test func oneBitChangesTheValue() {
        let samples: [Float] = (0..<64).map { Float($0) / 63 }
        let base = PixelChecksum.of(samples)
        for i in samples.indices {
            for bit in [0, 13, 31] {
                var changed = samples
                changed[i] = Float(bitPattern: changed[i].bitPattern ^ (1 << bit))
                #expect(PixelChecksum.of(changed) != base, "float \(i) bit \(bit)")
            }
        }
        #expect(PixelChecksum.of([0]) != PixelChecksum.of([-0.0]))
    }

    /// Over a region of a buffer: the interior only, rows top to bottom, whatever the stride.
    @Test func aRegionOfABufferIsItsFloatsInRowOrder() {
        let buffer = PixelBuffer(rect: Rect(x: -2, y: -1, width: 6, height: 4), channels: 3)
        for y in -1..<3 { for x in -2..<4 { buffer[x, y] = SIMD4(Float(x), Float(y), Float(x * y), 1) } }
        let tile = Rect(x: 0, y: 0, width: 2, height: 2)
        var expected: [UInt8] = []
        for y in 0..<2 {
            for x in 0..<2 {
                for f in [Float(x), Float(y), Float(x * y)] {
                    let bits = f.bitPattern
                    expected += [UInt8(bits & 0xFF), UInt8(bits >> 8 & 0xFF), UInt8(bits >> 16 & 0xFF), UInt8(bits >> 24)]
                }
            }
        }
        #expect(PixelChecksum.of(buffer, in: tile) == referenceFNV1a64(expected))
        #expect(PixelChecksum.of(buffer.view(tile), in: tile) == referenceFNV1a64(expected))
        #expect(InlinePixels(buffer.view(tile)).checksum == referenceFNV1a64(expected))
        #expect(PixelChecksum.of(buffer, in: Rect(x: 1, y: 1, width: 0, height: 0)) == PixelChecksum.offsetBasis)
    }

    /// A 2×2 RGB tile of k/16, computed outside Swift.
    @Test func aSmallTileHasAFixedValue() {
        let pixels = InlinePixels(rect: Rect(x: 5, y: 5, width: 2, height: 2), channels: 3, samples: (0..<12).map { Float($0) / 16 })
        #expect(pixels.checksum == 0x5B64_234B_4915_C1CE)
        #expect(PixelChecksum.of(pixels.makeBuffer(), in: pixels.rect) == 0x5B64_234B_4915_C1CE)
    }
}
