import BlurfarmCore
import BlurfarmSystem
import BlurfarmFileFormats
import CVips
import CVipsShim

/// Encodes pixels to image files through libvips, atomically.
public enum ImageWriter {
    /// The cores this process's encoders may use at once: the machine's by default. A large
    /// JPEG's chunks are encoded at once from ``JPEGChunks/parallelCores`` of them, else in one
    /// go with the same restart markers (the same bytes either way). A worker process, one
    /// core's worth of work of a pool that has a worker a core, sets 1.
    public static var encoderCores: Int {
        get { JPEGChunks.cores.load(ordering: .relaxed) }
        set { JPEGChunks.cores.store(max(1, newValue), ordering: .relaxed) }
    }

    /// Why the libvips in use cannot write `format`, or nil when it can. Only AVIF may be
    /// missing: it needs libvips's `heifsave` and a libheif with an AV1 encoder, which is
    /// found out once per process by encoding an 8 × 8 image.
    public static func unavailability(of format: ImageFormat) -> String? {
        format == .avif ? avifUnavailability : nil
    }

    /// Checks, before any work, that `path` can be written with `options`: its extension
    /// names a supported format that this libvips can write, that can do what `options` ask (lossless is WebP's alone,
    /// progressive and subsampling JPEG's), and
    /// its folder exists and takes new files. ``encode(_:for:sourceBitDepth:sourceHadAlpha:metadata:options:)``
    /// checks the same again.
    ///
    /// - Throws: `ImageIOError` with code `.unsupportedOutputExtension` (also for AVIF without an
    ///   encoder), `.invalidArgument`, `.outputFolderMissing` or `.outputFolderNotWritable`.
    public static func checkDestination(_ path: String, options: EncodeOptions) throws(ImageIOError) {
        let name = OutputPath(path)
        _ = try checkFormat(extension: name.extension, of: path, options: options)
        try name.checkFolder()
    }

    /// The format the extension `ext` names, checked as ``checkDestination(_:options:)`` checks
    /// an output path's, for an output that is not a file (standard output) named `subject`
    /// in errors.
    ///
    /// - Throws: `ImageIOError` with code `.unsupportedOutputExtension` or `.invalidArgument`.
    public static func checkFormat(
        extension ext: String, of subject: String, options: EncodeOptions
    ) throws(ImageIOError) -> ImageFormat {
        guard let format = ImageFormat(extension: ext) else {
            throw ImageIOError(
                code: .unsupportedOutputExtension, path: subject,
                message: (ext.isEmpty ? "has no extension to name its format" : "cannot write '.\(ext)' files")
                    + " (supported: \(ImageFormat.extensions.joined(separator: ", ")))")
        }
        if let reason = unavailability(of: format) {
            throw ImageIOError(code: .unsupportedOutputExtension, path: subject, message: reason)
        }
        let asked: [(FormatOption, Bool)] = [
            (.lossless, options.lossless), (.progressive, options.progressive),
            (.subsampling, options.subsampling != .auto), (.optimizeCoding, options.optimizeCoding),
            (.effort, options.effort != nil),
        ]
        for (option, isAsked) in asked where isAsked {
            if let problem = ImageFormat.problem(with: option, extension: ext) {
                throw ImageIOError(code: .invalidArgument, path: subject, message: problem)
            }
        }
        if let effort = options.effort, let maximum = format.maximumEffort, !(0...maximum).contains(effort) {
            throw ImageIOError(
                code: .invalidArgument, path: subject, message: "\(format.name)'s effort is 0 to \(maximum), not \(effort)")
        }
        return format
    }

    /// Writes `pixels` to `path` in the format its extension names: ``encode(_:for:sourceBitDepth:sourceHadAlpha:metadata:options:)``
    /// then ``write(_:temporaryFiles:confinement:)``, below the roots of `confinement` when given.
    ///
    /// - Throws: as those two.
    public static func write(
        _ pixels: PixelBuffer, to path: String, sourceBitDepth: Int, sourceHadAlpha: Bool,
        metadata: ImageMetadata?, options: EncodeOptions, temporaryFiles: TemporaryFiles? = nil,
        confinement: RootConfinement? = nil
    ) throws(ImageIOError) {
        try write(
            encode(
                pixels, for: path, sourceBitDepth: sourceBitDepth, sourceHadAlpha: sourceHadAlpha, metadata: metadata,
                options: options),
            temporaryFiles: temporaryFiles, confinement: confinement)
    }

