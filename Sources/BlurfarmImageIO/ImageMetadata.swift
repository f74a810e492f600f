import BlurfarmFileFormats
/// The metadata that travels from a source image to its outputs.
///
/// Made only by ``ImageReader/read(_:pixelLimit:memoryLimit:allocator:)`` and
/// ``ImageReader/thumbnail(_:width:height:fit:upscale:pixelLimit:)``; hand it to
/// ``ImageWriter/write(_:to:sourceBitDepth:sourceHadAlpha:metadata:options:)`` unchanged.
/// It always describes the pixels as decoded:
/// - `iccProfile` is the profile of the decoded (sRGB) pixels: libvips's built-in sRGB
///   profile when the file had a profile, nil when it had none;
/// - `exif` has its orientation set to 1 (the pixels are already upright) and no picture of
///   the original: its thumbnail and any maker note's preview are taken out
///   (``EXIF/withoutPictures(_:)``), since the outputs' pixels are filtered, redacted or resized;
/// - `xmp` is copied as it was but for its thumbnails (``XMP/withoutPictures(_:)``).
public struct ImageMetadata: Sendable, Hashable {
    /// ICC profile bytes describing the decoded pixels, or nil.
    public let iccProfile: [UInt8]?
    /// EXIF bytes as libvips stores them ("Exif\0\0" and a TIFF structure), orientation 1, or nil.
    public let exif: [UInt8]?
    /// XMP packet bytes, or nil.
    public let xmp: [UInt8]?

    init(iccProfile: [UInt8]?, exif: [UInt8]?, xmp: [UInt8]?) {
        self.iccProfile = iccProfile
        self.exif = exif.map { EXIF.withoutPictures(EXIF.withOrientationReset($0)) }
        self.xmp = xmp.map(XMP.withoutPictures)
    }
}
