import BlurfarmCore
import BlurfarmKernels
import CVips

extension ThumbnailCrop {
    /// The left and top of a `width` × `height` rectangle kept of a `scaledWidth` ×
    /// `scaledHeight` image, for the gravities (the smart crops are libvips's to place).
    func offset(scaledWidth: Int, scaledHeight: Int, width: Int, height: Int) -> (left: Int, top: Int) {
        let spareX = scaledWidth - width, spareY = scaledHeight - height
        switch self {
        case .centre, .attention, .entropy: return (spareX / 2, spareY / 2)
        case .north: return (spareX / 2, 0)
        case .northEast: return (spareX, 0)
        case .east: return (spareX, spareY / 2)
        case .southEast: return (spareX, spareY)
        case .south: return (spareX / 2, spareY)
        case .southWest: return (0, spareY)
        case .west: return (0, spareY / 2)
        case .northWest: return (0, 0)
        }
    }
}

extension ImageReader {
    /// Decodes `path` shrunk to fit `width` × `height` pixels: shrunk on load as vips_thumbnail
    /// does it (JPEG and WebP decode at a reduced size, so a 256-pixel thumbnail of a large photo
    /// is fast), then reduced with Lanczos-3: an 8-bit colour JPEG by libjpeg and
    /// ``LanczosResampler`` (``resampledJPEG(_:_:width:height:)``), other files by vips_thumbnail.
    /// Files vips_thumbnail would mishandle (CMYK, 16-bit, ...) are decoded at full size, then
    /// reduced by ``resized(_:width:height:sixteenBit:)``.
    ///
    /// Either size may be nil: then only the other bounds the image (`inside` only). The box
    /// applies to the image as displayed (after its EXIF orientation). Sizes are exact: the
    /// limiting side gets the box's size and the other side is the source's scaled by the same
    /// factor, rounded to the nearest pixel (at least 1): `inside` 256 × 256 of a 853 × 1280 image
    /// is 171 × 256.
    ///
    /// - `inside`: fit inside the box, keep the aspect ratio.
    /// - `cover`: fill the box, keep the aspect ratio, crop the overflow as `crop` says (centred
    ///   by default; a side or corner; or libvips's `attention` or `entropy` smart crop, as
    ///   `vipsthumbnail --smartcrop` does it, on the image before its ICC profile is applied).
    /// - `exact`: exactly `width` × `height`, aspect ratio not kept.
    ///
    /// Without `upscale` no side grows: an image already inside the box keeps its size (`inside`),
    /// `cover` crops the unscaled image to at most the box, and `exact` takes each side as the
    /// smaller of the box's and the image's. With `upscale` a small image grows to the box.
    ///
    /// Otherwise exactly as ``read(_:pixelLimit:memoryLimit:allocator:)``: the header's
    /// `width * height` is checked against `pixelLimit` and the memory the decode allocates
    /// against `memoryLimit` before any pixel is decoded; decoding is strict (a JPEG must reach
    /// its end-of-image marker); the image is upright;
    /// colour is brought to sRGB (ICC profile applied, 16 bits kept for 16-bit sources) by the same
    /// code as `read`; the result has the same shape (premultiplied RGBA Float32, `bitDepth`,
    /// `hasAlpha`, metadata with the orientation reset). See "Thumbnails" in docs/image-io.md for
    /// which files shrink on load and where the ICC transform happens.
    ///
    /// - Parameters:
    ///   - fit: how the image fits the box; `upscale`: whether a smaller image may grow.
    ///   - crop: what `cover` keeps (ignored by the other fits).
    ///   - sharpen: the sigma of `vips_sharpen` (its other parameters libvips's defaults) applied
    ///     to the thumbnail in sRGB, after the resize and crop; nil for none.
    ///   - width: the box's width in pixels (1...10 000 000), or nil.
    ///   - height: the box's height in pixels (1...10 000 000), or nil.
    ///   - pixelLimit: the largest `width * height` accepted, for the file's header and for the
    ///     thumbnail before cropping (upscaling can make a large image from a small file).
    ///   - memoryLimit: the most bytes the decode may allocate, as for `read`.
    ///   - allocator: where the pixels go, as for ``read(_:pixelLimit:memoryLimit:allocator:)``.
    /// - Throws: `ImageIOError` with code `.invalidArgument` (both sizes nil, a size out of range,
    ///   `cover` or `exact` without both sizes, a sharpening sigma not above 0; checked before the
    ///   file is opened), `.fileMissing`, `.fileUnreadable`, `.notAnImage`, `.overPixelLimit`,
    ///   `.overMemoryLimit`, `.decodeFailed` (truncated or corrupt data, a bad ICC profile; the
    ///   message is libvips's) or `.libvipsUnavailable`.
    public static func thumbnail(
        _ path: String, width: Int?, height: Int?, fit: ThumbnailFit, upscale: Bool, crop: ThumbnailCrop = .centre,
        sharpen: Double? = nil, pixelLimit: Int = defaultPixelLimit, memoryLimit: Int = usableMemory,
        allocator: (any PixelAllocator)? = nil, confinement: RootConfinement? = nil
    ) throws(ImageIOError) -> DecodedImage {
        try decode(
            path, .thumbnail(width: width, height: height, fit: fit, upscale: upscale, crop: crop, sharpen: sharpen),
            pixelLimit: pixelLimit, memoryLimit: memoryLimit, allocator: allocator, confinement: confinement)[0]
    }

