// Every libvips call blurfarm makes goes through this file: start-up, the error buffer, image
// lifetimes, and thin throwing wrappers around the C calls (the variadic ones via CVipsShim).
// Callers above this file never see a raw VipsImage pointer or a libvips return code.
import BlurfarmCore
import BlurfarmSystem
import CVips
import CVipsShim

/// The outcome of starting libvips, decided once per process (Swift runs a global's
/// initialiser exactly once, thread-safely).
private let libvipsStartup: String? = cvips_load().map { String(cString: $0) }

/// The version of the libvips cvips_load loads, read once from the library mapped but not
/// started (``Libvips/version``).
private let mappedLibvipsVersion = cvips_version().map { String(cString: $0) } ?? "unavailable"

/// libvips's built-in sRGB profile, the profile of every decoded image that had one.
private let builtinSRGBProfile: [UInt8]? = {
    var blob: UnsafeMutablePointer<VipsBlob>?
    guard cvips_profile_load("srgb", &blob) == 0, let blob else {
        _ = Libvips.takeErrorMessage()
        return nil
    }
    defer { vips_area_unref(UnsafeMutableRawPointer(blob).assumingMemoryBound(to: VipsArea.self)) }
    var length = 0
    guard let data = vips_blob_get(blob, &length) else { return nil }
    return Array(UnsafeRawBufferPointer(start: data, count: length))
}()

/// Namespace for the libvips wrappers.
enum Libvips {
    /// Starts libvips if this is the first call in the process; throws when it cannot start.
    static func start() throws(ImageIOError) {
        if let failure = libvipsStartup {
            throw ImageIOError(code: .libvipsUnavailable, path: nil, message: failure)
        }
    }

    /// The version of the libvips library loaded at run time, e.g. "8.14.1"; "unavailable" when
    /// it cannot be loaded. Maps the library (once) without starting it.
    static var version: String { mappedLibvipsVersion }

    /// The file of the libvips library mapped, as the dynamic loader found it; nil when it
    /// cannot be loaded. Maps the library (once) without starting it.
    static var file: String? { cvips_library_file().map { String(cString: $0) } }

    /// The bytes of libvips's built-in sRGB profile (nil only if libvips cannot provide it).
    static var srgbProfile: [UInt8]? { builtinSRGBProfile }

    /// Reads and clears libvips's error buffer; returns its first non-empty line, trimmed, or
    /// nil when the buffer was empty.
    ///
    /// The buffer is process-wide: when two threads fail at the same moment, a message can land
    /// in the other's error. The file name in the error is always the right one (it is ours).
    static func takeErrorMessage() -> String? {
        guard let copy = vips_error_buffer_copy() else { return nil }
        defer { g_free(copy) }
        let text = String(cString: copy)
        for line in text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            let trimmed = line.trimmingWhitespace()
            if !trimmed.isEmpty { return trimmed }
        }
        return nil
    }

    /// Configures libvips's worker-thread count (0 restores its default: one per core).
    static func setConcurrency(_ threads: Int) {
        vips_concurrency_set(Int32(clamping: threads))
    }
}

/// One reference to a `VipsImage`, released when this object goes.
final class VipsImageRef {
    let pointer: UnsafeMutablePointer<VipsImage>

    /// Adopts a reference the caller owns.
    init(adopting pointer: UnsafeMutablePointer<VipsImage>) { self.pointer = pointer }

    deinit { g_object_unref(UnsafeMutableRawPointer(pointer)) }

    var width: Int { Int(vips_image_get_width(pointer)) }
    var height: Int { Int(vips_image_get_height(pointer)) }
    var bands: Int { Int(vips_image_get_bands(pointer)) }
    var format: VipsBandFormat { vips_image_get_format(pointer) }
    var interpretation: VipsInterpretation { vips_image_guess_interpretation(pointer) }
    var hasAlpha: Bool { vips_image_hasalpha(pointer) != 0 }
    /// The orientation tag, 1...8; 1 when absent.
    var orientation: Int { Int(vips_image_get_orientation(pointer)) }

