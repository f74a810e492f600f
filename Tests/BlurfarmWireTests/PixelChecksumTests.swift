import BlurfarmCore
import BlurfarmWire
import Testing

/// The pixel checksum is XXH3-64 over the floats' little-endian bytes, row by row, each row
/// seeded with the value of the rows above.
@Suite struct PixelChecksumTests {
    /// The checksum of `samples` as one row of RGBA pixels.
    static func ofRow(_ samples: [Float]) -> UInt64 {
        let rect = Rect(x: 3, y: 7, width: samples.count / 4, height: 1)
        return PixelChecksum.of(InlinePixels(rect: rect, channels: 4, samples: samples).makeBuffer(), in: rect)
    }

    /// Values computed outside Swift: `xxhsum -H3` of the bytes (Python's `struct.pack('<f')`).
    @Test func oneRowIsPlainXXH3OfItsBytes() {
        let samples: [Float] = [1, -0.0, Float(bitPattern: 0x7FC0_0001), 0.5]
        #expect(Self.ofRow(samples) == 0x6A95_9356_96BC_F39C)
        #expect(Self.ofRow((0..<12).map { Float($0) / 16 }) == 0xCCC0_28F4_48D0_F8CC)
    }

    @Test func oneBitChangesTheValue() {
        let samples: [Float] = (0..<64).map { Float($0) / 63 }
        let base = Self.ofRow(samples)
        for i in samples.indices {
            for bit in [0, 13, 31] {
                var changed = samples
                changed[i] = Float(bitPattern: changed[i].bitPattern ^ (1 << bit))
                #expect(Self.ofRow(changed) != base, "float \(i) bit \(bit)")
            }
        }
        #expect(Self.ofRow([0, 0, 0, 0]) != Self.ofRow([0, 0, 0, -0.0]))
    }

    /// A single-row region is the plain XXH3 of its floats; rows are chained, so swapping two
    /// rows changes the value; the stride and the pixels outside the region do not matter.
    @Test func aRegionIsItsRowsInOrderWhateverTheStride() {
        let buffer = PixelBuffer(rect: Rect(x: -2, y: -1, width: 6, height: 4), channels: 3)
        for y in -1..<3 { for x in -2..<4 { buffer[x, y] = SIMD4(Float(x), Float(y), Float(x * y), 1) } }
        func floats(_ row: Int) -> [Float] { (0..<2).flatMap { x in [Float(x), Float(row), Float(x * row)] } }
        let oneRow = Rect(x: 0, y: 1, width: 2, height: 1)
        #expect(PixelChecksum.of(buffer, in: oneRow) == PixelChecksum.of(
            InlinePixels(rect: oneRow, channels: 3, samples: floats(1)).makeBuffer(), in: oneRow))
        let tile = Rect(x: 0, y: 0, width: 2, height: 2)
        let copy = PixelBuffer(rect: tile, channels: 3)
        copy.copy(tile, from: buffer)
        #expect(PixelChecksum.of(buffer, in: tile) == PixelChecksum.of(copy, in: tile))
        #expect(PixelChecksum.of(buffer.view(tile), in: tile) == PixelChecksum.of(copy, in: tile))
        #expect(InlinePixels(buffer.view(tile)).checksum == PixelChecksum.of(copy, in: tile))
        let swapped = PixelBuffer(rect: tile, channels: 3)
        for x in 0..<2 { swapped[x, 0] = copy[x, 1]; swapped[x, 1] = copy[x, 0] }
        #expect(PixelChecksum.of(swapped, in: tile) != PixelChecksum.of(copy, in: tile))
        #expect(PixelChecksum.of(buffer, in: Rect(x: 1, y: 1, width: 0, height: 0)) == 0)
    }
}
