import BlurfarmFileFormats
import BlurfarmSystem
import BlurfarmCore
import CVips

/// Reads image files through libvips into blurfarm's pixel format.
///
/// Decoding is strict: truncated or corrupt data is an error, never a partly grey image.
/// All functions are safe to call from several threads at once.
public enum ImageReader {
    /// The default largest `width * height` a file may declare: 2^30, 32768 × 32768 (a
    /// gigapixel). A policy against decompression bombs: a small file can declare a huge
    /// image, and a decode streamed band by band fits in memory whatever the height, so the
    /// memory estimate alone would let a 440 KB PNG of 60000 × 60000 black pixels through (3.6
    /// gigapixels: minutes of work). A 300-megapixel photo and a 30000 × 30000 image pass
    /// (docs/security.md, "Image files").
    public static let defaultPixelLimit = 1 << 30

    /// The memory this process may use, in bytes: the least of the physical memory, its
    /// `RLIMIT_AS` and `RLIMIT_DATA`, and its cgroup's `memory.max` (read once). What a decode
    /// may allocate unless told less (``read(_:pixelLimit:memoryLimit:allocator:)``).
    public static var usableMemory: Int { machineMemory }

    /// The version of the libvips library in use, e.g. "8.14.1" (part of an output's
    /// up-to-date key: a new libvips may decode differently). Maps libvips without starting it.
    public static var libvipsVersion: String { Libvips.version }


    /// Reads the header of the image at `path` without decoding pixels.
    ///
    /// - Throws: `ImageIOError` with code `.fileMissing`, `.fileUnreadable`, `.notAnImage`,
    ///   `.decodeFailed` (a header libvips cannot parse) or `.libvipsUnavailable`.
    public static func header(ofFile path: String, confinement: RootConfinement? = nil) throws(ImageIOError) -> ImageHeader {
        let file = try InputFile(path, confinement: confinement)
        defer { file.close() }
        // An 8-bit colour JPEG's header, read by libjpeg, is the one libvips would read
        // (JPEGCodecTests), profile, XMP and orientation included: libvips is not started for
        // it (starting it holds the dynamic loader for about 40 ms, and every thread started
        // meanwhile waits).
        if let header = (try? JPEGDecoder(descriptor: file.descriptor))?.header, header.readsWithoutLibvips,
            let orientation = header.orientation
        {
            return upright(
                header.decodeSource, orientation: orientation, bitDepth: 8, hasAlpha: false, loader: "jpegload",
                hasICCProfile: header.hasICCProfile)
        }
        // A plain PNG's or WebP's header (``PNGHeader``, ``WebPHeader``) is the one libvips
        // would read (PNGHeaderTests, WebPHeaderTests).
        if let png = PNGHeader.read(file.descriptor) {
            return plain(width: png.width, height: png.height, bands: png.bands, sampleBytes: png.sixteenBit ? 2 : 1, loader: "pngload")
        }
        if let webp = WebPHeader.read(file.descriptor) {
            return plain(width: webp.width, height: webp.height, bands: webp.hasAlpha ? 4 : 3, sampleBytes: 1, loader: "webpload")
        }
        return try libvipsHeader(of: file)
    }

    /// The header of a file libvips loads upright as `bands` bands (grey, grey and alpha, RGB
    /// or RGB and alpha) of `sampleBytes` bytes, without a profile: a plain PNG or WebP.
    private static func plain(width: Int, height: Int, bands: Int, sampleBytes: Int, loader: String) -> ImageHeader {
        let hasAlpha = bands == 2 || bands == 4
        let source = DecodeMemory.Source(
            width: width, height: height, channels: hasAlpha ? 4 : 3, sampleBytes: sampleBytes,
            filePixelBytes: bands * sampleBytes)
        return upright(source, orientation: 1, bitDepth: 8 * sampleBytes, hasAlpha: hasAlpha, loader: loader, hasICCProfile: false)
    }

    /// The header of the image open as `file`, as libvips reads it.
    static func libvipsHeader(of file: InputFile) throws(ImageIOError) -> ImageHeader {
        try Libvips.start()
        let image = try file.open(sequential: true)
        return upright(
            decodeSource(of: image), orientation: image.orientation, bitDepth: image.format != VIPS_FORMAT_UCHAR ? 16 : 8,
            hasAlpha: image.hasAlpha, loader: image.loader ?? "unknown",
            hasICCProfile: vips_image_get_typeof(image.pointer, "icc-profile-data") != 0)
    }