    /// The name of the loader that opened the file, e.g. "jpegload".
    var loader: String? {
        var value: UnsafePointer<CChar>?
        guard vips_image_get_typeof(pointer, "vips-loader") != 0,
            vips_image_get_string(pointer, "vips-loader", &value) == 0, let value
        else { return nil }
        return String(cString: value)
    }

    /// A copy of a binary metadata field ("icc-profile-data", "exif-data", "xmp-data").
    func blob(_ name: String) -> [UInt8]? {
        guard vips_image_get_typeof(pointer, name) != 0 else { return nil }
        var data: UnsafeRawPointer?
        var length = 0
        guard vips_image_get_blob(pointer, name, &data, &length) == 0, let data else {
            _ = Libvips.takeErrorMessage()
            return nil
        }
        return Array(UnsafeRawBufferPointer(start: data, count: length))
    }

    /// Attaches a copy of `bytes` as the binary metadata field `name`.
    func setBlob(_ name: String, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            vips_image_set_blob_copy(pointer, name, raw.baseAddress, raw.count)
        }
    }

    func setInt(_ name: String, _ value: Int) {
        vips_image_set_int(pointer, name, Int32(clamping: value))
    }
}

/// A codec failure with its message (libvips's, or libjpeg's through `CJPEGCodec`), before the
/// caller gives it a file name and a code.
struct LibvipsFailure: Error {
    let message: String
}

extension Libvips {
    /// Runs one libvips call that makes an image; turns its failure into `LibvipsFailure`.
    static func make(
        _ what: String, _ call: (UnsafeMutablePointer<UnsafeMutablePointer<VipsImage>?>) -> Int32
    ) throws(LibvipsFailure) -> VipsImageRef {
        var out: UnsafeMutablePointer<VipsImage>?
        let status = call(&out)
        guard status == 0, let out else {
            if let out { g_object_unref(UnsafeMutableRawPointer(out)) }
            throw LibvipsFailure(message: takeErrorMessage() ?? "\(what) failed")
        }
        discardSeekProbeMessages()
        return VipsImageRef(adopting: out)
    }

    /// libheif, through libvips 8.14's HEIF loader, reads past the end of every AVIF or HEIF
    /// it opens, which leaves "NAME: bad seek to N" in libvips's process-wide error buffer
    /// although the load succeeds; left there, it would be taken as the message of the next
    /// failure, in any thread. Clears the buffer when it holds nothing but such lines.
    private static func discardSeekProbeMessages() {
        guard let buffer = vips_error_buffer(), buffer.pointee != 0 else { return }
        let lines = String(cString: buffer).split(whereSeparator: { $0 == "\n" })
        let isProbe = { (line: Substring) -> Bool in
            let digits = line.reversed().prefix { $0.isASCII && $0.isNumber }
            return !digits.isEmpty && line.dropLast(digits.count).hasSuffix(": bad seek to ")
        }
        if lines.allSatisfy(isProbe) {
            vips_error_clear()
        }
    }

    /// Opens an image file lazily: only the header is read now. Pixels are decoded, strictly
    /// (truncation and decode errors fail), when they are first asked for.
    /// `loader` is the name ``loaderName(forFile:)`` gave for it.
    static func open(_ path: String, loader: String, sequential: Bool) throws(LibvipsFailure) -> VipsImageRef {
        try make("load") { cvips_load_file(loader, path, sequential ? 1 : 0, $0) }
    }

