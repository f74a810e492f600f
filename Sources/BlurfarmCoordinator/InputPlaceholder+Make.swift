import BlurfarmCore
import BlurfarmImageIO
import BlurfarmState
import Foundation

// The image work of an input's placeholder (the record is BlurfarmState's: the state folder
// keeps it, the coordinator makes it).
extension InputPlaceholder {
    /// The placeholder of the image at `path` (absolute), whose bytes hash to `inputHash`:
    /// its header for the size, a shrink-on-load thumbnail into ``thumbnailSide`` pixels
    /// (colour in sRGB, upright) for the ThumbHash, the ThumbHash decoded and encoded as PNG
    /// for the data URI.
    /// - Throws: `ImageIOError` from reading the input or encoding the PNG.
    public static func make(
        _ path: String, inputHash: String, pixelLimit: Int, memoryLimit: Int, confinement: RootConfinement? = nil
    ) throws(ImageIOError) -> InputPlaceholder {
        let header = try ImageReader.header(ofFile: path, confinement: confinement)
        let thumbnail = try ImageReader.thumbnail(
            path, width: thumbnailSide, height: thumbnailSide, fit: .inside, upscale: false, pixelLimit: pixelLimit,
            memoryLimit: memoryLimit, confinement: confinement)
        let pixels = thumbnail.pixels
        var rgba: [UInt8] = []
        rgba.reserveCapacity(pixels.rect.width * pixels.rect.height * 4)
        for y in pixels.rect.y..<pixels.rect.maxY {
            for x in pixels.rect.x..<pixels.rect.maxX {
                // Premultiplied floats to straight 8-bit samples, as ThumbHash takes them.
                let pixel = pixels[x, y]
                let alpha = pixels.hasAlpha ? pixel.w : 1
                let colour = alpha > 0 ? SIMD3(pixel.x, pixel.y, pixel.z) / alpha : .zero
                rgba += [colour.x, colour.y, colour.z, alpha].map { UInt8(SampleConversion.quantize($0, 255)) }
            }
        }
        let hash = ThumbHash.encode(width: pixels.rect.width, height: pixels.rect.height, rgba: rgba)
        var dataURI: String?
        for side in dataURISides {
            let uri = try Self.dataURI(of: hash, longerSide: side, named: path)
            if uri.utf8.count <= dataURILimit {
                dataURI = uri
                break
            }
        }
        guard let dataURI else {
            // 8 x 8 RGBA pixels always fit; this names the file if that ever breaks.
            throw ImageIOError(code: .encodeFailed, path: path, message: "its placeholder does not fit in \(dataURILimit) bytes")
        }
        return InputPlaceholder(
            input: path, inputHash: inputHash, width: header.width, height: header.height,
            thumbHash: Data(hash).base64EncodedString(), dataURI: dataURI)
    }

    /// `hash` decoded at `longerSide` pixels on its longer side, as a PNG data URI.
    private static func dataURI(of hash: [UInt8], longerSide: Int, named path: String) throws(ImageIOError) -> String {
        guard let decoded = ThumbHash.decode(hash, longerSide: longerSide) else {
            // A hash just encoded always decodes; this names the file if that ever breaks.
            throw ImageIOError(code: .encodeFailed, path: path, message: "its ThumbHash does not decode")
        }
        let image = PixelBuffer(rect: Rect(x: 0, y: 0, width: decoded.width, height: decoded.height))
        for y in 0..<decoded.height {
            for x in 0..<decoded.width {
                let i = (y * decoded.width + x) * 4
                let sample = SIMD4<Float>(
                    Float(decoded.rgba[i]), Float(decoded.rgba[i + 1]), Float(decoded.rgba[i + 2]), Float(decoded.rgba[i + 3])
                ) / 255
                image[x, y] = SIMD4(sample.x * sample.w, sample.y * sample.w, sample.z * sample.w, sample.w)
            }
        }
        // The encoder keeps alpha only when some pixel is translucent.
        let png = try ImageWriter.encode(
            image, extension: "png", named: path, sourceBitDepth: 8, sourceHadAlpha: false, metadata: nil,
            options: EncodeOptions(metadata: .strip, bitDepth: 8))
        return "data:image/png;base64," + Data(png.bytes).base64EncodedString()
    }
}