    /// The header of a file whose pixels are `source` as stored, turned upright by its EXIF
    /// `orientation` (5 to 8 turn it a quarter: width and height swap).
    private static func upright(
        _ source: DecodeMemory.Source, orientation: Int, bitDepth: Int, hasAlpha: Bool, loader: String, hasICCProfile: Bool
    ) -> ImageHeader {
        let swap = orientation >= 5
        return ImageHeader(
            width: swap ? source.height : source.width, height: swap ? source.width : source.height, bitDepth: bitDepth,
            hasAlpha: hasAlpha, loader: loader, hasICCProfile: hasICCProfile, orientation: orientation,
            decodeMemory: DecodeMemory.whole(source, width: source.width, height: source.height, copiesSource: orientation != 1),
            decodeSource: source)
    }

    /// Decodes the image at `path` to premultiplied RGBA Float32, upright and in sRGB.
    ///
    /// Exactly:
    /// 1. Before any pixel is decoded: the header's `width * height` is checked against
    ///    `pixelLimit`, the memory the decode allocates (``DecodeMemory/whole(_:width:height:copiesSource:)``)
    ///    against `memoryLimit`, and a JPEG must reach its end-of-image marker (a file cut short
    ///    and padded with zeros decodes without a warning otherwise).
    /// 2. The image is turned upright by its EXIF orientation (vips_autorot).
    /// 3. Colour is brought to sRGB: an embedded ICC profile is applied (relative colorimetric,
    ///    to libvips's built-in sRGB profile, keeping 16 bits for 16-bit sources) unless it is
    ///    that very profile; without a profile, grey becomes RGB and CMYK uses libvips's
    ///    default CMYK profile.
    /// 4. Each 8-bit sample v becomes `Float(v) / 255`, each 16-bit one `Float(v) / 65535`;
    ///    red, green and blue are then multiplied by alpha. Images without alpha get alpha 1.
    ///    Values stay sRGB-encoded (not linear).
    ///
    /// - Parameters:
    ///   - pixelLimit: the largest `width * height` accepted.
    ///   - memoryLimit: the most bytes the decode may allocate (default: all this process may
    ///     use, ``usableMemory``).
    ///   - allocator: where the pixels go (e.g. memory shared with worker processes); by
    ///     default memory of this process.
    ///   - confinement: the roots the file must be opened beneath (``RootConfinement``), or nil.
    /// - Throws: `ImageIOError` with code `.fileMissing`, `.fileUnreadable`, `.notAnImage`,
    ///   `.overPixelLimit`, `.overMemoryLimit`, `.decodeFailed` (truncated or corrupt data, even
    ///   where the decoder only warns; a bad ICC profile; the message is libvips's or says what
    ///   is missing), `.inputOutsideRoots` (only with `confinement`) or `.libvipsUnavailable`.
    public static func read(
        _ path: String, pixelLimit: Int = defaultPixelLimit, memoryLimit: Int = usableMemory,
        allocator: (any PixelAllocator)? = nil, confinement: RootConfinement? = nil
    ) throws(ImageIOError) -> DecodedImage {
        let (file, loaded) = try openChecked(path, pixelLimit: pixelLimit, memoryLimit: memoryLimit, confinement: confinement)
        defer { file.close() }
        do throws(LibvipsFailure) {
            let sixteen = loaded.format != VIPS_FORMAT_UCHAR
            return try decoded(try upright(loaded), sixteenBit: sixteen, allocator: allocator)
        } catch {
            throw ImageIOError.decoding(path, error)
        }
    }
}

