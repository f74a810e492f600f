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
    let format: ImageFormat
    /// Bits per sample written: 8 or 16.
    public let bitDepth: Int
    /// Whether an alpha channel was written.
    public let hasAlpha: Bool
    let background: SIMD3<Float>
    /// Whether decoding gives back exactly the samples encoded: PNG, TIFF and lossless WebP.
    public let isLossless: Bool
    /// The ``PixelChecksum`` of the samples encoded (unpremultiplied and rounded, as
    /// ``bitDepth`` and ``hasAlpha`` say): what a report gives as the output's checksum.
    public let checksum: UInt64

    init(
        path: String, bytes: [UInt8], format: ImageFormat, bitDepth: Int, hasAlpha: Bool, background: SIMD3<Float>,
        lossless: Bool, checksum: UInt64
    ) {
        self.checksum = checksum
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

    /// Decodes the bytes again, as a reader of the file would, and compares the samples in the
    /// file with those encoded from `pixels` (unpremultiplied and rounded, exactly as the
    /// encoder wrote them): a lossless format must give back every sample exactly, a lossy one
    /// the same size and at least ``minimumLossyPSNR``. The file's samples are compared as
    /// they are stored, never premultiplied again: premultiplying a translucent 8-bit sample
    /// and dividing it back does not always give the same integer. Returns what differs, in
    /// words, or nil when the image checks.
    ///
    /// - Throws: `ImageIOError` with code `.decodeFailed` when the bytes do not decode.
    public func mismatch(against pixels: PixelBuffer) throws(ImageIOError) -> String? {
        let sixteen = bitDepth == 16
        let file: (width: Int, height: Int, bands: Int, samples: [UInt8])
        do throws(LibvipsFailure) {
            file = try Libvips.withImage(decoding: bytes) { (image) throws(LibvipsFailure) in
                let stored = try ImageReader.inSRGB(try ImageReader.upright(image), sixteenBit: sixteen)
                return try Libvips.withComputedPixels(of: stored) { (samples) throws(LibvipsFailure) in
                    (stored.width, stored.height, stored.bands, Array(samples))
                }
            }
        } catch {
            throw ImageIOError(code: .decodeFailed, path: path, message: "written bytes do not decode: \(error.message)")
        }
        let expected = pixels.rect
        guard file.width == expected.width, file.height == expected.height else {
            return "decodes as \(file.width)x\(file.height), not \(expected.width)x\(expected.height)"
        }
        let bands = hasAlpha ? 4 : 3
        guard file.bands == bands else { return "decodes with \(file.bands) bands, not the \(bands) written" }
        let (errors, squared, count) =
            sixteen
            ? compare(PixelConversion.samples(pixels, alpha: hasAlpha, background: background, as: UInt16.self), file.samples)
            : compare(PixelConversion.samples(pixels, alpha: hasAlpha, background: background, as: UInt8.self), file.samples)
        if isLossless {
            return errors == 0 ? nil : "\(errors) of \(count) samples differ after decoding (a lossless format)"
        }
        let peak = sixteen ? 65535.0 : 255.0
        let psnr = squared == 0 ? Double.infinity : 10 * log10(peak * peak / (squared / Double(count)))
        return psnr >= Self.minimumLossyPSNR
            ? nil : String(format: "PSNR %.1f dB after decoding, under the %.0f dB floor", psnr, Self.minimumLossyPSNR)
    }

    /// Samples that differ, the sum of squared differences, and the number of samples, between
    /// the samples encoded (`expected`) and the file's (`stored`: the same samples as raw
    /// bytes in the machine's order, as libvips hands them out). With alpha, the colour of a
    /// pixel transparent in both carries nothing and is not compared: lossless WebP, for one,
    /// stores whatever colour compresses best there.
    private func compare<Sample: FixedWidthInteger & UnsignedInteger>(
        _ expected: [Sample], _ stored: [UInt8]
    ) -> (Int, Double, Int) {
        let size = MemoryLayout<Sample>.size
        precondition(stored.count == expected.count * size, "the sizes were checked")
        let bands = hasAlpha ? 4 : 3
        var differing = 0
        var squared = 0.0
        stored.withUnsafeBytes { raw in
            func storedSample(_ i: Int) -> Sample { raw.loadUnaligned(fromByteOffset: i * size, as: Sample.self) }
            for pixel in stride(from: 0, to: expected.count, by: bands) {
                let transparent = hasAlpha && expected[pixel + 3] == 0 && storedSample(pixel + 3) == 0
                for i in (transparent ? pixel + 3 : pixel)..<(pixel + bands) {
                    let b = storedSample(i)
                    guard expected[i] != b else { continue }
                    differing += 1
                    let d = Double(expected[i]) - Double(b)
                    squared += d * d
                }
            }
        }
        return (differing, squared, expected.count)
    }
}
