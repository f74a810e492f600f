import BlurfarmCore
import CVips
import Foundation

/// An image encoded in memory by ``ImageWriter/encode(_:for:sourceBitDepth:sourceHadAlpha:metadata:options:)``,
/// not yet written: it can be decoded again and checked before ``ImageWriter/write(_:)``
/// puts it in place.
public struct EncodedImage: Sendable {
    /// Where the image is to be written; its extension chose the format.
    public let path: String
    /// The file's bytes.
    public let bytes: [UInt8]
    let format: OutputFormat
    /// Bits per sample written: 8 or 16.
    public let bitDepth: Int
    /// Whether an alpha channel was written.
    public let hasAlpha: Bool
    let background: SIMD3<Float>
    /// Whether decoding gives back exactly the samples encoded: PNG, TIFF and lossless WebP.
    public let isLossless: Bool

    init(
        path: String, bytes: [UInt8], format: OutputFormat, bitDepth: Int, hasAlpha: Bool, background: SIMD3<Float>,
        lossless: Bool
    ) {
        self.path = path
        self.bytes = bytes
        self.format = format
        self.bitDepth = bitDepth
        self.hasAlpha = hasAlpha
        self.background = background
        isLossless = format == .png || format == .tiff || (format == .webp && lossless)
    }

    /// The least peak signal-to-noise ratio, in dB over the written samples, that a lossy
    /// output must reach against the pixels it encodes (policy: the farm issue's floor; the
    /// tests see JPEG q 90 pass it and q 1 fail it).
    public static let minimumLossyPSNR = 40.0

    /// Decodes the bytes again, as a reader of the file would, and compares the result with
    /// `pixels` (what was encoded): a lossless format must give back every sample exactly, a
    /// lossy one the same size and at least ``minimumLossyPSNR``. Returns what differs, in
    /// words, or nil when the image checks.
    ///
    /// - Throws: `ImageIOError` with code `.decodeFailed` when the bytes do not decode.
    public func mismatch(against pixels: PixelBuffer) throws(ImageIOError) -> String? {
        let decoded: DecodedImage
        do throws(LibvipsFailure) {
            decoded = try Libvips.withImage(decoding: bytes) { (image) throws(LibvipsFailure) in
                try ImageReader.decoded(try ImageReader.upright(image), sixteenBit: image.format != VIPS_FORMAT_UCHAR)
            }
        } catch {
            throw ImageIOError(code: .decodeFailed, path: path, message: "written bytes do not decode: \(error.message)")
        }
        let written = decoded.pixels.rect, expected = pixels.rect
        guard written.width == expected.width, written.height == expected.height else {
            return "decodes as \(written.width)x\(written.height), not \(expected.width)x\(expected.height)"
        }
        let (errors, squared, count, peak): (Int, Double, Int, Double)
        if bitDepth == 16 {
            (errors, squared, count) = compare(pixels, decoded.pixels, as: UInt16.self)
            peak = 65535
        } else {
            (errors, squared, count) = compare(pixels, decoded.pixels, as: UInt8.self)
            peak = 255
        }
        if isLossless {
            return errors == 0 ? nil : "\(errors) of \(count) samples differ after decoding (a lossless format)"
        }
        let psnr = squared == 0 ? Double.infinity : 10 * log10(peak * peak / (squared / Double(count)))
        return psnr >= Self.minimumLossyPSNR
            ? nil : String(format: "PSNR %.1f dB after decoding, under the %.0f dB floor", psnr, Self.minimumLossyPSNR)
    }

    /// Samples that differ, the sum of squared differences, and the number of samples, between
    /// the samples written for `expected` and those of `actual`.
    private func compare<Sample: FixedWidthInteger & UnsignedInteger>(
        _ expected: PixelBuffer, _ actual: PixelBuffer, as type: Sample.Type
    ) -> (Int, Double, Int) {
        let a = PixelConversion.samples(expected, alpha: hasAlpha, background: background, as: type)
        let b = PixelConversion.samples(actual, alpha: hasAlpha, background: background, as: type)
        var differing = 0
        var squared = 0.0
        for i in a.indices where a[i] != b[i] {
            differing += 1
            let d = Double(a[i]) - Double(b[i])
            squared += d * d
        }
        return (differing, squared, a.count)
    }
}