// The decode path shared by `read`, `thumbnail` and `BandReader`: the pixel limit, turning
// upright, colour to sRGB, and the conversion to premultiplied Float32 with the metadata.
extension ImageReader {
    /// The file at `path` opened for sequential reading and checked before any pixel is decoded
    /// (step 1 of ``read(_:pixelLimit:memoryLimit:allocator:)``): the pixel limit, the memory
    /// the decode needs (``DecodeMemory/streamed(_:_:)`` when `streaming` says how the caller
    /// holds the bands, else ``DecodeMemory/whole(_:width:height:copiesSource:)``), the file's
    /// structure. The caller closes the file.
    static func openChecked(
        _ path: String, pixelLimit: Int, memoryLimit: Int, streaming: ((Rect) -> DecodeMemory.Streaming?)? = nil,
        confinement: RootConfinement? = nil
    ) throws(ImageIOError) -> (file: InputFile, image: VipsImageRef) {
        let file = try InputFile(path, confinement: confinement)
        return (file, try openChecked(file, pixelLimit: pixelLimit, memoryLimit: memoryLimit, streaming: streaming))
    }

    /// `file`'s header, checked as ``openChecked(_:pixelLimit:memoryLimit:streaming:confinement:)``
    /// checks it; `file` is closed when a check fails. `streaming` says how the caller holds
    /// the bands of an image covering the rectangle; its nil (not streamed at that size) leaves
    /// the memory to the whole decode that follows.
    static func openChecked(
        _ file: InputFile, pixelLimit: Int, memoryLimit: Int, streaming: ((Rect) -> DecodeMemory.Streaming?)?
    ) throws(ImageIOError) -> VipsImageRef {
        let path = file.path
        do throws(ImageIOError) {
            try Libvips.start()
            let loaded = try file.open(sequential: true)
            try checkPixelLimit(of: loaded, pixelLimit, path: path)
            let source = decodeSource(of: loaded)
            if let streaming {
                if let plan = streaming(Rect(width: loaded.width, height: loaded.height)) {
                    try checkMemory(DecodeMemory.streamed(source, plan), memoryLimit, of: loaded, streamed: true, path: path)
                }
            } else {
                try checkMemory(
                    DecodeMemory.whole(source, width: loaded.width, height: loaded.height, copiesSource: loaded.orientation != 1),
                    memoryLimit, of: loaded, streamed: false, path: path)
            }
            try file.checkStructure(of: loaded)
            return loaded
        } catch {
            file.close()
            throw error
        }
    }

    /// What the memory estimates need of `image` (opened, nothing decoded yet).
    static func decodeSource(of image: VipsImageRef) -> DecodeMemory.Source {
        DecodeMemory.Source(
            width: image.width, height: image.height, channels: image.hasAlpha ? 4 : 3,
            sampleBytes: image.format == VIPS_FORMAT_UCHAR ? 1 : 2,
            filePixelBytes: image.bands * Int(vips_format_sizeof(image.format)))
    }

    /// Refuses `image` (opened, nothing decoded yet) when decoding it (band by band when
    /// `streamed`) needs `bytes` (nil: more than an `Int` holds) and that is over `memoryLimit`.
    static func checkMemory(
        _ bytes: Int?, _ memoryLimit: Int, of image: VipsImageRef, streamed: Bool, path: String
    ) throws(ImageIOError) {
        try checkMemory(bytes, memoryLimit, width: image.width, height: image.height, streamed: streamed, path: path)
    }

    /// Refuses an image of `width` × `height` pixels as ``checkMemory(_:_:of:streamed:path:)`` does.
    static func checkMemory(
        _ bytes: Int?, _ memoryLimit: Int, width: Int, height: Int, streamed: Bool, path: String
    ) throws(ImageIOError) {
        guard let bytes, bytes <= memoryLimit else {
            let needed = bytes.map { "about \(shown(bytes: $0))" } ?? "more memory than can be counted"
            throw ImageIOError(
                code: .overMemoryLimit, path: path,
                message: "\(streamed ? "streaming" : "decoding") \(width)x\(height) needs \(needed), "
                    + "over the memory limit of \(shown(bytes: memoryLimit)) \(raisedBy("memory-limit"))")
        }
    }

    /// Where a refusal says the limit is set: "(setting memory-limit, option --memory-limit)".
    static func raisedBy(_ setting: String) -> String { "(setting \(setting), option --\(setting))" }

    /// `bytes` for people: in GB (10^9) or MB (10^6) with one decimal, or in bytes under 1 MB.
    static func shown(bytes: Int) -> String {
        guard bytes >= 1_000_000 else { return "\(bytes) bytes" }
        let (unit, name) = bytes >= 1_000_000_000 ? (1_000_000_000, "GB") : (1_000_000, "MB")
        let tenths = (bytes / (unit / 1000) + 50) / 100
        return "\(tenths / 10).\(tenths % 10) \(name)"
    }

