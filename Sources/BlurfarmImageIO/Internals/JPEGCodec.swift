import BlurfarmCore
import BlurfarmFileFormats
import CJPEGCodec
import CVips

/// 8-bit JPEG straight through libjpeg-turbo (`CJPEGCodec`) on the calling thread: rows are
/// decoded into the caller's band and encoded from it, with no libvips pipeline, thread or
/// ring between. The settings are libvips 8.14's, so the pixels are those `jpegload` gives
/// and the bytes those `jpegsave` writes for the same image and options: the readers and
/// writers (``BandReader``, ``BandWriter``, ``ImageWriter``, ``JPEGChunks``,
/// ``ImageReader/header(ofFile:)``) use it only where that holds
/// (``JPEGDecoder/canDecode(_:loaded:)``, ``JPEGEncoder/canEncode(format:bitDepth:channels:options:)``),
/// which `JPEGCodecTests` checks byte for byte against libvips. Thumbnails decode with it at a
/// shrink too (``ImageReader/resampledJPEG(_:_:width:height:)``), at libjpeg's size (rounded up).
enum JPEGCodec {
    /// Runs one C call that reports a failure as nonzero status and a message.
    static func check(_ call: (UnsafeMutablePointer<CChar>) -> Int32) throws(LibvipsFailure) {
        if let failure = withMessage({ call($0) == 0 ? nil : $1() }) { throw failure }
    }

    /// Runs one C call that makes a decoder or an encoder, NULL and a message on failure.
    static func make(_ call: (UnsafeMutablePointer<CChar>) -> OpaquePointer?) throws(LibvipsFailure) -> OpaquePointer {
        let made = withMessage { message, failure in call(message).map(Result.success) ?? .failure(failure()) }
        return try made.get()
    }

    /// `body` with a message buffer for one C call and what makes its failure.
    private static func withMessage<T>(_ body: (UnsafeMutablePointer<CChar>, () -> LibvipsFailure) -> T) -> T {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: Int(BF_JPEG_MESSAGE)) { buffer in
            buffer[0] = 0  // the C side writes a message whenever it fails
            return body(buffer.baseAddress!) { LibvipsFailure(message: "libjpeg: " + String(cString: buffer.baseAddress!)) }
        }
    }
}

/// A JPEG file decoded row by row, top to bottom, to the 8-bit samples libvips's `jpegload`
/// gives: libjpeg's default output (RGB for YCbCr), any warning a failure (`fail_on: warning`).
final class JPEGDecoder {
    /// What the file's header says, and the metadata markers libvips reads.
    struct Header {
        let width: Int
        let height: Int
        /// Samples a pixel in the file: 1 grey, 3 colour, 4 CMYK.
        let components: Int
        /// Whether the file's colour is YCbCr or RGB (libjpeg's output is then RGB as it is).
        let isRGB: Bool
        /// Bits a sample.
        let precision: Int
        /// The EXIF block as libvips keeps it (the first APP1 starting "Exif"), or nil.
        let exif: [UInt8]?
        /// Whether an XMP packet (an APP1 starting "http") or an ICC profile (APP2) is there.
        let hasXMP: Bool
        let hasICCProfile: Bool

        /// The EXIF orientation, 1 when there is none; nil when the EXIF cannot be read here.
        var orientation: Int? { exif.map(EXIF.orientation) ?? 1 }

        /// Whether the file is decoded here from the start, libvips never asked: 8-bit RGB or
        /// YCbCr, upright, nothing for libvips's colour pipeline to convert (no profile), and
        /// no metadata but EXIF (what libvips would give is then known: the EXIF block as it is).
        var decodesWithoutLibvips: Bool { readsWithoutLibvips && !hasICCProfile && !hasXMP && orientation == 1 }

        /// Whether the header libvips reads of this file is known without it: an 8-bit colour
        /// JPEG whose EXIF orientation reads (1 to 8, or none), profile and XMP or not (what
        /// libvips then does with the samples does not change the header).
        var readsWithoutLibvips: Bool { precision == 8 && components == 3 && isRGB && orientation != nil }

