import CVips

/// libvips's own filters, for benchmarks and cross-checks that compare blurfarm's kernels with
/// libvips in the same run. Not used to render jobs.
public enum LibvipsReference {
    /// Arithmetic libvips uses for a convolution.
    public enum Precision: Sendable, Hashable {
        /// Integer arithmetic: the mask is scaled to integers (libvips's default, fastest).
        case integer
        /// Float arithmetic.
        case float
    }

    /// An interleaved image in memory.
    public struct Image: Sendable, Hashable {
        /// Width in pixels.
        public var width: Int
        /// Height in pixels.
        public var height: Int
        /// Samples per pixel: 3 (RGB) or 4 (RGBA).
        public var bands: Int
        /// Whether samples are Float32 (native byte order); otherwise UInt8.
        public var isFloat: Bool
        /// The samples, row after row, no padding: `width * height * bands` samples of 1 or 4
        /// bytes.
        public var data: [UInt8]

        /// An image over `data`; see the properties for the layout.
        public init(width: Int, height: Int, bands: Int, isFloat: Bool, data: [UInt8]) {
            self.width = width
            self.height = height
            self.bands = bands
            self.isFloat = isFloat
            self.data = data
        }

        /// Bytes per sample: 4 for float, 1 for uchar.
        public var bytesPerSample: Int { isFloat ? 4 : 1 }
    }

    /// Sets how many worker threads libvips uses (vips_concurrency_set); 0 restores its
    /// default, one per core.
    public static func setConcurrency(_ threads: Int) {
        guard (try? Libvips.start()) != nil else { return }
        Libvips.setConcurrency(threads)
    }

    /// vips_gaussblur with `sigma` (pixels) and libvips's default `min_ampl` (0.2), computed
    /// fully into memory. The output has the input's size, bands and sample format; libvips
    /// extends the edges by copying them.
    ///
    /// - Throws: `ImageIOError` with code `.invalidArgument` (bad sizes, sigma not > 0) or
    ///   `.operationFailed` with libvips's message.
    public static func gaussianBlur(_ image: Image, sigma: Double, precision: Precision) throws(ImageIOError) -> Image {
        guard sigma > 0 else { throw invalid("gaussianBlur: sigma \(sigma) is not > 0") }
        return try run("gaussblur", image) { (input) throws(LibvipsFailure) in
            try Libvips.gaussblur(input, sigma: sigma, precision: precision.vips)
        }
    }

    /// vips_conv with a `maskWidth` × `maskHeight` matrix (row by row in `mask`, scale 1,
    /// offset 0), computed fully into memory. The output has the input's size, bands and
    /// sample format (libvips crops the area the mask cannot cover and clips to the format).
    ///
    /// - Throws: `ImageIOError` with code `.invalidArgument` (bad sizes) or
    ///   `.operationFailed` with libvips's message.
    public static func convolve(
        _ image: Image, mask: [Double], maskWidth: Int, maskHeight: Int, precision: Precision
    ) throws(ImageIOError) -> Image {
        guard maskWidth > 0, maskHeight > 0, mask.count == maskWidth * maskHeight else {
            throw invalid("convolve: mask has \(mask.count) values, not \(maskWidth)x\(maskHeight)")
        }
        return try run("conv", image) { (input) throws(LibvipsFailure) in
            let matrix = try Libvips.matrix(width: maskWidth, height: maskHeight, values: mask)
            return try Libvips.conv(input, mask: matrix, precision: precision.vips)
        }
    }

    /// The seconds each of `runs` runs of vips_gaussblur takes, from `image` already wrapped for
    /// libvips (the wrapping is done once, outside the timing) to its pixels computed in memory
    /// (vips_image_write_to_memory): what the benchmark compares with blurfarm's kernel.
    ///
    /// - Throws: as ``gaussianBlur(_:sigma:precision:)``.
    public static func timeGaussianBlur(
        _ image: Image, sigma: Double, precision: Precision, runs: Int
    ) throws(ImageIOError) -> [Double] {
        guard sigma > 0 else { throw invalid("gaussianBlur: sigma \(sigma) is not > 0") }
        return try time("gaussblur", image, runs: runs) { (input) throws(LibvipsFailure) in
            try Libvips.gaussblur(input, sigma: sigma, precision: precision.vips)
        }
    }