    /// Refuses `image` (opened, nothing decoded yet) when its `width * height` is over
    /// `pixelLimit`.
    static func checkPixelLimit(of image: VipsImageRef, _ pixelLimit: Int, path: String) throws(ImageIOError) {
        try checkPixelLimit("\(image.width)x\(image.height)", image.width, image.height, pixelLimit, path: path)
    }

    /// Refuses an image of `width` × `height` pixels, described as `what`, over `pixelLimit`.
    static func checkPixelLimit(
        _ what: String, _ width: Int, _ height: Int, _ pixelLimit: Int, path: String
    ) throws(ImageIOError) {
        let (pixelCount, overflow) = width.multipliedReportingOverflow(by: height)
        if overflow || pixelCount > pixelLimit {
            throw ImageIOError(
                code: .overPixelLimit, path: path,
                message: "\(what) is \(overflow ? "too many" : String(pixelCount)) pixels, over the pixel limit of "
                    + "\(pixelLimit) \(raisedBy("pixel-limit"))")
        }
    }

    /// `image` turned upright by its EXIF orientation (step 2 of `read`); the orientation tag is
    /// then gone.
    static func upright(_ image: VipsImageRef) throws(LibvipsFailure) -> VipsImageRef {
        guard image.orientation != 1 else { return image }
        // A sequential image cannot be rotated in place: decode it to memory first.
        return try Libvips.autorot(try Libvips.copyToMemory(image))
    }

    /// `image` in sRGB (step 3 of `read`): 8-bit sRGB, or 16-bit RGB16 when `sixteenBit`, with 3
    /// bands or 4 (the last is alpha). An image already so, whose profile (if any) is libvips's
    /// built-in sRGB, comes back as it is.
    static func inSRGB(_ image: VipsImageRef, sixteenBit sixteen: Bool) throws(LibvipsFailure) -> VipsImageRef {
        var image = image
        if let profile = image.blob("icc-profile-data"), profile != Libvips.srgbProfile {
            image = try Libvips.iccTransformToSRGB(image, depth: sixteen ? 16 : 8)
        }
        let target = sixteen ? VIPS_INTERPRETATION_RGB16 : VIPS_INTERPRETATION_sRGB
        let targetFormat = sixteen ? VIPS_FORMAT_USHORT : VIPS_FORMAT_UCHAR
        // Bands without a colour meaning ("multiband") are taken as RGB(A) as they are.
        let isRGB = image.interpretation == target || image.interpretation == VIPS_INTERPRETATION_MULTIBAND
        if !isRGB || image.format != targetFormat || image.bands < 3 {
            image = try Libvips.colourspace(image, to: target, from: image.interpretation)
        }
        if image.format != targetFormat {
            image = try Libvips.cast(image, to: targetFormat)
        }
        if image.bands > 4 {
            image = try Libvips.extractBands(image, first: 0, count: 4)  // RGB and the first alpha
        }
        guard image.bands == 3 || image.bands == 4 else {
            throw LibvipsFailure(message: "cannot make RGB from \(image.bands) bands")
        }
        return image
    }

    /// The decoded image of an upright `image` (steps 3 and 4 of `read`): colour to sRGB, every
    /// pixel computed and made premultiplied Float32, and the metadata describing the result.
    static func decoded(
        _ image: VipsImageRef, sixteenBit sixteen: Bool, allocator: (any PixelAllocator)? = nil
    ) throws(LibvipsFailure) -> DecodedImage {
        let (image, metadata) = try prepared(image, sixteenBit: sixteen)
        let width = image.width, height = image.height, bands = image.bands
        let pixels = try Libvips.withComputedPixels(of: image) { samples in
            PixelConversion.pixelBuffer(
                from: samples, width: width, height: height, bands: bands, sixteenBit: sixteen, allocator: allocator)
        }
        return DecodedImage(pixels: pixels, bitDepth: sixteen ? 16 : 8, hasAlpha: bands == 4, metadata: metadata)
    }