    /// Removes the temporary files that writers now gone left in `folder` (a run killed with
    /// SIGKILL): `.<name>.blurfarm-<pid>-XXXXXX` of a pid no process has, not written for
    /// `minimumAge` seconds (default 10 minutes: a folder may be shared with another host,
    /// whose pids are not visible here). Returns their paths.
    @discardableResult
    public static func removeAbandonedTemporaryFiles(inFolder folder: String, minimumAge: Double = 600) -> [String] {
        AtomicFile.removeAbandoned(inFolder: folder, minimumAge: minimumAge)
    }

    /// Writes an encoded image atomically: to a new file in the output's folder, without a name
    /// where the file system allows (`O_TMPFILE`: a process killed meanwhile leaves nothing),
    /// else named ".name.blurfarm-HOST-PID-XXXXXXXXXXXX"; fsynced, given a temporary name,
    /// renamed over its path, and the folder fsynced. On any failure the temporary file is
    /// removed and an existing file at the path is untouched; the error names the output and
    /// the system's reason ("write failed: No space left on device", "File too large").
    ///
    /// While it is written, the temporary file's path is in `temporaryFiles`, so that a
    /// process that must exit at once can remove it (``TemporaryFiles/removeAll()``).
    ///
    /// With `confinement`, the output's folder is opened beneath one of its roots, never
    /// leaving it by a link or `..` (``RootConfinement``), and the file is created and renamed
    /// in that open folder: a folder replaced by a link to elsewhere is refused, with nothing
    /// written.
    ///
    /// - Throws: `ImageIOError` with code `.outputFolderMissing`, `.outputFolderNotWritable`,
    ///   `.outputOutsideRoots` (only with `confinement`) or `.writeFailed`.
    public static func write(
        _ encoded: EncodedImage, temporaryFiles: TemporaryFiles? = nil, confinement: RootConfinement? = nil
    ) throws(ImageIOError) {
        try write(encoded.bytes, to: encoded.path, temporaryFiles: temporaryFiles, confinement: confinement)
    }

    /// Writes `bytes`, a file encoded elsewhere (a worker's whole-image task), to `path` as
    /// ``write(_:temporaryFiles:confinement:)`` writes an encoded image: atomically, beneath
    /// the roots of `confinement` when given.
    ///
    /// - Throws: as ``write(_:temporaryFiles:confinement:)``.
    public static func write(
        _ bytes: [UInt8], to path: String, temporaryFiles: TemporaryFiles? = nil, confinement: RootConfinement? = nil
    ) throws(ImageIOError) {
        let name = OutputPath(path)
        try name.checkFolder()
        try AtomicFile.write(bytes, to: name, temporaryFiles: temporaryFiles, confinement: confinement)
    }

    /// Writes the file at `path` from its parts, asked of `parts` in order until it says nil (a
    /// file of more bytes than are held at once: the output map), as
    /// ``write(_:to:temporaryFiles:confinement:)`` writes one made whole: atomically, beneath
    /// the roots of `confinement` when given. An error `parts` throws leaves the file as it was.
    ///
    /// - Throws: as ``write(_:temporaryFiles:confinement:)``, or what `parts` throws.
    public static func write(
        to path: String, temporaryFiles: TemporaryFiles? = nil, confinement: RootConfinement? = nil,
        parts: () throws(ImageIOError) -> [UInt8]?
    ) throws(ImageIOError) {
        let name = OutputPath(path)
        try name.checkFolder()
        try AtomicFile.write(to: name, temporaryFiles: temporaryFiles, confinement: confinement) { (descriptor) throws(ImageIOError) in
            while let part = try parts() {
                do throws(SystemCallError) {
                    try Syscalls.writeAll(descriptor, part)
                } catch {
                    throw .writing(path, error)
                }
            }
        }
    }