        /// The metadata libvips's `jpegload` gives such a file.
        var metadata: ImageMetadata { ImageMetadata(iccProfile: nil, exif: exif, xmp: nil) }

        /// Such a file as the memory estimates see it (``ImageReader/decodeSource(of:)``'s
        /// for libvips's header of it: 8-bit RGB).
        var decodeSource: DecodeMemory.Source {
            DecodeMemory.Source(width: width, height: height, channels: 3, sampleBytes: 1, filePixelBytes: 3)
        }
    }

    let header: Header
    private let handle: OpaquePointer
    private var started = false

    /// Whether the pixels of `prepared` (``ImageReader/prepared(_:sixteenBit:)`` of `loaded`,
    /// libvips's header of the file) are libjpeg's output as it is: a JPEG read by
    /// `jpegload`, 8-bit RGB, which the colour pipeline left untouched (no profile to convert
    /// from, no colour space to convert).
    static func canDecode(_ prepared: VipsImageRef, loaded: VipsImageRef) -> Bool {
        prepared.pointer == loaded.pointer && loaded.loader?.hasPrefix("jpegload") == true && loaded.bands == 3
            && loaded.format == VIPS_FORMAT_UCHAR
    }

    /// Reads the header of the file open at `descriptor`, which must stay open while the
    /// decoder reads (from the file's start, whatever the descriptor's offset).
    init(descriptor: Int32) throws(LibvipsFailure) {
        var info = bf_jpeg_header()
        handle = try JPEGCodec.make { bf_jpeg_decoder_new(descriptor, &info, $0) }
        var exif: [UInt8]?
        var (xmp, icc) = (false, false)
        var index: Int32 = 0
        var marker: Int32 = 0
        var data: UnsafePointer<UInt8>?
        var size = 0
        while bf_jpeg_decoder_marker(handle, index, &marker, &data, &size) == 0 {
            index += 1
            let payload = UnsafeBufferPointer(start: data, count: size)
            // libvips's tests: a prefix and more bytes than it.
            func starts(with prefix: String) -> Bool { size > prefix.utf8.count && payload.starts(with: prefix.utf8) }
            switch marker {
            case 0xE1 where size > 4 && starts(with: "Exif"): if exif == nil { exif = Array(payload) }  // libvips keeps the first
            case 0xE1 where size > 4 && starts(with: "http"): xmp = true
            // libvips joins the profile's chunks from the one numbered 1: without it, no profile.
            case 0xE2 where size > 14 && starts(with: "ICC_PROFILE"): icc = icc || payload[12] == 1
            default: break
            }
        }
        header = Header(
            width: Int(info.width), height: Int(info.height), components: Int(info.components),
            isRGB: info.colour_space == BF_JPEG_YCBCR || info.colour_space == BF_JPEG_RGB,
            precision: Int(info.precision), exif: exif, hasXMP: xmp, hasICCProfile: icc)
    }

    deinit { bf_jpeg_decoder_free(handle) }

    /// Starts the decode (a progressive file is read whole here), scaled by 1/`shrink` (1, 2, 4
    /// or 8: libjpeg's DCT scaling, as libvips's shrink-on-load): the output is the returned
    /// `width` × `height` × 3 samples (the header's at `shrink` 1).
    @discardableResult
    func start(shrink: Int = 1) throws(LibvipsFailure) -> (width: Int, height: Int) {
        precondition(!started, "a decode starts once")
        precondition([1, 2, 4, 8].contains(shrink), "libjpeg scales by 1/1, 1/2, 1/4 or 1/8")
        var (width, height): (Int32, Int32) = (0, 0)
        try JPEGCodec.check { bf_jpeg_decoder_start(handle, Int32(shrink), &width, &height, $0) }
        started = true
        return (Int(width), Int(height))
    }