    /// Thumbnails of `path` at several widths (`inside`, no height) from one decode: the
    /// largest exactly as ``thumbnail(_:width:height:fit:upscale:crop:sharpen:pixelLimit:memoryLimit:allocator:)``
    /// makes it (shrink-on-load at its factor, Lanczos-3 reduce), each smaller one reduced from
    /// that (``resized(_:width:height:sixteenBit:)``, after the ICC profile is applied), at the size a
    /// thumbnail of its own width would have. Sharpening, if asked, is applied to each after
    /// its reduce. Returned in the order of `widths`, which must be ascending and distinct.
    /// See "Thumbnails" in docs/image-io.md for why the smaller ones are reduced from the
    /// largest rather than decoded again.
    ///
    /// - Throws: as `thumbnail`; `.invalidArgument` for no widths, or widths not ascending or
    ///   out of range.
    public static func thumbnails(
        _ path: String, widths: [Int], upscale: Bool, sharpen: Double? = nil, pixelLimit: Int = defaultPixelLimit,
        memoryLimit: Int = usableMemory, allocator: (any PixelAllocator)? = nil, confinement: RootConfinement? = nil
    ) throws(ImageIOError) -> [DecodedImage] {
        try decode(
            path, .thumbnails(widths: widths, upscale: upscale, sharpen: sharpen), pixelLimit: pixelLimit,
            memoryLimit: memoryLimit, allocator: allocator, confinement: confinement)
    }

    /// The images of a thumbnail request (nil for `.whole`), each made by `convert` as
    /// ``thumbnails(_:width:height:fit:upscale:crop:sharpen:smallerWidths:pixelLimit:memoryLimit:confinement:as:)``
    /// says.
    static func thumbnails<Image>(
        of path: String, _ request: DecodeRequest, pixelLimit: Int, memoryLimit: Int, confinement: RootConfinement?,
        as convert: (VipsImageRef, Bool) throws(LibvipsFailure) -> Image
    ) throws(ImageIOError) -> [Image]? {
        switch request {
        case .whole:
            return nil
        case .thumbnail(let width, let height, let fit, let upscale, let crop, let sharpen):
            return try thumbnails(
                path, width: width, height: height, fit: fit, upscale: upscale, crop: crop, sharpen: sharpen,
                smallerWidths: [], pixelLimit: pixelLimit, memoryLimit: memoryLimit, confinement: confinement,
                as: convert)
        case .thumbnails(let widths, let upscale, let sharpen):
            try checkWidths(widths, path: path)
            return try thumbnails(
                path, width: widths.last!, height: nil, fit: .inside, upscale: upscale, crop: .centre,
                sharpen: sharpen, smallerWidths: Array(widths.dropLast()), pixelLimit: pixelLimit,
                memoryLimit: memoryLimit, confinement: confinement, as: convert)
        }
    }

    /// Fails unless `widths` are ascending, distinct, in range, and at least one.
    private static func checkWidths(_ widths: [Int], path: String) throws(ImageIOError) {
        guard !widths.isEmpty, zip(widths, widths.dropFirst()).allSatisfy({ $0 < $1 }),
            widths.allSatisfy({ (1...ThumbnailBox.maximumSide).contains($0) })
        else {
            throw ImageIOError(
                code: .invalidArgument, path: path, message: "thumbnail widths \(widths) are not ascending, distinct and in 1...\(ThumbnailBox.maximumSide)")
        }
    }

