import BlurfarmCore
import CVips

/// Reads image files through libvips into blurfarm's pixel format.
///
/// Decoding is strict: truncated or corrupt data is an error, never a partly grey image.
/// All functions are safe to call from several threads at once.
public enum ImageReader {
    /// The default largest `width * height` a file may declare: 16383 × 16383, sharp's limit.
    /// A policy against decompression bombs: a small file can declare a huge image.
    public static let defaultPixelLimit = 268_402_689

    /// The version of the libvips library in use, e.g. "8.14.1" (part of an output's
    /// up-to-date key: a new libvips may decode differently).
    public static var libvipsVersion: String { Libvips.version }

    /// Reads the header of the image at `path` without decoding pixels.
    ///
    /// - Throws: `ImageIOError` with code `.fileMissing`, `.fileUnreadable`, `.notAnImage`,
    ///   `.decodeFailed` (a header libvips cannot parse) or `.libvipsUnavailable`.
    public static func header(ofFile path: String) throws(ImageIOError) -> ImageHeader {
        try Libvips.start()
        let file = try InputFile(path)
        defer { file.close() }
        let image = try file.open(sequential: true)
        let sixteen = image.format != VIPS_FORMAT_UCHAR
        let swap = image.orientation >= 5  // orientations 5...8 turn the image a quarter
        return ImageHeader(
            width: swap ? image.height : image.width, height: swap ? image.width : image.height,
            bitDepth: sixteen ? 16 : 8, hasAlpha: image.hasAlpha, loader: image.loader ?? "unknown",
            hasICCProfile: vips_image_get_typeof(image.pointer, "icc-profile-data") != 0,
            orientation: image.orientation)
    }

    /// Decodes the image at `path` to premultiplied RGBA Float32, upright and in sRGB.
    ///
    /// Exactly:
    /// 1. The header's `width * height` is checked against `pixelLimit` before any pixel is
    ///    decoded.
    /// 2. The image is turned upright by its EXIF orientation (vips_autorot).
    /// 3. Colour is brought to sRGB: an embedded ICC profile is applied (relative colorimetric,
    ///    to libvips's built-in sRGB profile, keeping 16 bits for 16-bit sources) unless it is
    ///    that very profile; without a profile, grey becomes RGB and CMYK uses libvips's
    ///    default CMYK profile.
    /// 4. Each 8-bit sample v becomes `Float(v) / 255`, each 16-bit one `Float(v) / 65535`;
    ///    red, green and blue are then multiplied by alpha. Images without alpha get alpha 1.
    ///    Values stay sRGB-encoded (not linear).
    ///
    /// - Parameter pixelLimit: the largest `width * height` accepted.
    /// - Throws: `ImageIOError` with code `.fileMissing`, `.fileUnreadable`, `.notAnImage`,
    ///   `.overPixelLimit`, `.decodeFailed` (truncated or corrupt data, a bad ICC profile; the
    ///   message is libvips's) or `.libvipsUnavailable`.
    public static func read(_ path: String, pixelLimit: Int = defaultPixelLimit) throws(ImageIOError) -> DecodedImage {
        try Libvips.start()
        let file = try InputFile(path)
        defer { file.close() }
        let loaded = try file.open(sequential: true)

        let (pixelCount, overflow) = loaded.width.multipliedReportingOverflow(by: loaded.height)
        if overflow || pixelCount > pixelLimit {
            throw ImageIOError(
                code: .overPixelLimit, path: path,
                message: "\(loaded.width)x\(loaded.height) is \(overflow ? "too many" : String(pixelCount)) "
                    + "pixels, over the limit of \(pixelLimit)")
        }

        do throws(LibvipsFailure) {
            let sixteen = loaded.format != VIPS_FORMAT_UCHAR
            var image = loaded
            if image.orientation != 1 {
                // A sequential image cannot be rotated in place: decode it to memory first.
                image = try Libvips.autorot(try Libvips.copyToMemory(image))
            }
            let exif = image.blob("exif-data")
            let xmp = image.blob("xmp-data")

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
            let icc = image.blob("icc-profile-data")
            let width = image.width, height = image.height, bands = image.bands
            let pixels = try Libvips.withComputedPixels(of: image) { samples in
                PixelConversion.pixelBuffer(
                    from: samples, width: width, height: height, bands: bands, sixteenBit: sixteen)
            }
            return DecodedImage(
                pixels: pixels, bitDepth: sixteen ? 16 : 8, hasAlpha: bands == 4,
                metadata: ImageMetadata(iccProfile: icc, exif: exif, xmp: xmp))
        } catch {
            throw ImageIOError(code: .decodeFailed, path: path, message: error.message)
        }
    }
}

/// An input file opened by us before libvips sees it: missing and unreadable files get clear
/// errors, and names libvips would misparse reach it as `/proc/self/fd/N`.
private struct InputFile {
    let path: String
    let descriptor: Int32

    init(_ path: String) throws(ImageIOError) {
        self.path = path
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
        case .other:
            // Opening a FIFO would block until someone writes to it.
            throw ImageIOError(code: .fileUnreadable, path: path, message: "is not a regular file")
        case .regular:
            break
        }
        do {
            descriptor = try Syscalls.openForReading(path)
        } catch {
            throw ImageIOError(code: .fileUnreadable, path: path, message: "cannot open: \(error.reason)")
        }
    }

    func close() { try? Syscalls.close(descriptor) }

    /// The name handed to libvips: the path itself, unless libvips would read a trailing
    /// "[...]" as options.
    var nameForLibvips: String {
        path.hasSuffix("]") ? "/proc/self/fd/\(descriptor)" : path
    }

    /// The file's header through libvips (no pixels are decoded yet).
    func open(sequential: Bool) throws(ImageIOError) -> VipsImageRef {
        guard Libvips.loaderName(forFile: nameForLibvips) != nil else {
            throw ImageIOError(code: .notAnImage, path: path, message: "not an image in any format libvips reads")
        }
        do {
            return try Libvips.open(nameForLibvips, sequential: sequential)
        } catch {
            throw ImageIOError(code: .decodeFailed, path: path, message: error.message)
        }
    }
}