    /// Decodes the next `count` rows, row y at `rows + y * stride` (each `width * 3` bytes).
    func read(into rows: UnsafeMutableRawPointer, stride: Int, count: Int) throws(LibvipsFailure) {
        precondition(started, "the decode has started")
        try JPEGCodec.check { bf_jpeg_decoder_read(handle, rows.assumingMemoryBound(to: UInt8.self), stride, Int32(count), $0) }
    }
}

/// A JPEG encoded row by row into memory, the bytes libvips's `jpegsave` writes for the same
/// samples and options when the file keeps no metadata but the ICC profile (`keep-icc`,
/// `strip`: ``ImageFormat/encode(_:options:restartInterval:)`` strips libvips's own EXIF block
/// from those).
final class JPEGEncoder {
    private let handle: OpaquePointer

    /// Whether an image is encoded here: an 8-bit JPEG without alpha keeping no metadata but
    /// its profile. (With `keep`, libvips writes an EXIF block of its own: libvips encodes it.)
    static func canEncode(format: ImageFormat, bitDepth: Int, channels: Int, options: EncodeOptions) -> Bool {
        format == .jpeg && bitDepth == 8 && channels == 3 && options.metadata != .keep
    }

    /// Starts a `width` × `height` RGB image with `options` (quality, subsampling, progressive,
    /// Huffman tables), a restart marker every `restartInterval` MCUs (0: none), and the ICC
    /// profile of `metadata` unless `options.metadata` is `strip` (``ImageWriter/tag(_:metadata:options:)``'s
    /// rule; nil: no profile).
    init(
        width: Int, height: Int, options: EncodeOptions, restartInterval: Int, metadata: ImageMetadata?
    ) throws(LibvipsFailure) {
        let icc = options.metadata == .strip ? nil : metadata?.iccProfile
        // libvips's `subsample_mode`: auto is full chroma from quality 90 on.
        let fullChroma: Bool
        switch options.subsampling {
        case .auto: fullChroma = options.quality >= 90
        case .halved: fullChroma = false
        case .full: fullChroma = true
        }
        handle = try JPEGCodec.make { message in
            (icc ?? []).withUnsafeBufferPointer { profile in
                bf_jpeg_encoder_new(
                    Int32(width), Int32(height), Int32(options.quality), fullChroma ? 1 : 0, options.progressive ? 1 : 0,
                    options.optimizeCoding ? 1 : 0, Int32(restartInterval), profile.baseAddress, profile.count, message)
            }
        }
    }

    deinit { bf_jpeg_encoder_free(handle) }

    /// The file of `height` packed rows of `width` 8-bit RGB pixels at `samples`, encoded as
    /// the initialiser says.
    static func encode(
        _ samples: UnsafeRawBufferPointer, width: Int, height: Int, options: EncodeOptions, restartInterval: Int,
        metadata: ImageMetadata?
    ) throws(LibvipsFailure) -> [UInt8] {
        let encoder = try JPEGEncoder(
            width: width, height: height, options: options, restartInterval: restartInterval, metadata: metadata)
        try encoder.write(samples.baseAddress!, stride: width * 3, count: height)
        return try encoder.finish()
    }

    /// Encodes the next `count` rows, row y at `rows + y * stride`.
    func write(_ rows: UnsafeRawPointer, stride: Int, count: Int) throws(LibvipsFailure) {
        try JPEGCodec.check { bf_jpeg_encoder_write(handle, rows.assumingMemoryBound(to: UInt8.self), stride, Int32(count), $0) }
    }

    /// The file, once every row is written.
    func finish() throws(LibvipsFailure) -> [UInt8] {
        var bytes: UnsafePointer<UInt8>?
        var size = 0
        try JPEGCodec.check { bf_jpeg_encoder_finish(handle, &bytes, &size, $0) }
        return Array(UnsafeBufferPointer(start: bytes, count: size))
    }
}