    /// The thumbnail at `width` × `height`, preceded by those at `smallerWidths` (`inside`),
    /// reduced from it; each made what its caller keeps by `convert` (the image in sRGB or
    /// RGB16 as ``inSRGB(_:sixteenBit:)`` makes it, and whether it is 16-bit), called before
    /// the file is closed.
    private static func thumbnails<Image>(
        _ path: String, width: Int?, height: Int?, fit: ThumbnailFit, upscale: Bool, crop: ThumbnailCrop,
        sharpen: Double?, smallerWidths: [Int], pixelLimit: Int, memoryLimit: Int, confinement: RootConfinement?,
        as convert: (VipsImageRef, Bool) throws(LibvipsFailure) -> Image
    ) throws(ImageIOError) -> [Image] {
        let box: ThumbnailBox
        do {
            box = try ThumbnailBox(width: width, height: height, fit: fit, upscale: upscale)
        } catch {
            throw ImageIOError(code: .invalidArgument, path: path, message: error.message)
        }
        if let sharpen, !(sharpen > 0 && sharpen.isFinite) {
            throw ImageIOError(code: .invalidArgument, path: path, message: "sharpening sigma \(sharpen) is not above 0")
        }
        try Libvips.start()
        let file = try InputFile(path, confinement: confinement)
        defer { file.close() }
        let loaded = try file.open(sequential: true)
        try checkPixelLimit(of: loaded, pixelLimit, path: path)

        let swap = loaded.orientation >= 5  // orientations 5...8 turn the image a quarter
        let sourceWidth = swap ? loaded.height : loaded.width
        let sourceHeight = swap ? loaded.width : loaded.height
        let plan = box.plan(sourceWidth: sourceWidth, sourceHeight: sourceHeight)
        try checkPixelLimit(
            "a thumbnail of \(plan.scaledWidth)x\(plan.scaledHeight)", plan.scaledWidth, plan.scaledHeight, pixelLimit,
            path: path)

        let sixteen = loaded.format != VIPS_FORMAT_UCHAR
        let interpretation = loaded.interpretation
        let eightBitRGBOrGrey =
            !sixteen && (interpretation == VIPS_INTERPRETATION_sRGB || interpretation == VIPS_INTERPRETATION_B_W)
        // libvips 8.14's vips_thumbnail premultiplies alpha only when both sides change size.
        let oneSideKept = (plan.scaledWidth == sourceWidth) != (plan.scaledHeight == sourceHeight)
        let shrinksOnLoad = eightBitRGBOrGrey && !(loaded.hasAlpha && oneSideKept)
        try checkMemory(
            DecodeMemory.whole(
                decodeSource(of: loaded), width: plan.scaledWidth, height: plan.scaledHeight,
                copiesSource: !shrinksOnLoad),
            memoryLimit, of: loaded, streamed: false, path: path)
        try file.checkStructure(of: loaded)

        do throws(LibvipsFailure) {
            let smart: VipsInteresting? =
                crop == .attention ? VIPS_INTERESTING_ATTENTION : crop == .entropy ? VIPS_INTERESTING_ENTROPY : nil
            let cropped = plan.width != plan.scaledWidth || plan.height != plan.scaledHeight
            var image: VipsImageRef
            if shrinksOnLoad {
                // vips_thumbnail's own colour steps do nothing to 8-bit sRGB or grey: it shrinks
                // on load, reduces, turns upright, and leaves the embedded profile for `decoded`
                // to apply. Its file is the one we opened and checked, by descriptor. An 8-bit
                // colour JPEG is libjpeg's and our resampler's, an 8-bit RGB PNG our resampler's
                // over `loaded` (a PNG has no shrink-on-load); another PNG is given to
                // vips_thumbnail_image as `loaded`, the image whose header was checked, which makes
                // the pixels vips_thumbnail makes of the file without its searches for the loader
                // and openings of the file. So is every file but a JPEG's or a WebP's, whose
                // shrink-on-load decodes the picture `read` decodes: given a file, vips_thumbnail
                // takes a smaller page of a TIFF whose pages halve in size, and a HEIF's embedded
                // thumbnail, which need not be the picture (a page left blank, a thumbnail an editor
                // did not redo after a face was painted out): a thumbnail, and a detector's look at
                // a whole large photo, would show another picture than the output.
                let fromLoaded = !(loaded.loader.map { $0.hasPrefix("jpegload") || $0.hasPrefix("webpload") } ?? false)
                if let smart, cropped, plan.width == box.width, plan.height == box.height {
                    // A smart crop of the box: vips_thumbnail's own, for vipsthumbnail's pixels
                    // (its scale is one factor for both sides, not our two rounded sizes).
                    image =
                        fromLoaded
                        ? try Libvips.thumbnail(loaded, covering: plan.width, plan.height, interesting: smart)
                        : try Libvips.thumbnail(
                            file: file.descriptorPath, covering: plan.width, plan.height, interesting: smart)
                    try checkSize(image, plan.width, plan.height)
                    return [try finished(image, sharpen: sharpen, sixteenBit: sixteen, as: convert)]
                }
                if let ours = try resampledJPEG(file, loaded, width: plan.scaledWidth, height: plan.scaledHeight) {
                    image = ours
                } else if let ours = try resampledPNG(loaded, width: plan.scaledWidth, height: plan.scaledHeight) {
                    image = ours
                } else if fromLoaded {
                    image = try Libvips.thumbnail(loaded, width: plan.scaledWidth, height: plan.scaledHeight)
                } else {
                    image = try Libvips.thumbnail(
                        file: file.descriptorPath, width: plan.scaledWidth, height: plan.scaledHeight)
                }
            } else {
                // CMYK, 16-bit, Lab, ...: vips_thumbnail (libvips 8.14) would convert these itself
                // (CMYK not through the sRGB profile `read` uses, and leaving the CMYK profile
                // attached; 16 bits down to 8). With alpha and one side kept, it would resize
                // without premultiplying, letting in the colour stored under transparent pixels.
                // Decode at full size as `read` does, then resize as vips_thumbnail would.
                image = try inSRGB(try upright(loaded), sixteenBit: sixteen)
                image = try resized(image, width: plan.scaledWidth, height: plan.scaledHeight, sixteenBit: sixteen)
            }
            try checkSize(image, plan.scaledWidth, plan.scaledHeight)
            if cropped {
                if let smart {
                    // vips_smartcrop reads the image more than once: not from a sequential file.
                    image = try Libvips.smartcrop(
                        try Libvips.copyToMemory(image), width: plan.width, height: plan.height, interesting: smart)
                } else {
                    let (left, top) = crop.offset(
                        scaledWidth: plan.scaledWidth, scaledHeight: plan.scaledHeight, width: plan.width,
                        height: plan.height)
                    image = try Libvips.extractArea(image, left: left, top: top, width: plan.width, height: plan.height)
                }
            }
            guard !smallerWidths.isEmpty else {
                return [try finished(image, sharpen: sharpen, sixteenBit: sixteen, as: convert)]
            }
            // Decoded once, in sRGB; each smaller size reduced from it, to the size a thumbnail
            // of its own width would have.
            let base = try inSRGB(try Libvips.copyToMemory(image), sixteenBit: sixteen)
            var all: [Image] = []
            for width in smallerWidths {
                let size = ThumbnailBox.sized(width: width, upscale: upscale)
                    .plan(sourceWidth: sourceWidth, sourceHeight: sourceHeight)
                let small = try resized(base, width: size.width, height: size.height, sixteenBit: sixteen)
                all.append(try finished(small, sharpen: sharpen, sixteenBit: sixteen, as: convert))
            }
            return all + [try finished(base, sharpen: sharpen, sixteenBit: sixteen, as: convert)]
        } catch {
            throw ImageIOError.decoding(path, error)
        }
    }