    /// The samples of an upright `image` as ``decoded(_:sixteenBit:allocator:)`` decodes them,
    /// before they are made `Float32`: colour to sRGB, every pixel computed, the metadata
    /// describing the result.
    static func decodedSamples(_ image: VipsImageRef, sixteenBit sixteen: Bool) throws(LibvipsFailure) -> DecodedSamples {
        let (image, metadata) = try prepared(image, sixteenBit: sixteen)
        let rect = Rect(width: image.width, height: image.height)
        let storage = try Libvips.computedPixels(of: image)
        let format = SampleFormat.file(bitDepth: sixteen ? 16 : 8)
        guard storage.byteCount == rect.area * image.bands * format.byteSize else {
            throw LibvipsFailure(message: "computed \(storage.byteCount) bytes for \(rect.width)x\(rect.height)x\(image.bands)")
        }
        return DecodedSamples(
            samples: AnyPixels(rect: rect, channels: image.bands, format: format, storage: storage),
            bitDepth: sixteen ? 16 : 8, metadata: metadata)
    }

    /// An upright `image` in sRGB (step 3 of `read`, nothing computed yet), and the metadata
    /// describing the result.
    static func prepared(
        _ image: VipsImageRef, sixteenBit sixteen: Bool
    ) throws(LibvipsFailure) -> (image: VipsImageRef, metadata: ImageMetadata) {
        let exif = image.blob("exif-data")
        let xmp = image.blob("xmp-data")
        let image = try inSRGB(image, sixteenBit: sixteen)
        return (image, ImageMetadata(iccProfile: image.blob("icc-profile-data"), exif: exif, xmp: xmp))
    }
}

/// The memory this process may use (``ImageReader/usableMemory``), read once; `Int.max` when
/// nothing says.
private let machineMemory = Syscalls.usableMemory() ?? Int.max

/// An input file opened by us before libvips sees it: missing and unreadable files get clear
/// errors, and names libvips would misparse reach it as `/proc/self/fd/N`. With a
/// ``RootConfinement`` it is opened beneath the roots, and libvips always reads it as
/// `/proc/self/fd/N`: the file opened, never the path resolved again.
struct InputFile {
    let path: String
    let descriptor: Int32
    /// Whether it was opened beneath roots.
    let confined: Bool

    init(_ path: String, confinement: RootConfinement? = nil) throws(ImageIOError) {
        self.path = path
        confined = confinement != nil
        if let confinement {
            descriptor = try confinement.openFile(path)
            return
        }
        let kind: Syscalls.FileKind?
        do {
            kind = try Syscalls.kind(of: path)
        } catch {
            throw ImageIOError(code: .fileUnreadable, path: path, message: "cannot open: \(error.reason)")
        }
        switch kind {
        case nil:
            throw ImageIOError(code: .fileMissing, path: path, message: "no such file")
        case .directory:
            throw ImageIOError(code: .fileUnreadable, path: path, message: "is a folder, not an image file")
        case .other(let what):
            // Opening a FIFO would block until someone writes to it.
            throw ImageIOError(code: .fileUnreadable, path: path, message: "is \(what), not a regular file")
        case .regular:
            break
        }
        // Opened without waiting, and checked again: the file may have been replaced since.
        do {
            descriptor = try Syscalls.openForReading(path)
        } catch {
            throw ImageIOError(code: .fileUnreadable, path: path, message: "cannot open: \(error.reason)")
        }
        try Self.checkOpened(descriptor, path: path)
    }

    /// Closes `descriptor` and throws unless it is a regular file (it may have been replaced
    /// since it was looked at).
    static func checkOpened(_ descriptor: Int32, path: String) throws(ImageIOError) {
        let opened = (try? Syscalls.status(of: descriptor)).map { Syscalls.kind(ofMode: $0.st_mode) }
        guard opened == .regular else {
            Syscalls.close(descriptor)
            let what: String
            switch opened {
            case .other(let kind)?: what = "is \(kind), not a regular file"
            case .directory?: what = "is a folder, not an image file"
            default: what = "cannot be examined (fstat failed)"
            }
            throw ImageIOError(code: .fileUnreadable, path: path, message: what)
        }
    }

    func close() { Syscalls.close(descriptor) }

    /// The name handed to libvips: the path itself, unless libvips would read a trailing
    /// "[...]" as options or the path is not UTF-8 (libvips takes it as text; the descriptor's
    /// name reaches the very bytes, `PathEncoding`).
    var nameForLibvips: String {
        confined || path.hasSuffix("]") || !PathEncoding.isUTF8(path) ? descriptorPath : path
    }