    /// Decodes an encoded image held in `bytes`, strictly, and calls `body` with it while the
    /// bytes are alive (libvips reads from them lazily).
    static func withImage<R>(
        decoding bytes: [UInt8], _ body: (VipsImageRef) throws(LibvipsFailure) -> R
    ) throws(LibvipsFailure) -> R {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(LibvipsFailure) -> R in
                let image = try make("load from memory") { cvips_load_buffer(raw.baseAddress, raw.count, $0) }
                return try body(image)
            }
        }
        return try result.get()
    }

    /// The name of the libvips loader that recognises the file's contents, or nil.
    static func loaderName(forFile path: String) -> String? {
        guard let name = cvips_find_load(path) else {
            _ = takeErrorMessage()
            return nil
        }
        return String(cString: name)
    }

    /// Decodes all of `image` into memory (needed before rotating a sequential image).
    static func copyToMemory(_ image: VipsImageRef) throws(LibvipsFailure) -> VipsImageRef {
        guard let out = vips_image_copy_memory(image.pointer) else {
            throw LibvipsFailure(message: takeErrorMessage() ?? "decode failed")
        }
        return VipsImageRef(adopting: out)
    }

    static func autorot(_ image: VipsImageRef) throws(LibvipsFailure) -> VipsImageRef {
        try make("autorot") { cvips_autorot(image.pointer, $0) }
    }

    /// vips_thumbnail of a file to exactly `width` × `height` displayed pixels, upright, strict
    /// (see cvips_thumbnail_file for which files it may be given).
    static func thumbnail(file path: String, width: Int, height: Int) throws(LibvipsFailure) -> VipsImageRef {
        try make("thumbnail") { cvips_thumbnail_file(path, Int32(width), Int32(height), $0) }
    }

    /// ``thumbnail(file:width:height:)`` of `image`, opened sequentially: the same pixels for a
    /// file without shrink-on-load, of its first page, never of a smaller page or an embedded
    /// thumbnail (cvips_thumbnail_image).
    static func thumbnail(_ image: VipsImageRef, width: Int, height: Int) throws(LibvipsFailure) -> VipsImageRef {
        try make("thumbnail") { cvips_thumbnail_image(image.pointer, Int32(width), Int32(height), $0) }
    }

    /// ``thumbnail(file:covering:_:interesting:)`` of `image`, opened sequentially (as ``thumbnail(_:width:height:)``).
    static func thumbnail(
        _ image: VipsImageRef, covering width: Int, _ height: Int, interesting: VipsInteresting
    ) throws(LibvipsFailure) -> VipsImageRef {
        try make("thumbnail") { cvips_thumbnail_image_smartcrop(image.pointer, Int32(width), Int32(height), interesting, $0) }
    }

    /// vips_thumbnail of a file covering `width` × `height`, cut to it by vips_smartcrop with
    /// `interesting` (as vipsthumbnail's `--smartcrop`).
    static func thumbnail(
        file path: String, covering width: Int, _ height: Int, interesting: VipsInteresting
    ) throws(LibvipsFailure) -> VipsImageRef {
        try make("thumbnail") { cvips_thumbnail_file_smartcrop(path, Int32(width), Int32(height), interesting, $0) }
    }

    /// vips_resize (lanczos3) by `hscale` × `vscale`, the format kept.
    static func resize(_ image: VipsImageRef, hscale: Double, vscale: Double) throws(LibvipsFailure) -> VipsImageRef {
        try make("resize") { cvips_resize(image.pointer, hscale, vscale, $0) }
    }

    /// vips_premultiply: colour times alpha / `maxAlpha`, as float.
    static func premultiply(_ image: VipsImageRef, maxAlpha: Double) throws(LibvipsFailure) -> VipsImageRef {
        try make("premultiply") { cvips_premultiply(image.pointer, maxAlpha, $0) }
    }

    /// vips_unpremultiply: colour divided by alpha / `maxAlpha` (alpha 0 gives colour 0), as float.
    static func unpremultiply(_ image: VipsImageRef, maxAlpha: Double) throws(LibvipsFailure) -> VipsImageRef {
        try make("unpremultiply") { cvips_unpremultiply(image.pointer, maxAlpha, $0) }
    }

    static func extractArea(
        _ image: VipsImageRef, left: Int, top: Int, width: Int, height: Int
    ) throws(LibvipsFailure) -> VipsImageRef {
        try make("extract_area") {
            cvips_extract_area(image.pointer, Int32(left), Int32(top), Int32(width), Int32(height), $0)
        }
    }

    /// vips_smartcrop: the `width` × `height` rectangle libvips finds most `interesting`.
    static func smartcrop(
        _ image: VipsImageRef, width: Int, height: Int, interesting: VipsInteresting
    ) throws(LibvipsFailure) -> VipsImageRef {
        try make("smartcrop") { cvips_smartcrop(image.pointer, Int32(width), Int32(height), interesting, $0) }
    }

    /// vips_sharpen with `sigma` and libvips's other defaults; interpretation and format kept.
    static func sharpen(_ image: VipsImageRef, sigma: Double) throws(LibvipsFailure) -> VipsImageRef {
        try make("sharpen") { cvips_sharpen(image.pointer, sigma, $0) }
    }

    static func iccTransformToSRGB(_ image: VipsImageRef, depth: Int) throws(LibvipsFailure) -> VipsImageRef {
        try make("icc_transform") { cvips_icc_transform_to_srgb(image.pointer, Int32(depth), $0) }
    }

    static func colourspace(
        _ image: VipsImageRef, to space: VipsInterpretation, from source: VipsInterpretation
    ) throws(LibvipsFailure) -> VipsImageRef {
        try make("colourspace") { cvips_colourspace(image.pointer, space, source, $0) }
    }

    static func extractBands(_ image: VipsImageRef, first: Int, count: Int) throws(LibvipsFailure) -> VipsImageRef {
        try make("extract_band") { cvips_extract_bands(image.pointer, Int32(first), Int32(count), $0) }
    }

    static func withInterpretation(
        _ image: VipsImageRef, _ space: VipsInterpretation
    ) throws(LibvipsFailure) -> VipsImageRef {
        try make("copy") { cvips_set_interpretation(image.pointer, space, $0) }
    }

    static func cast(_ image: VipsImageRef, to format: VipsBandFormat) throws(LibvipsFailure) -> VipsImageRef {
        try make("cast") { cvips_cast(image.pointer, format, $0) }
    }

    static func gaussblur(
        _ image: VipsImageRef, sigma: Double, precision: VipsPrecision
    ) throws(LibvipsFailure) -> VipsImageRef {
        try make("gaussblur") { cvips_gaussblur(image.pointer, sigma, precision, $0) }
    }

    static func conv(
        _ image: VipsImageRef, mask: VipsImageRef, precision: VipsPrecision
    ) throws(LibvipsFailure) -> VipsImageRef {
        try make("conv") { cvips_conv(image.pointer, mask.pointer, precision, $0) }
    }

    /// An image over a copy of `samples`, interleaved, `bands` samples per pixel, each sample
    /// of `format` (which must match `Sample`'s size).
    static func image<Sample>(
        copying samples: [Sample], width: Int, height: Int, bands: Int, format: VipsBandFormat
    ) throws(LibvipsFailure) -> VipsImageRef {
        let out = samples.withUnsafeBytes { raw in
            vips_image_new_from_memory_copy(
                raw.baseAddress, raw.count, Int32(width), Int32(height), Int32(bands), format)
        }
        guard let out else { throw LibvipsFailure(message: takeErrorMessage() ?? "image from memory failed") }
        return VipsImageRef(adopting: out)
    }

    /// An image over the samples at `bytes`, not copied: they must outlive the image and every
    /// image made from it (``JPEGChunks`` encodes a chunk while its rows are held).
    static func image(
        borrowing bytes: UnsafeRawBufferPointer, width: Int, height: Int, bands: Int, format: VipsBandFormat
    ) throws(LibvipsFailure) -> VipsImageRef {
        let out = vips_image_new_from_memory(bytes.baseAddress, bytes.count, Int32(width), Int32(height), Int32(bands), format)
        guard let out else { throw LibvipsFailure(message: takeErrorMessage() ?? "image from memory failed") }
        return VipsImageRef(adopting: out)
    }

    /// A matrix image (a convolution mask) with scale 1 and offset 0; `values` row by row.
    static func matrix(width: Int, height: Int, values: [Double]) throws(LibvipsFailure) -> VipsImageRef {
        let out = values.withUnsafeBufferPointer {
            vips_image_new_matrix_from_array(Int32(width), Int32(height), $0.baseAddress, Int32($0.count))
        }
        guard let out else { throw LibvipsFailure(message: takeErrorMessage() ?? "matrix failed") }
        return VipsImageRef(adopting: out)
    }

    /// Computes every pixel of `image` and calls `body` with the interleaved samples
    /// (row after row, no padding). The memory is freed when `body` returns.
    static func withComputedPixels<R>(
        of image: VipsImageRef, _ body: (UnsafeRawBufferPointer) throws(LibvipsFailure) -> R
    ) throws(LibvipsFailure) -> R {
        let (memory, size) = try computed(image)
        defer { g_free(memory) }
        return try body(UnsafeRawBufferPointer(start: memory, count: size))
    }

    /// Computes every pixel of `image` into memory of its own: the interleaved samples (row
    /// after row, no padding), freed when the storage goes.
    static func computedPixels(of image: VipsImageRef) throws(LibvipsFailure) -> PixelStorage {
        let (memory, size) = try computed(image)
        return PixelStorage(adopting: memory, byteCount: size) { pointer, _ in g_free(pointer) }
    }

    /// Every pixel of `image` computed into memory libvips allocates (g_malloc: the caller
    /// frees it with g_free), and its byte count.
    private static func computed(_ image: VipsImageRef) throws(LibvipsFailure) -> (UnsafeMutableRawPointer, Int) {
        var size = 0
        guard let memory = vips_image_write_to_memory(image.pointer, &size) else {
            throw LibvipsFailure(message: takeErrorMessage() ?? "computing pixels failed")
        }
        return (memory, size)
    }

    /// Encodes `image` with one of the shim's `*save_target` wrappers into memory and returns
    /// the bytes.
    static func save(
        _ what: String, _ call: (UnsafeMutablePointer<VipsTarget>) -> Int32
    ) throws(LibvipsFailure) -> [UInt8] {
        let target = VipsTargetRef(memory: ())
        try save(what, to: target, call)
        var blob: UnsafeMutablePointer<VipsBlob>?
        guard cvips_target_blob(target.pointer, &blob) == 0, let blob else {
            throw LibvipsFailure(message: "\(what) left no bytes")
        }
        defer { vips_area_unref(UnsafeMutableRawPointer(blob).assumingMemoryBound(to: VipsArea.self)) }
        var length = 0
        guard let data = vips_blob_get(blob, &length) else { return [] }
        return Array(UnsafeRawBufferPointer(start: data, count: length))
    }

    /// Encodes `image` with one of the shim's `*save_target` wrappers into `target`.
    static func save(
        _ what: String, to target: VipsTargetRef, _ call: (UnsafeMutablePointer<VipsTarget>) -> Int32
    ) throws(LibvipsFailure) {
        guard call(target.pointer) == 0 else {
            throw LibvipsFailure(message: takeErrorMessage() ?? "\(what) failed")
        }
    }
}

/// One reference to a `VipsTarget`, where a saver writes, released when this object goes.
final class VipsTargetRef {
    let pointer: UnsafeMutablePointer<VipsTarget>

    /// A target that collects the bytes in memory.
    init(memory: Void) { pointer = vips_target_new_to_memory() }

    /// A target that writes to the open file `descriptor` (``cvips_target_new_to_file``; the
    /// caller still owns and closes `descriptor`), keeping the errno of a call that failed.
    init(file descriptor: Int32) { pointer = cvips_target_new_to_file(descriptor) }

    /// For a target made by ``init(file:)``: the first call on the file that failed (a write on
    /// a full disk, past the file-size limit), or nil when none did.
    var fileFailure: SystemCallError? {
        var code: Int32 = 0
        guard let call = cvips_target_file_failure(pointer, &code) else { return nil }
        return SystemCallError(call: String(cString: call), errno: code)
    }

    deinit { g_object_unref(UnsafeMutableRawPointer(pointer)) }
}

extension Substring {
    /// The text without leading and trailing spaces and tabs.
    func trimmingWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(self[first...last])
    }
}