    /// Fails unless `image` is `width` × `height`.
    private static func checkSize(_ image: VipsImageRef, _ width: Int, _ height: Int) throws(LibvipsFailure) {
        guard image.width == width, image.height == height else {
            throw LibvipsFailure(message: "thumbnail came out \(image.width)x\(image.height), not \(width)x\(height)")
        }
    }

    /// The thumbnail sharpened (in sRGB) if asked, and made what the caller keeps by `convert`
    /// (``decoded(_:sixteenBit:allocator:)``, as `read` decodes, or ``decodedSamples(_:sixteenBit:)``).
    private static func finished<Image>(
        _ image: VipsImageRef, sharpen: Double?, sixteenBit sixteen: Bool,
        as convert: (VipsImageRef, Bool) throws(LibvipsFailure) -> Image
    ) throws(LibvipsFailure) -> Image {
        var image = image
        if let sharpen {
            image = try Libvips.sharpen(try inSRGB(image, sixteenBit: sixteen), sigma: sharpen)
        }
        return try convert(image, sixteen)
    }
}

extension ImageReader {
    /// `image` (sRGB or RGB16 as `inSRGB` makes it) resized to `width` × `height`: 8-bit without
    /// alpha by ``LanczosResampler``, else with vips_resize (lanczos3, as vips_thumbnail), alpha
    /// premultiplied around the resize; the format kept.
    static func resized(
        _ image: VipsImageRef, width: Int, height: Int, sixteenBit sixteen: Bool
    ) throws(LibvipsFailure) -> VipsImageRef {
        if image.width == width && image.height == height { return image }
        if let ours = try resampled(image, width: width, height: height) { return ours }
        let hscale = Double(width) / Double(image.width), vscale = Double(height) / Double(image.height)
        guard image.bands == 4 else { return try Libvips.resize(image, hscale: hscale, vscale: vscale) }
        let maxAlpha: Double = sixteen ? 65535 : 255
        let format = image.format
        let premultiplied = try Libvips.premultiply(image, maxAlpha: maxAlpha)
        let small = try Libvips.resize(premultiplied, hscale: hscale, vscale: vscale)
        return try Libvips.cast(try Libvips.unpremultiply(small, maxAlpha: maxAlpha), to: format)
    }
}