    /// The open file by its descriptor, `/proc/self/fd/N` (Linux): libvips opening this name
    /// reads the very file this value opened, even if the path was since renamed or replaced.
    var descriptorPath: String { "/proc/self/fd/\(descriptor)" }

    /// The loader libvips's search names for a file that starts as a PNG or a JPEG does, nil for
    /// any other file (libvips's search names it). The search asks each loader's test in turn,
    /// each opening the file (4% of the processor time of a first run of small PNGs); those of
    /// `pngload` (the 8-byte signature) and `jpegload` (`FF D8`) are the only ones that take
    /// these files (`PNGHeaderTests.theSignaturesLoaderIsLibvipssSearchs` holds the answer to
    /// the search's for every file of the corpus).
    var signatureLoader: String? {
        guard let bytes = try? Syscalls.readBytes(descriptor, count: 8, at: 0) else { return nil }
        if bytes.elementsEqual([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "pngload" }
        if bytes.starts(with: [0xFF, 0xD8]) { return "jpegload" }
        return nil
    }

    /// Refuses a JPEG that does not reach its end-of-image marker (``JPEGStructure``) and a
    /// binary PNM shorter than its header claims (``PNMStructure``); a libvips file shorter than
    /// its pixels is refused as it is opened (``checkVipsStructure(of:)``); other formats'
    /// decoders notice truncation themselves.
    func checkStructure(of image: VipsImageRef) throws(ImageIOError) {
        if image.loader?.hasPrefix("jpegload") == true { try checkJPEGStructure() }
        do throws(FileStructureProblem) {
            if image.loader?.hasPrefix("ppmload") == true { try PNMStructure.check(descriptor) }
        } catch {
            throw ImageIOError(code: .decodeFailed, path: path, message: error.message)
        }
    }

    /// Refuses a libvips file (`vipsload`, which names no loader in the image it opens) that
    /// ends before its pixels do: its 64-byte header,
    /// then width × height × bands samples. libvips only warns of it when it opens the file;
    /// the pixels past the end fail to map while they are read, on libvips's threads, and a
    /// write of them could finish (a one-pixel file of garbage put in place, the run failed).
    func checkVipsStructure(of image: VipsImageRef) throws(ImageIOError) {
        let header = 64
        let (samples, overflow) = (image.width * image.height).multipliedReportingOverflow(by: image.bands)
        let (bytes, overflowing) = samples.multipliedReportingOverflow(by: Int(vips_format_sizeof(image.format)))
        let size: Int
        do throws(SystemCallError) {
            size = Int(try Syscalls.status(of: descriptor).st_size)
        } catch {
            throw ImageIOError(code: .fileUnreadable, path: path, message: "cannot read: \(error.reason)")
        }
        guard overflow || overflowing || size - header < bytes else { return }
        throw ImageIOError(
            code: .decodeFailed, path: path,
            message: "a libvips file cut short: its header says \(image.width) x \(image.height), \(image.bands) band(s), "
                + "\(overflow || overflowing ? "more than \(Int.max)" : "\(bytes)") bytes of pixels after its \(header)-byte header; "
                + "it has \(max(0, size - header))")
    }

    /// Refuses a JPEG whose structure is broken (``JPEGStructure``: cut short, padded).
    func checkJPEGStructure() throws(ImageIOError) {
        do throws(FileStructureProblem) {
            try JPEGStructure.check(descriptor)
        } catch {
            throw ImageIOError(code: .decodeFailed, path: path, message: error.message)
        }
    }

    /// The file's header through libvips (no pixels are decoded yet).
    func open(sequential: Bool) throws(ImageIOError) -> VipsImageRef {
        guard let loader = signatureLoader ?? Libvips.loaderName(forFile: nameForLibvips) else {
            throw ImageIOError(code: .notAnImage, path: path, message: "not an image in any format libvips reads")
        }
        let image: VipsImageRef
        do {
            image = try Libvips.open(nameForLibvips, loader: loader, sequential: sequential)
        } catch {
            throw ImageIOError.decoding(path, error)
        }
        if loader.hasPrefix("vipsload") { try checkVipsStructure(of: image) }
        return image
    }
}