    /// Encodes `pixels` in memory in the format `path`'s extension names, without writing.
    ///
    /// The pixels are premultiplied `Float32` in sRGB-encoded values, as
    /// ``ImageReader/read(_:pixelLimit:memoryLimit:allocator:)`` makes them (4 channels, or 3 for an opaque image); the
    /// whole rectangle is encoded, whatever its origin. Each sample is unpremultiplied (alpha 0
    /// gives colour 0), scaled to 255 or 65535, rounded to nearest and clamped. The output has
    /// an alpha channel when `sourceHadAlpha` or any alpha is below 1, and the format has alpha
    /// (PNG, WebP, TIFF); otherwise it is composited over `options.background`. JPEG never has
    /// alpha.
    ///
    /// The metadata written is `options.metadata`'s: `keep`, the ICC profile of `metadata`,
    /// its EXIF (orientation 1) and XMP; `keep-icc`, the ICC profile and nothing else (no EXIF,
    /// XMP, IPTC, GPS); `strip`, nothing at all. The pixels are sRGB whatever the source's
    /// profile (``ImageReader`` converts on decode), so an output without one shows the same
    /// colours. The orientation written is always 1 or absent.
    ///
    /// - Parameters:
    ///   - sourceBitDepth: 8 or 16, the source's depth; with `options.bitDepth` nil, 16-bit
    ///     sources give 16-bit PNG and TIFF outputs.
    ///   - sourceHadAlpha: whether the source had an alpha channel.
    ///   - metadata: the source's metadata, or nil to write none.
    /// - Throws: `ImageIOError` with code `.unsupportedOutputExtension`, `.invalidArgument`
    ///   (lossless asked of a format other than WebP, progressive or subsampling of one other
    ///   than JPEG, quality outside 1...100, a bit depth the format cannot store, an empty image),
    ///   `.outputFolderMissing`, `.outputFolderNotWritable`, `.encodeFailed` (libvips's
    ///   message) or `.libvipsUnavailable`.
    ///
    /// With `checkingFolder` false the folder is not looked at: the bytes are written by
    /// another process (a worker encodes, the coordinator makes the folder and writes).
    public static func encode(
        _ pixels: PixelBuffer, for path: String, sourceBitDepth: Int, sourceHadAlpha: Bool,
        metadata: ImageMetadata?, options: EncodeOptions, checkingFolder: Bool = true
    ) throws(ImageIOError) -> EncodedImage {
        if checkingFolder { try checkDestination(path, options: options) }
        return try encode(
            pixels, extension: OutputPath(path).extension, named: path, sourceBitDepth: sourceBitDepth,
            sourceHadAlpha: sourceHadAlpha, metadata: metadata, options: options)
    }

    /// Encodes `pixels` as ``encode(_:for:sourceBitDepth:sourceHadAlpha:metadata:options:)``
    /// does, in the format the extension `ext` names, for an output that is not a file
    /// (standard output) named `name` in errors: no folder is checked.
    public static func encode(
        _ pixels: PixelBuffer, extension ext: String, named name: String, sourceBitDepth: Int, sourceHadAlpha: Bool,
        metadata: ImageMetadata?, options: EncodeOptions
    ) throws(ImageIOError) -> EncodedImage {
        let (format, bitDepth) = try checkEncoding(
            extension: ext, named: name, size: pixels.rect, sourceBitDepth: sourceBitDepth, options: options)
        let alpha = format.storesAlpha && (sourceHadAlpha || PixelConversion.hasTranslucency(pixels))
        let encoded: [UInt8]
        let checksum: UInt64
        let libjpeg = JPEGEncoder.canEncode(format: format, bitDepth: bitDepth, channels: alpha ? 4 : 3, options: options)
        if !libjpeg { try Libvips.start() }  // `libvipsUnavailable`, not a failed encode
        do throws(LibvipsFailure) {
            let plan = JPEGChunks.plan(
                width: pixels.rect.width, height: pixels.rect.height, format: format, options: options, bitDepth: bitDepth)
            if libjpeg {
                // libjpeg on this thread (libvips's bytes, without its pipeline); a large JPEG
                // with its plan's restart markers, its chunks encoded at once where that pays
                // (the same bytes as one encode, the streamed output's). A plan implies this case.
                let (width, height) = (pixels.rect.width, pixels.rect.height)
                let samples = PixelConversion.samples(pixels, alpha: false, background: options.background, as: UInt8.self)
                checksum = samples.withUnsafeBytes { PixelChecksum.of(packedRows: $0, rowBytes: width * 3) }
                encoded = try samples.withUnsafeBytes { raw in
                    Result { () throws(LibvipsFailure) in
                        if let plan, JPEGChunks.encodesInParallel(pixels: width * height) {
                            return try JPEGChunks.encode(raw, width: width, height: height, metadata: metadata, options: options, plan: plan)
                        }
                        return try JPEGEncoder.encode(
                            raw, width: width, height: height, options: options, restartInterval: plan?.interval ?? 0,
                            metadata: metadata)
                    }
                }.get()
            } else {
                let image: VipsImageRef
                (image, checksum) = try makeImage(pixels, alpha: alpha, bitDepth: bitDepth, background: options.background)
                tag(image, metadata: metadata, options: options)
                encoded = try format.encode(image, options: options)  // a chunk plan implies libjpeg: none here
            }
        } catch {
            throw ImageIOError(code: .encodeFailed, path: name, message: error.message)
        }
        return EncodedImage(
            path: name, bytes: encoded, format: format, bitDepth: bitDepth, hasAlpha: alpha,
            background: options.background, lossless: options.lossless, quality: options.quality, checksum: checksum)
    }