/// A checked thumbnail request: the box, the fit and whether images may grow.
struct ThumbnailBox: Equatable {
    /// The largest size libvips accepts for an image side (VIPS_MAX_COORD).
    static let maximumSide = DecodeRequest.largestThumbnailSide

    let width: Int?
    let height: Int?
    let fit: ThumbnailFit
    let upscale: Bool

    struct Invalid: Error {
        let message: String
    }

    init(width: Int?, height: Int?, fit: ThumbnailFit, upscale: Bool) throws(Invalid) {
        guard width != nil || height != nil else {
            throw Invalid(message: "a thumbnail needs a width or a height")
        }
        for (name, value) in [("width", width), ("height", height)] {
            if let value, !(1...Self.maximumSide).contains(value) {
                throw Invalid(message: "thumbnail \(name) \(value) is not in 1...\(Self.maximumSide)")
            }
        }
        if fit != .inside && (width == nil || height == nil) {
            throw Invalid(message: "thumbnail fit '\(fit.rawValue)' needs both a width and a height")
        }
        self.width = width
        self.height = height
        self.fit = fit
        self.upscale = upscale
    }

    /// An `inside` box of `width`, which the caller has checked.
    static func sized(width: Int, upscale: Bool) -> ThumbnailBox {
        ThumbnailBox(checkedWidth: width, upscale: upscale)
    }

    private init(checkedWidth: Int, upscale: Bool) {
        width = checkedWidth
        height = nil
        fit = .inside
        self.upscale = upscale
    }

    /// The sizes for a source of `sourceWidth` × `sourceHeight` displayed pixels: resized to
    /// `scaledWidth` × `scaledHeight`, then cropped centred to `width` × `height`.
    struct Plan: Equatable {
        let scaledWidth: Int, scaledHeight: Int
        let width: Int, height: Int
    }

    /// The plan for a source of `w` × `h` pixels as displayed.
    func plan(sourceWidth w: Int, sourceHeight h: Int) -> Plan {
        /// `length * numerator / denominator` rounded to nearest (halves up), at least 1.
        func scale(_ length: Int, _ numerator: Int, _ denominator: Int) -> Int {
            max(1, (2 * length * numerator + denominator) / (2 * denominator))
        }
        switch fit {
        case .exact:
            let bw = width!, bh = height!
            let size = upscale ? (bw, bh) : (min(bw, w), min(bh, h))
            return Plan(scaledWidth: size.0, scaledHeight: size.1, width: size.0, height: size.1)
        case .inside, .cover:
            // The side that limits: for `inside` the one with the smaller scale, for `cover` the
            // one with the larger (bw / w against bh / h, compared without division).
            let widthLimits: Bool
            switch (width, height) {
            case let (bw?, bh?): widthLimits = fit == .inside ? bw * h <= bh * w : bw * h >= bh * w
            case (_?, nil): widthLimits = true
            default: widthLimits = false
            }
            var scaled = widthLimits
                ? (width!, scale(h, width!, w))
                : (scale(w, height!, h), height!)
            let grows = widthLimits ? width! > w : height! > h
            if grows && !upscale { scaled = (w, h) }
            guard fit == .cover else {
                return Plan(scaledWidth: scaled.0, scaledHeight: scaled.1, width: scaled.0, height: scaled.1)
            }
            return Plan(
                scaledWidth: scaled.0, scaledHeight: scaled.1,
                width: min(width!, scaled.0), height: min(height!, scaled.1))
        }
    }
}

