/// The memory decoding one image needs, estimated from its header before any pixel is decoded:
/// what admission checks against the memory limit (docs/image-io.md, "Admission").
///
/// There are two ways to decode an image, and each has its estimate:
/// - ``whole(_:width:height:copiesSource:)``: the whole image at once (``ImageReader/read(_:pixelLimit:memoryLimit:allocator:)``,
///   thumbnails): libvips's 8- or 16-bit sRGB copy, blurfarm's `Float32` buffer and, for an
///   image turned upright, the file's own pixels.
/// - ``streamed(_:_:)``: band by band (``BandReader``): the windows of rows the caller holds
///   (``Streaming``: their rows, how many, at what depth), one output band, and libvips's
///   own buffers of rows. It depends on the image's width, not its height.
///
/// Every product is checked for overflow: an absurd header gives nil ("more than an `Int`
/// holds"), which admission refuses.
public enum DecodeMemory {
    /// The image as its header describes it: what both estimates need.
    public struct Source: Sendable, Hashable {
        /// Width and height in pixels, as stored in the file (before any turning upright).
        public var width: Int
        public var height: Int
        /// The channels blurfarm decodes it to: 4 with alpha, else 3.
        public var channels: Int
        /// Bytes per sample of the decoded sRGB pixels: 1 (8-bit) or 2 (16-bit).
        public var sampleBytes: Int
        /// Bytes per pixel of the file's own pixels as libvips loads them (bands × sample
        /// size: e.g. 4 for 8-bit CMYK, 12 for a float RGB TIFF).
        public var filePixelBytes: Int

        /// An image of `width` × `height` pixels decoded to `channels` channels (3 or 4) of
        /// `sampleBytes` bytes (1 or 2); `filePixelBytes` by default `channels × sampleBytes`.
        public init(width: Int, height: Int, channels: Int, sampleBytes: Int, filePixelBytes: Int? = nil) {
            self.width = width
            self.height = height
            self.channels = channels
            self.sampleBytes = sampleBytes
            self.filePixelBytes = filePixelBytes ?? channels * sampleBytes
        }
    }

    /// How a caller holds an image it decodes band by band: its parameters, not blurfarm's
    /// today, so that each streaming renderer (`apply`'s, the worker pool's) states its own.
    public struct Streaming: Sendable, Hashable {
        /// Output rows per band (at least 1).
        public var bandRows: Int
        /// Rows each window holds above and below its band: the filter chain's vertical reach.
        public var haloRows: Int
        /// Columns the output is wider than the image on each side (the reach with edge rule
        /// `grow`, else 0).
        public var haloColumns: Int
        /// Windows and output bands alive at once (at least 1): the renderer's count, e.g.
        /// `BandedRender.blocks(depth:bandsInFlight:chains:)`.
        public var buffers: Int
        /// How large a sample is in the windows and output bands.
        public var samples: SampleSize
        /// Whether the output bands carry alpha even when the source has none (edge rules
        /// `transparent` and `grow`).
        public var outputHasAlpha: Bool

        /// Streaming `bandRows` output rows a band from windows `haloRows` taller on each
        /// side, `buffers` windows and output bands at once, with `samples` as large as it says.
        public init(
            bandRows: Int, haloRows: Int, haloColumns: Int = 0, buffers: Int, samples: SampleSize,
            outputHasAlpha: Bool = false
        ) {
            precondition(bandRows >= 1 && haloRows >= 0 && haloColumns >= 0, "a band has rows, a halo none or more")
            precondition(buffers >= 1, "a window at least")
            if case .bytes(let count) = samples { precondition(count >= 1, "a sample has bytes") }
            self.bandRows = bandRows
            self.haloRows = haloRows
            self.haloColumns = haloColumns
            self.buffers = buffers
            self.samples = samples
            self.outputHasAlpha = outputHasAlpha
        }

        /// Bytes one sample of `source` takes in the buffers.
        func sampleBytes(of source: Source) -> Int {
            switch samples {
            case .fileDepth: source.sampleBytes
            case .bytes(let count): count
            }
        }

    }

