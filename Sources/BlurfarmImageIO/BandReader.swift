import BlurfarmCore
import CVips

/// An image file decoded band by band, top to bottom, with libvips's sequential access: only
/// the rows asked for are decoded, so memory holds a band, not the image. A JPEG whose samples
/// need no colour conversion (8-bit RGB, no profile to convert from) is decoded by libjpeg
/// straight into the band on the calling thread (``JPEGDecoder``: libvips's pixels, without
/// its pipeline's threads and copies); one with no metadata but EXIF, upright, is opened by
/// libjpeg alone, libvips not even loaded.
///
/// The samples are those ``ImageReader/read(_:pixelLimit:memoryLimit:allocator:)`` converts
/// to premultiplied `Float32`: the same checks before decoding, the same colour pipeline.
/// One thread at a time may use a reader.
public final class BandReader: @unchecked Sendable {
    /// The file read.
    public let path: String
    /// The image's width and height in pixels.
    public let width: Int
    public let height: Int
    /// Bits per sample of the file: 8 or 16.
    public let bitDepth: Int
    /// Whether the image has alpha: the buffers it fills then have 4 channels, else 3.
    public let hasAlpha: Bool
    /// The metadata describing the decoded pixels, as ``ImageReader`` gives it.
    public let metadata: ImageMetadata
    /// Rows decoded so far: the next band starts here.
    public private(set) var rowsRead = 0

    private let file: InputFile
    /// What decodes the rows: libvips (the image in sRGB, read through `region`), or libjpeg
    /// when the file's samples are the image's as they are.
    private enum Decoder {
        case libvips(VipsImageRef)
        case jpeg(JPEGDecoder)
    }
    private let decoder: Decoder
    /// Made by the first read, on the thread that reads (a libvips region is its thread's);
    /// released after the last row or a failure, on the same thread.
    private var region: VipsRegionRef?
    private var samples: [UInt8] = []

    /// Opens the image at `path` for reading band by band, after the checks of
    /// ``ImageReader/read(_:pixelLimit:memoryLimit:allocator:)`` (pixel limit, memory, file
    /// structure), the memory being what streaming it as `streaming` says for its size needs
    /// (``DecodeMemory/streamed(_:_:)``: a function of the width and the reach, not the
    /// height). Nil when the image must be turned upright (EXIF orientation other than 1):
    /// rotating needs the whole image, so such a file is read whole with `ImageReader.read`
    /// (which checks the memory of a whole decode); nil too when `streaming` answers nil for
    /// its size (a chain that reads too far in it: `FilterChain.streams(in:)`).
    ///
    /// - Parameter streaming: how the caller holds the bands it reads (rows, halo, ring depth,
    ///   bytes a sample) for an image covering the rectangle, or nil: not band by band.
    /// - Throws: `ImageIOError` as `ImageReader.read` does.
    public static func open(
        _ path: String, streaming: @escaping (Rect) -> DecodeMemory.Streaming?, pixelLimit: Int = ImageReader.defaultPixelLimit,
        memoryLimit: Int = ImageReader.usableMemory, confinement: RootConfinement? = nil
    ) throws(ImageIOError) -> BandReader? {
        let file = try InputFile(path, confinement: confinement)
        // A JPEG's header read once by libjpeg: it opens a plain one alone, and decodes the rows
        // of one whose samples libvips's colour pipeline leaves as they are.
        let jpeg = try? JPEGDecoder(descriptor: file.descriptor)
        if let jpeg, jpeg.header.decodesWithoutLibvips {
            guard let plan = streaming(Rect(width: jpeg.header.width, height: jpeg.header.height)) else {
                file.close()
                return nil
            }
            return try openPlainJPEG(file, jpeg, streaming: plan, pixelLimit: pixelLimit, memoryLimit: memoryLimit)
        }
        let loaded = try ImageReader.openChecked(file, pixelLimit: pixelLimit, memoryLimit: memoryLimit, streaming: streaming)
        guard loaded.orientation == 1, streaming(Rect(width: loaded.width, height: loaded.height)) != nil else {
            file.close()
            return nil
        }
        do throws(LibvipsFailure) {
            let sixteen = loaded.format != VIPS_FORMAT_UCHAR
            let (image, metadata) = try ImageReader.prepared(loaded, sixteenBit: sixteen)
            guard let jpeg, JPEGDecoder.canDecode(image, loaded: loaded) else {
                return BandReader(
                    file: file, decoder: .libvips(image), width: image.width, height: image.height, hasAlpha: image.bands == 4,
                    bitDepth: sixteen ? 16 : 8, metadata: metadata)
            }
            guard jpeg.header.width == image.width, jpeg.header.height == image.height, jpeg.header.components == 3 else {
                throw LibvipsFailure(
                    message: "libjpeg reads \(jpeg.header.width)x\(jpeg.header.height) pixels where libvips reads "
                        + "\(image.width)x\(image.height)")
            }
            try jpeg.start()
            return BandReader(
                file: file, decoder: .jpeg(jpeg), width: image.width, height: image.height, hasAlpha: false, bitDepth: 8,
                metadata: metadata)
        } catch {
            file.close()
            throw ImageIOError.decoding(path, error)
        }
    }