extension ImageReader {
    /// The thumbnail of an 8-bit colour JPEG, `width` × `height` upright: decoded by libjpeg
    /// (``JPEGDecoder``) shrunk on load as vips_thumbnail would (``shrinkOnLoad(_:)``),
    /// resampled by ``LanczosResampler`` as it decodes (to the size that is `width` × `height`
    /// once turned), then turned upright by its EXIF orientation (``upright(_:)``, as `read`
    /// turns an image); its metadata (profile, EXIF, XMP) libvips's header's. Nil for any other
    /// file, which libvips thumbnails. The profile is applied afterwards, as to libvips's
    /// thumbnail.
    static func resampledJPEG(
        _ file: InputFile, _ loaded: VipsImageRef, width upright: Int, height uprightHeight: Int
    ) throws(LibvipsFailure) -> VipsImageRef? {
        guard loaded.loader?.hasPrefix("jpegload") == true, loaded.format == VIPS_FORMAT_UCHAR, loaded.bands == 3
        else { return nil }
        let (width, height) = storedSize(of: loaded, upright: upright, uprightHeight)
        let jpeg = try JPEGDecoder(descriptor: file.descriptor)
        guard jpeg.header.precision == 8, jpeg.header.components == 3, jpeg.header.isRGB,
            jpeg.header.width == loaded.width, jpeg.header.height == loaded.height
        else { return nil }
        let factor = min(Double(loaded.width) / Double(width), Double(loaded.height) / Double(height))
        let shrink = shrinkOnLoad(factor)
        // libjpeg's size at the shrink (each side divided by it, rounded up).
        let decoded = try jpeg.start(shrink: shrink)
        guard
            let resampler = LanczosResampler(
                sourceWidth: decoded.width, sourceHeight: decoded.height, width: width, height: height, channels: 3)
        else { return nil }
        let pixels = try resampler.resample { (row: UnsafeMutablePointer<UInt8>) throws(LibvipsFailure) in
            try jpeg.read(into: row, stride: decoded.width * 3, count: 1)
        }
        return try uprightThumbnail(pixels, width: width, height: height, of: loaded)
    }

    /// The size `loaded` is resampled to for a thumbnail of `upright` × `uprightHeight` once
    /// turned: orientations 5...8 turn the image a quarter, so its stored size is the other
    /// way round.
    private static func storedSize(of loaded: VipsImageRef, upright: Int, _ uprightHeight: Int) -> (Int, Int) {
        loaded.orientation >= 5 ? (uprightHeight, upright) : (upright, uprightHeight)
    }

    /// `pixels`, resampled from `loaded` as stored (8-bit RGB, `width` × `height`), as an image
    /// with `loaded`'s profile, EXIF and XMP, turned upright by its orientation (``upright(_:)``,
    /// as `read` turns an image).
    private static func uprightThumbnail(
        _ pixels: [UInt8], width: Int, height: Int, of loaded: VipsImageRef
    ) throws(LibvipsFailure) -> VipsImageRef {
        let image = try memoryImage(pixels, width: width, height: height, metadataOf: loaded)
        image.setInt("orientation", loaded.orientation)
        return try ImageReader.upright(image)
    }