    /// How large a sample is in a streaming caller's buffers. The caller need not know the
    /// file's depth before its header is read: ``fileDepth`` says "as the file".
    public enum SampleSize: Sendable, Hashable {
        /// The file's own depth: 1 byte for an 8-bit file, 2 for a 16-bit one.
        case fileDepth
        /// A fixed number of bytes, e.g. 4 for `Float32` (`MemoryLayout<Float>.stride`).
        case bytes(Int)
    }

    /// Rows of the image at the file's depth that the rest of a streamed render holds: the
    /// sequential loader's line cache and the region read from it, `BandReader`'s rows before
    /// conversion, the colour conversion's rows, `BandWriter`'s ring of rows (256 by default)
    /// and the saver's buffers. Measured: the peak resident memory of `apply --workers 0`
    /// less the process's own (59 MB, the same command refusing an image) and less the
    /// buffers above came to 2014 to 2225 rows of 3 bytes on 20000- and 30000-wide JPEGs at
    /// sigma 8 and 32 (docs/performance-history.md, "Admission from the header").
    public static let libvipsStreamingRows = 2048

    /// Bytes a streamed render holds whatever the image's width: the tile threads' scratch and
    /// the allocator's slack (the measured rest on a 3840-wide image varied from 26 to 43 MB
    /// between runs, against 24 MB for ``libvipsStreamingRows``).
    public static let streamingFixedBytes = 32 << 20

    /// The bytes that decoding `source` whole to `width` × `height` pixels allocates: libvips's
    /// sRGB copy and blurfarm's `Float32` buffer, `channels × (sampleBytes + 4)` bytes a pixel,
    /// and, when `copiesSource` (an image turned upright, a thumbnail made at full size), the
    /// file's own pixels at full size. Nil when it overflows.
    public static func whole(_ source: Source, width: Int, height: Int, copiesSource: Bool) -> Int? {
        let decoded = product([width, height, source.channels * (source.sampleBytes + MemoryLayout<Float>.stride)])
        guard copiesSource else { return decoded }
        return sum([decoded, product([source.width, source.height, source.filePixelBytes])])
    }

    /// The bytes that decoding `source` band by band as `streaming` says needs: each of
    /// ``Streaming/buffers`` buffers as large as the larger of a window (the image's
    /// width × `bandRows + 2 × haloRows` rows × its channels) and an output band (the
    /// output's width × `bandRows` × its channels), at `streaming.samples` a sample;
    /// ``libvipsStreamingRows`` rows of the image at the file's depth for libvips; and
    /// ``streamingFixedBytes``. Nil when it overflows.
    public static func streamed(_ source: Source, _ streaming: Streaming) -> Int? {
        guard let windowRows = sum([streaming.bandRows, streaming.haloRows, streaming.haloRows]),
            let outputWidth = sum([source.width, streaming.haloColumns, streaming.haloColumns])
        else { return nil }
        let outputChannels = streaming.outputHasAlpha ? 4 : source.channels
        let sampleBytes = streaming.sampleBytes(of: source)
        guard let window = product([source.width, windowRows, source.channels, sampleBytes]),
            let band = product([outputWidth, streaming.bandRows, outputChannels, sampleBytes])
        else { return nil }
        let rows = product([outputWidth, libvipsStreamingRows, max(source.filePixelBytes, outputChannels * source.sampleBytes)])
        return sum([product([max(window, band), streaming.buffers]), rows, streamingFixedBytes])
    }

    /// The product of `factors` (none negative), nil when it overflows.
    private static func product(_ factors: [Int?]) -> Int? {
        var result = 1
        for factor in factors {
            guard let factor else { return nil }
            let (next, overflow) = result.multipliedReportingOverflow(by: factor)
            if overflow { return nil }
            result = next
        }
        return result
    }

    /// The sum of `terms` (none negative), nil when it overflows.
    private static func sum(_ terms: [Int?]) -> Int? {
        var result = 0
        for term in terms {
            guard let term else { return nil }
            let (next, overflow) = result.addingReportingOverflow(term)
            if overflow { return nil }
            result = next
        }
        return result
    }
}