    /// The format and bit depth of an output named `name` whose extension is `ext`, of an image
    /// of `size`, checked as ``encode(_:extension:named:sourceBitDepth:sourceHadAlpha:metadata:options:)``
    /// documents.
    static func checkEncoding(
        extension ext: String, named name: String, size: Rect, sourceBitDepth: Int, options: EncodeOptions
    ) throws(ImageIOError) -> (format: ImageFormat, bitDepth: Int) {
        func fail(_ code: ImageIOError.Code, _ message: String) -> ImageIOError {
            ImageIOError(code: code, path: name, message: message)
        }
        let format = try checkFormat(extension: ext, of: name, options: options)
        guard (1...100).contains(options.quality) else {
            throw fail(.invalidArgument, "quality \(options.quality) is outside 1...100")
        }
        guard sourceBitDepth == 8 || sourceBitDepth == 16 else {
            throw fail(.invalidArgument, "source bit depth \(sourceBitDepth) is not 8 or 16")
        }
        let bitDepth = options.bitDepth ?? (sourceBitDepth == 16 && format.stores16Bit ? 16 : 8)
        guard bitDepth == 8 || (bitDepth == 16 && format.stores16Bit) else {
            throw fail(.invalidArgument, "\(format.name) cannot store \(bitDepth)-bit samples")
        }
        guard !size.isEmpty else {
            throw fail(.invalidArgument, "the image is empty (\(size.width)x\(size.height))")
        }
        return (format, bitDepth)
    }

    /// Attaches to `image` the metadata an output carries: the ICC profile of `metadata` unless
    /// `strip`, its EXIF and XMP with `keep`, and orientation 1.
    static func tag(_ image: VipsImageRef, metadata: ImageMetadata?, options: EncodeOptions) {
        if let metadata {
            if options.metadata != .strip, let icc = metadata.iccProfile { image.setBlob("icc-profile-data", icc) }
            if options.metadata == .keep {
                if let exif = metadata.exif { image.setBlob("exif-data", exif) }
                if let xmp = metadata.xmp { image.setBlob("xmp-data", xmp) }
            }
        }
        // The pixels are upright: whatever the EXIF says, libvips writes orientation 1.
        image.setInt("orientation", 1)
    }

    /// The interpretation of an output image of `bitDepth` bits: sRGB or RGB16.
    static func interpretation(bitDepth: Int) -> VipsInterpretation {
        bitDepth == 16 ? VIPS_INTERPRETATION_RGB16 : VIPS_INTERPRETATION_sRGB
    }

    /// A libvips image over an 8- or 16-bit copy of `pixels`, tagged sRGB / RGB16, and the
    /// ``PixelChecksum`` of those samples.
    private static func makeImage(
        _ pixels: PixelBuffer, alpha: Bool, bitDepth: Int, background: SIMD3<Float>
    ) throws(LibvipsFailure) -> (VipsImageRef, checksum: UInt64) {
        let width = pixels.rect.width, height = pixels.rect.height, bands = alpha ? 4 : 3
        let image: VipsImageRef
        let checksum: UInt64
        if bitDepth == 16 {
            let samples = PixelConversion.samples(pixels, alpha: alpha, background: background, as: UInt16.self)
            checksum = samples.withUnsafeBytes { PixelChecksum.of(packedRows: $0, rowBytes: width * bands * 2) }
            image = try Libvips.image(
                copying: samples, width: width, height: height, bands: bands, format: VIPS_FORMAT_USHORT)
        } else {
            let samples = PixelConversion.samples(pixels, alpha: alpha, background: background, as: UInt8.self)
            checksum = samples.withUnsafeBytes { PixelChecksum.of(packedRows: $0, rowBytes: width * bands) }
            image = try Libvips.image(
                copying: samples, width: width, height: height, bands: bands, format: VIPS_FORMAT_UCHAR)
        }
        return (try Libvips.withInterpretation(image, interpretation(bitDepth: bitDepth)), checksum)
    }
}