    /// The thumbnail of an 8-bit RGB PNG, `width` × `height` upright: a PNG has no
    /// shrink-on-load, so its rows, as libvips decodes them from `loaded` (opened sequentially),
    /// go to ``LanczosResampler`` as they come, to the size that is `width` × `height` once
    /// turned; then it is turned upright by its EXIF orientation and keeps its profile, EXIF and
    /// XMP, as a JPEG's thumbnail (``resampledJPEG(_:_:width:height:)``). Nil for any other image
    /// (grey, alpha, a reduce beyond the resampler's bound) and for one whose rows the resampler
    /// would hold more than ``pngHeldBytes`` of, which libvips thumbnails.
    static func resampledPNG(
        _ loaded: VipsImageRef, width upright: Int, height uprightHeight: Int
    ) throws(LibvipsFailure) -> VipsImageRef? {
        guard loaded.loader?.hasPrefix("pngload") == true, loaded.format == VIPS_FORMAT_UCHAR, loaded.bands == 3,
            loaded.interpretation == VIPS_INTERPRETATION_sRGB
        else { return nil }
        let (width, height) = storedSize(of: loaded, upright: upright, uprightHeight)
        guard
            let resampler = LanczosResampler(
                sourceWidth: loaded.width, sourceHeight: loaded.height, width: width, height: height, channels: 3),
            resampler.heldRows * loaded.width * 3 <= pngHeldBytes
        else { return nil }
        // Each row computed into the resampler's ring as it asks for it (a request for 16 rows
        // at a time took the same time for a 6400 × 4000 PNG).
        let region = try VipsRegionRef(loaded)
        let rowBytes = region.rowBytes
        var next = 0
        let pixels = try resampler.resample { (row: UnsafeMutablePointer<UInt8>) throws(LibvipsFailure) in
            try region.readRows(top: next, count: 1, into: UnsafeMutableRawBufferPointer(start: row, count: rowBytes))
            next += 1
        }
        return try uprightThumbnail(pixels, width: width, height: height, of: loaded)
    }

    /// The most of a PNG's rows ``resampledPNG(_:width:height:)`` lets the resampler hold: a group
    /// of its windows spans about 13 rows for each step of the reduce, so a large reduce of a
    /// wide PNG would hold hundreds of megabytes (a 20000-pixel-wide PNG to 24 pixels: about
    /// 650 MB), which the thumbnail's memory estimate does not count; libvips's resize shrinks by
    /// a whole factor first and holds a few rows. 16 MB takes a 6000-pixel-wide PNG down to
    /// about 1/70, a 1600-pixel-wide one down to 6 pixels.
    static let pngHeldBytes = 16 << 20

    /// libjpeg's shrink-on-load for a reduce by `factor`, as vips_thumbnail chooses it: the
    /// largest of 8, 4 and 2 that leaves at least a factor of 2 for the resampler, else 1.
    static func shrinkOnLoad(_ factor: Double) -> Int {
        factor >= 16 ? 8 : factor >= 8 ? 4 : factor >= 4 ? 2 : 1
    }

    /// An 8-bit sRGB image without alpha (as ``inSRGB(_:sixteenBit:)`` makes it) resampled by
    /// ``LanczosResampler`` to `width` × `height`, its metadata kept; nil for any other image (or
    /// a reduce too extreme for the resampler's bound), which vips_resize resizes.
    static func resampled(_ image: VipsImageRef, width: Int, height: Int) throws(LibvipsFailure) -> VipsImageRef? {
        guard image.format == VIPS_FORMAT_UCHAR, image.bands == 3,
            let resampler = LanczosResampler(
                sourceWidth: image.width, sourceHeight: image.height, width: width, height: height, channels: 3)
        else { return nil }
        let rowBytes = image.width * 3
        let pixels = try Libvips.withComputedPixels(of: image) { samples throws(LibvipsFailure) in
            resampler.resample(samples, stride: rowBytes)
        }
        return try memoryImage(pixels, width: width, height: height, metadataOf: image)
    }

    /// `pixels` as an 8-bit sRGB libvips image with `source`'s profile, EXIF and XMP.
    private static func memoryImage(
        _ pixels: [UInt8], width: Int, height: Int, metadataOf source: VipsImageRef
    ) throws(LibvipsFailure) -> VipsImageRef {
        let image = try Libvips.withInterpretation(
            try Libvips.image(copying: pixels, width: width, height: height, bands: 3, format: VIPS_FORMAT_UCHAR),
            VIPS_INTERPRETATION_sRGB)
        for name in ["icc-profile-data", "exif-data", "xmp-data"] {
            if let blob = source.blob(name) { image.setBlob(name, blob) }
        }
        return image
    }
}