    /// The seconds each of `runs` runs of vips_conv takes, timed as
    /// ``timeGaussianBlur(_:sigma:precision:runs:)`` is.
    ///
    /// - Throws: as ``convolve(_:mask:maskWidth:maskHeight:precision:)``.
    public static func timeConvolve(
        _ image: Image, mask: [Double], maskWidth: Int, maskHeight: Int, precision: Precision, runs: Int
    ) throws(ImageIOError) -> [Double] {
        guard maskWidth > 0, maskHeight > 0, mask.count == maskWidth * maskHeight else {
            throw invalid("convolve: mask has \(mask.count) values, not \(maskWidth)x\(maskHeight)")
        }
        return try time("conv", image, runs: runs) { (input) throws(LibvipsFailure) in
            let matrix = try Libvips.matrix(width: maskWidth, height: maskHeight, values: mask)
            return try Libvips.conv(input, mask: matrix, precision: precision.vips)
        }
    }

    private static func time(
        _ name: String, _ image: Image, runs: Int, _ operation: (VipsImageRef) throws(LibvipsFailure) -> VipsImageRef
    ) throws(ImageIOError) -> [Double] {
        try check(name, image)
        let format = image.isFloat ? VIPS_FORMAT_FLOAT : VIPS_FORMAT_UCHAR
        let clock = ContinuousClock()
        do throws(LibvipsFailure) {
            let input = try Libvips.image(
                copying: image.data, width: image.width, height: image.height, bands: image.bands, format: format)
            var seconds: [Double] = []
            for _ in 0..<max(runs, 1) {
                let start = clock.now
                let output = try operation(input)
                try Libvips.withComputedPixels(of: output) { _ in }
                let elapsed = clock.now - start
                seconds.append(elapsed.seconds)
            }
            return seconds
        } catch {
            throw ImageIOError(code: .operationFailed, path: nil, message: "libvips \(name): \(error.message)")
        }
    }

    private static func check(_ name: String, _ image: Image) throws(ImageIOError) {
        guard image.width > 0, image.height > 0, image.bands == 3 || image.bands == 4 else {
            throw invalid("\(name): image is \(image.width)x\(image.height) with \(image.bands) bands")
        }
        guard image.data.count == image.width * image.height * image.bands * image.bytesPerSample else {
            throw invalid(
                "\(name): \(image.data.count) bytes for a \(image.width)x\(image.height)x\(image.bands) image")
        }
        try Libvips.start()
    }

    private static func invalid(_ message: String) -> ImageIOError {
        ImageIOError(code: .invalidArgument, path: nil, message: message)
    }

    /// Wraps `image` for libvips, applies `operation`, brings the result back to the input's
    /// format and copies it out.
    private static func run(
        _ name: String, _ image: Image, _ operation: (VipsImageRef) throws(LibvipsFailure) -> VipsImageRef
    ) throws(ImageIOError) -> Image {
        try check(name, image)
        let format = image.isFloat ? VIPS_FORMAT_FLOAT : VIPS_FORMAT_UCHAR
        do throws(LibvipsFailure) {
            let input = try Libvips.image(
                copying: image.data, width: image.width, height: image.height, bands: image.bands, format: format)
            var output = try operation(input)
            if output.format != format { output = try Libvips.cast(output, to: format) }
            let (width, height, bands) = (output.width, output.height, output.bands)
            let data = try Libvips.withComputedPixels(of: output) { Array($0) }
            return Image(width: width, height: height, bands: bands, isFloat: image.isFloat, data: data)
        } catch {
            throw ImageIOError(code: .operationFailed, path: nil, message: "libvips \(name): \(error.message)")
        }
    }
}

extension LibvipsReference.Precision {
    var vips: VipsPrecision {
        switch self {
        case .integer: VIPS_PRECISION_INTEGER
        case .float: VIPS_PRECISION_FLOAT
        }
    }
}
