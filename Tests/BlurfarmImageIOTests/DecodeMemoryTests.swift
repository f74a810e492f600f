@testable import BlurfarmImageIO
import Testing

/// The memory estimates' arithmetic (``DecodeMemory``): what a whole decode and a decode band
/// by band need, from the header's numbers alone, and nil for headers whose products overflow.
@Suite("The memory a decode needs")
struct DecodeMemoryTests {
    /// `apply --workers 0` at sigma 8: bands of 128 rows, a halo of 24, two windows ahead, `Float32`.
    static let applyStreaming = DecodeMemory.Streaming(bandRows: 128, haloRows: 24, buffers: 5, samples: .bytes(4))

    @Test func theWholeEstimateCountsLibvipsCopyTheFloatsAndTheUprightCopy() {
        let opaque = DecodeMemory.Source(width: 1024, height: 640, channels: 3, sampleBytes: 1)
        #expect(DecodeMemory.whole(opaque, width: 1024, height: 640, copiesSource: false) == 1024 * 640 * 3 * (1 + 4))
        #expect(
            DecodeMemory.whole(opaque, width: 1024, height: 640, copiesSource: true)
                == 1024 * 640 * 3 * (1 + 4) + 1024 * 640 * 3)
        // 16-bit with alpha; a thumbnail of 100 x 50 made from a full-size 8-bit CMYK copy.
        let deep = DecodeMemory.Source(width: 300, height: 200, channels: 4, sampleBytes: 2)
        #expect(DecodeMemory.whole(deep, width: 300, height: 200, copiesSource: false) == 300 * 200 * 4 * (2 + 4))
        let cmyk = DecodeMemory.Source(width: 4000, height: 3000, channels: 3, sampleBytes: 1, filePixelBytes: 4)
        #expect(DecodeMemory.whole(cmyk, width: 100, height: 50, copiesSource: true) == 100 * 50 * 15 + 4000 * 3000 * 4)
    }

    @Test func theStreamedEstimateIsTheCallersBuffersAndLibvipsRowsWhateverTheHeight() {
        let photo = DecodeMemory.Source(width: 20000, height: 15000, channels: 3, sampleBytes: 1)
        let window = 20000 * (128 + 2 * 24) * 3 * 4  // the larger of a window and an output band
        let libvips = 20000 * DecodeMemory.libvipsStreamingRows * 3 + DecodeMemory.streamingFixedBytes
        #expect(DecodeMemory.streamed(photo, Self.applyStreaming) == window * (2 + 3) + libvips)
        for height in [1, 15, 150_000, 1 << 40] {
            var other = photo
            other.height = height
            #expect(DecodeMemory.streamed(other, Self.applyStreaming) == DecodeMemory.streamed(photo, Self.applyStreaming))
        }
        // Pixels kept at the file's depth (1 byte a sample for this 8-bit photo, 2 for a 16-bit
        // one with alpha), a deeper ring.
        let atDepth = DecodeMemory.Streaming(bandRows: 64, haloRows: 8, buffers: 7, samples: .fileDepth)
        #expect(DecodeMemory.streamed(photo, atDepth) == 20000 * (64 + 16) * 3 * (4 + 3) + libvips)
        let deep = DecodeMemory.Source(width: 20000, height: 15000, channels: 4, sampleBytes: 2)
        #expect(
            DecodeMemory.streamed(deep, atDepth)
                == 20000 * (64 + 16) * 4 * 2 * (4 + 3) + 20000 * DecodeMemory.libvipsStreamingRows * 8
                + DecodeMemory.streamingFixedBytes)
        // `grow` with no vertical reach: the output band, wider and with alpha, is the larger.
        let grow = DecodeMemory.Streaming(
            bandRows: 128, haloRows: 0, haloColumns: 24, buffers: 5, samples: .bytes(4), outputHasAlpha: true)
        #expect(
            DecodeMemory.streamed(photo, grow)
                == (20000 + 48) * 128 * 4 * 4 * 5 + (20000 + 48) * DecodeMemory.libvipsStreamingRows * 4
                + DecodeMemory.streamingFixedBytes)
    }

    @Test func absurdHeadersOverflowToNoEstimate() {
        let wide = DecodeMemory.Source(width: Int.max / 2, height: 3, channels: 4, sampleBytes: 2)
        #expect(DecodeMemory.whole(wide, width: wide.width, height: 3, copiesSource: false) == nil)
        #expect(DecodeMemory.streamed(wide, Self.applyStreaming) == nil)
        let tall = DecodeMemory.Source(width: 1 << 31, height: 1 << 31, channels: 3, sampleBytes: 1)
        #expect(DecodeMemory.whole(tall, width: tall.width, height: tall.height, copiesSource: false) == nil)
        let fine = DecodeMemory.Source(width: 1 << 20, height: 1 << 20, channels: 3, sampleBytes: 1)
        #expect(DecodeMemory.whole(fine, width: 1 << 20, height: 1 << 20, copiesSource: true) == (1 << 40) * 15 + (1 << 40) * 3)
        let halo = DecodeMemory.Streaming(bandRows: 1, haloRows: Int.max / 2, buffers: 4, samples: .bytes(1))
        #expect(DecodeMemory.streamed(fine, halo) == nil)
        let ring = DecodeMemory.Streaming(bandRows: 1 << 20, haloRows: 0, buffers: (1 << 32) + 3, samples: .bytes(1))
        #expect(DecodeMemory.streamed(fine, ring) == nil)
    }
}