    /// Opens the image at `path` as ``open(_:streaming:pixelLimit:memoryLimit:confinement:)``
    /// does, streamed as `streaming` says whatever its size.
    public static func open(
        _ path: String, streaming: DecodeMemory.Streaming, pixelLimit: Int = ImageReader.defaultPixelLimit,
        memoryLimit: Int = ImageReader.usableMemory, confinement: RootConfinement? = nil
    ) throws(ImageIOError) -> BandReader? {
        try open(path, streaming: { _ in streaming }, pixelLimit: pixelLimit, memoryLimit: memoryLimit, confinement: confinement)
    }

    /// The reader of a JPEG that libjpeg opens alone (``JPEGDecoder/Header/decodesWithoutLibvips``),
    /// after the same checks as ``ImageReader`` makes (pixel limit, memory, file structure);
    /// `file` is closed when one fails.
    private static func openPlainJPEG(
        _ file: InputFile, _ jpeg: JPEGDecoder, streaming: DecodeMemory.Streaming, pixelLimit: Int, memoryLimit: Int
    ) throws(ImageIOError) -> BandReader {
        let (width, height, path) = (jpeg.header.width, jpeg.header.height, file.path)
        do throws(ImageIOError) {
            try ImageReader.checkPixelLimit("\(width)x\(height)", width, height, pixelLimit, path: path)
            try ImageReader.checkMemory(
                DecodeMemory.streamed(jpeg.header.decodeSource, streaming), memoryLimit, width: width, height: height,
                streamed: true, path: path)
            try file.checkJPEGStructure()
            do throws(LibvipsFailure) { try jpeg.start() } catch { throw ImageIOError.decoding(path, error) }
        } catch {
            file.close()
            throw error
        }
        return BandReader(
            file: file, decoder: .jpeg(jpeg), width: width, height: height, hasAlpha: false, bitDepth: 8,
            metadata: jpeg.header.metadata)
    }

    private init(
        file: InputFile, decoder: Decoder, width: Int, height: Int, hasAlpha: Bool, bitDepth: Int, metadata: ImageMetadata
    ) {
        self.file = file
        self.decoder = decoder
        path = file.path
        self.width = width
        self.height = height
        self.hasAlpha = hasAlpha
        self.bitDepth = bitDepth
        self.metadata = metadata
    }

    deinit { file.close() }

    /// Whether libjpeg decodes the file here (``JPEGDecoder``), not libvips's pipeline.
    var decodesWithLibjpeg: Bool {
        if case .jpeg = decoder { return true }
        return false
    }

    /// Floats per pixel of the buffers it fills: 4 with alpha, else 3.
    public var channels: Int { hasAlpha ? 4 : 3 }

    /// The samples the file stores: 8- or 16-bit.
    public var format: SampleFormat { .file(bitDepth: bitDepth) }

    /// The bands it fills: the file's samples, ``channels`` a pixel.
    public var layout: SampleLayout { SampleLayout(format: format, channels: channels) }

    /// Decodes the next `pixels.rect.height` rows into `pixels`, whose rectangle must be the
    /// image's whole width starting at row ``rowsRead``, with ``channels`` channels of the
    /// file's samples (``format``), as they are: libvips writes them in place when the rows are
    /// packed. A tile converts them to premultiplied `Float32` as ``ImageReader`` does
    /// (``AnyPixels/floats(in:scratch:)``).
    ///
    /// - Throws: `ImageIOError` with code `.decodeFailed` (truncated or corrupt data; libvips's
    ///   message), or `.systemRefusedThread`.
    public func read(into pixels: AnyPixels) throws(ImageIOError) {
        let rect = pixels.rect
        precondition(
            rect.x == 0 && rect.width == width && rect.y == rowsRead && rect.maxY <= height && pixels.channels == channels
                && pixels.format == format,
            "band \(rect) is not the next rows of a \(width)x\(height) image read to row \(rowsRead)")
        guard !rect.isEmpty else { return }
        do throws(LibvipsFailure) {
            let image: VipsImageRef
            switch decoder {
            case .libvips(let libvips):
                image = libvips
            case .jpeg(let jpeg):
                let (first, stride) = pixels.start(of: rect)
                try withExtendedLifetime(pixels.storage) { () throws(LibvipsFailure) in
                    try jpeg.read(into: first, stride: stride, count: rect.height)
                }
                rowsRead = rect.maxY
                return
            }
            let region: VipsRegionRef
            if let made = self.region {
                region = made
            } else {
                region = try VipsRegionRef(image)
                self.region = region
            }
            let byteCount = rect.height * region.rowBytes
            if pixels.isPacked {
                // Packed rows: straight into the band.
                let first = pixels.start(of: rect).first
                try withExtendedLifetime(pixels.storage) { () throws(LibvipsFailure) in
                    try region.readRows(
                        top: rect.y, count: rect.height, into: UnsafeMutableRawBufferPointer(start: first, count: byteCount))
                }
            } else {
                if samples.count < byteCount { samples = [UInt8](repeating: 0, count: byteCount) }
                try samples.withUnsafeMutableBytes { raw in
                    Result { () throws(LibvipsFailure) in
                        try region.readRows(top: rect.y, count: rect.height, into: raw)
                        var source = UnsafeRawPointer(raw.baseAddress!)
                        pixels.forEachRow(in: rect) { row, bytes in
                            row.copyMemory(from: source, byteCount: bytes)
                            source += bytes
                        }
                    }
                }.get()
            }
        } catch {
            region = nil
            throw ImageIOError.decoding(path, error)
        }
        rowsRead = rect.maxY
        if rowsRead == height { region = nil }
    }
}
