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
    /// The quality a lossy format was encoded at, 1...100: what ``lossyFloor(quality:)`` asks.
    let quality: Int
    /// The ``PixelChecksum`` of the samples encoded (unpremultiplied and rounded, as
    /// ``bitDepth`` and ``hasAlpha`` say): what a report gives as the output's checksum.
    public let checksum: UInt64

    init(
        path: String, bytes: [UInt8], format: ImageFormat, bitDepth: Int, hasAlpha: Bool, background: SIMD3<Float>,
        lossless: Bool, quality: Int, checksum: UInt64
    ) {
        self.checksum = checksum
        self.quality = quality
        self.path = path
        self.bytes = bytes
        self.format = format
        self.bitDepth = bitDepth
        self.hasAlpha = hasAlpha
        self.background = background
        isLossless = format == .png || format == .tiff || (format == .webp && lossless)
    }

    /// Rows of a strip: a lossy file is checked strip by strip, so that a band encoded wrong
    /// (a spliced segment out of place, rows of another image) is not averaged away by the rest.
    static let stripRows = 16

    /// The least PSNR, in dB, that every strip of ``stripRows`` rows of a lossy file encoded at
    /// `quality` must reach against the samples it encodes: 10 + 0.18 × quality (10.2 at
    /// quality 1, 26.2 at 90). An honest encoder stays well above it: libvips 8.18's JPEG, WebP
    /// and AVIF of 14 corpus photos (1280 wide) at qualities 1 to 90 had their worst strip 6 to
    /// 10 dB above the floor (JPEG: 17.8 at quality 1, 24.3 at 30, 29.3 at 75, 36.3 at 90);
    /// a strip of garbage, of another picture or of swapped channels falls below it (5–20 dB).
    /// A check of honesty, not of taste: the quality chosen is the user's.
    static func lossyFloor(quality: Int) -> Double { 10 + 0.18 * Double(quality) }

    /// Decodes the bytes again, as a reader of the file would, and compares the samples in the
    /// file with those encoded from `pixels` (unpremultiplied and rounded, exactly as the
    /// encoder wrote them): a lossless format must give back every sample exactly, a lossy one
    /// the same size and, in every strip of ``stripRows`` rows, a PSNR of at least
    /// ``lossyFloor(quality:)``. The file's samples are compared as
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
        let (errors, strips, count) =
            sixteen
            ? compare(PixelConversion.samples(pixels, alpha: hasAlpha, background: background, as: UInt16.self), file.samples, rowSamples: expected.width * bands)
            : compare(
                PixelConversion.samples(pixels, alpha: hasAlpha, background: background, as: UInt8.self), file.samples,
                rowSamples: expected.width * bands)
        if isLossless {
            return errors == 0 ? nil : "\(errors) of \(count) samples differ after decoding (a lossless format)"
        }
        let peak = sixteen ? 65535.0 : 255.0
        let floor = Self.lossyFloor(quality: quality)
        let stripSamples = Self.stripRows * expected.width * bands
        for (index, squared) in strips.enumerated() where squared > 0 {
            let samples = min(stripSamples, count - index * stripSamples)
            let psnr = 10 * log10(peak * peak / (squared / Double(samples)))
            guard psnr < floor else { continue }
            let first = index * Self.stripRows, last = min(first + Self.stripRows, expected.height) - 1
            return "rows \(first)–\(last) decode at a PSNR of \((psnr * 10).rounded() / 10) dB, under the floor of "
                + "\((floor * 10).rounded() / 10) dB for quality \(quality)"
        }
        return nil
    }

    /// Samples that differ, the sums of squared differences of each strip of ``stripRows``
    /// rows (of `rowSamples` samples each), and the number of samples, between the samples encoded (`expected`) and the file's
    /// (`stored`: the same samples as raw bytes in the machine's order, as libvips hands them
    /// out). With alpha, the colour of a pixel transparent in both carries nothing and is not
    /// compared: lossless WebP, for one, stores whatever colour compresses best there.
    private func compare<Sample: FixedWidthInteger & UnsignedInteger>(
        _ expected: [Sample], _ stored: [UInt8], rowSamples: Int
    ) -> (Int, [Double], Int) {
        let size = MemoryLayout<Sample>.size
        precondition(stored.count == expected.count * size, "the sizes were checked")
        let bands = hasAlpha ? 4 : 3
        let stripSamples = max(1, rowSamples * Self.stripRows)
        var differing = 0
        var strips = [Double](repeating: 0, count: (expected.count + stripSamples - 1) / stripSamples)
        stored.withUnsafeBytes { raw in
            func storedSample(_ i: Int) -> Sample { raw.loadUnaligned(fromByteOffset: i * size, as: Sample.self) }
            for pixel in stride(from: 0, to: expected.count, by: bands) {
                let transparent = hasAlpha && expected[pixel + 3] == 0 && storedSample(pixel + 3) == 0
                for i in (transparent ? pixel + 3 : pixel)..<(pixel + bands) {
                    let b = storedSample(i)
                    guard expected[i] != b else { continue }
                    differing += 1
                    let d = Double(expected[i]) - Double(b)
                    strips[i / stripSamples] += d * d
                }
            }
        }
        return (differing, strips, expected.count)
    }
}