/// Why AVIF cannot be written here, or nil: decided once per process (Swift runs a global's
/// initialiser once, thread-safely) by encoding an 8 × 8 grey image with AV1.
private let avifUnavailability: String? = {
    do throws(ImageIOError) {
        try Libvips.start()
    } catch {
        return error.message
    }
    do throws(LibvipsFailure) {
        let image = try Libvips.withInterpretation(
            try Libvips.image(
                copying: [UInt8](repeating: 128, count: 8 * 8 * 3), width: 8, height: 8, bands: 3,
                format: VIPS_FORMAT_UCHAR),
            VIPS_INTERPRETATION_sRGB)
        _ = try Libvips.save("heifsave") { cvips_avifsave_target(image.pointer, $0, 50, Int32(ImageFormat.defaultEffort)) }
        return nil
    } catch {
        return "AVIF output needs libvips with an AV1 HEIF encoder; libvips \(Libvips.version) here has none "
            + "(\(error.message))"
    }
}()

/// Encoding, by format.
extension ImageFormat {
    /// The encoded file's bytes: the metadata `image` carries, and with
    /// any other `options.metadata` than `keep` nothing but its ICC profile (which a `strip`
    /// image has not): the savers of JPEG, WebP and AVIF add an EXIF block of their own. A
    /// JPEG gets a restart marker every `restartInterval` MCUs when it is above 0.
    func encode(_ image: VipsImageRef, options: EncodeOptions, restartInterval: Int = 0) throws(LibvipsFailure) -> [UInt8] {
        let bytes = try Libvips.save(saverName) { save(image, options: options, restartInterval: restartInterval, to: $0) }
        guard options.metadata != .keep, let strip = metadataStripper else { return bytes }
        guard let result = strip(bytes) else {
            throw LibvipsFailure(message: "the encoded \(name) is not well formed: cannot strip its metadata")
        }
        return result
    }

    /// Whether ``encode(_:options:)`` writes exactly what the saver writes, so that the saver
    /// may write straight to a file (``save(_:options:to:)``): not when it strips metadata from
    /// the saver's bytes afterwards.
    func savesDirectly(_ options: EncodeOptions) -> Bool {
        options.metadata == .keep || metadataStripper == nil
    }

    /// Whether the libvips saver encodes the rows as it takes them (`jpegsave`, `pngsave`,
    /// `tiffsave`), so that whoever supplies them waits on the encoder; `webpsave` and
    /// `heifsave` copy the rows into a whole picture and encode it at the end.
    var saverEncodesRowsAsTaken: Bool {
        switch self {
        case .jpeg, .png, .tiff: true
        case .webp, .avif: false
        }
    }

    /// libvips's default effort of `webpsave` and `heifsave`, what an output that names none gets.
    static let defaultEffort = 4

    /// The libvips saver, for messages.
    var saverName: String {
        switch self {
        case .jpeg: "jpegsave"
        case .png: "pngsave"
        case .webp: "webpsave"
        case .tiff: "tiffsave"
        case .avif: "heifsave"
        }
    }

    /// What keeps only the colour profile of this format's encoded bytes (nil: the saver writes
    /// no metadata of its own, the image carries none when stripped).
    private var metadataStripper: (([UInt8]) -> [UInt8]?)? {
        switch self {
        case .jpeg: MetadataStripping.jpegKeepingOnlyColourProfile
        case .webp: MetadataStripping.webpKeepingOnlyColourProfile
        case .avif: MetadataStripping.avifKeepingOnlyColourProfile
        case .png, .tiff: nil
        }
    }

    /// Runs the saver for this format on `image` into `target`, with `options` (and a JPEG's
    /// restart interval, in MCUs: 0 for none): libvips's status.
    func save(
        _ image: VipsImageRef, options: EncodeOptions, restartInterval: Int = 0, to target: UnsafeMutablePointer<VipsTarget>
    ) -> Int32 {
        let quality = Int32(options.quality)
        switch self {
        case .jpeg:
            let interlace: Int32 = options.progressive ? 1 : 0
            let subsampling: VipsForeignSubsample
            switch options.subsampling {
            case .auto: subsampling = VIPS_FOREIGN_SUBSAMPLE_AUTO
            case .halved: subsampling = VIPS_FOREIGN_SUBSAMPLE_ON
            case .full: subsampling = VIPS_FOREIGN_SUBSAMPLE_OFF
            }
            return cvips_jpegsave_target(
                image.pointer, target, quality, interlace, subsampling, options.optimizeCoding ? 1 : 0, Int32(restartInterval))
        case .png:
            return cvips_pngsave_target(image.pointer, target)
        case .webp:
            return cvips_webpsave_target(
                image.pointer, target, quality, options.lossless ? 1 : 0, Int32(options.effort ?? Self.defaultEffort))
        case .tiff:
            return cvips_tiffsave_target(image.pointer, target)
        case .avif:
            return cvips_avifsave_target(image.pointer, target, quality, Int32(options.effort ?? Self.defaultEffort))
        }
    }
}
