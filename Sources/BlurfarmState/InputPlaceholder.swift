import BlurfarmCore
import Foundation

/// What the output map shows of an input besides its outputs: its size and a placeholder to
/// show while an output loads: a ThumbHash (``ThumbHash``) and the image it decodes to, as a
/// PNG data URI. Kept in the job's records (``OutputRecords``) with the hash of the input's
/// bytes it was made from, so that a run that renders nothing for the input still has it, and
/// it is made again only when the input's bytes (or ``recipe``) change. The record only: the
/// coordinator makes it (`InputPlaceholder.make`, which decodes and encodes images).
public struct InputPlaceholder: Codable, Hashable, Sendable {
    /// The input's absolute path: the placeholder's key.
    public var input: String
    /// The hash of the input's bytes it was made from (``FileFingerprint/hash``).
    public var inputHash: String
    /// How it was made (``recipe``): another way makes it again.
    public var recipe: String
    /// The input's width and height in pixels, as displayed (after its EXIF orientation).
    public var width: Int
    public var height: Int
    /// The ThumbHash's bytes in standard base64 with padding, as the reference's examples write it.
    public var thumbHash: String
    /// `data:image/png;base64,...`: the ThumbHash decoded, for pages that show it without
    /// JavaScript (a browser scales it up smoothly), under ``dataURILimit`` bytes: the largest
    /// of ``dataURISides`` on its longer side that fits.
    public var dataURI: String

    /// The side of the box the input is reduced into before hashing, in pixels: ThumbHash's
    /// limit, and a shrink-on-load thumbnail (JPEG and WebP decode at 1/8 scale) keeps it cheap.
    public static let thumbnailSide = ThumbHash.maximumSide

    /// The most bytes of a data URI, whole: a page of 100 photos inlines at most 100 KB of
    /// placeholders (plaiceholder's and sharp's are a few hundred bytes each).
    public static let dataURILimit = 1024

    /// The longer sides the data URI's image is tried at, largest first. A ThumbHash holds at
    /// most 7 cosine terms along a side, so 16 samples across already carry all it says; the
    /// larger sides only save the browser's scaling, and 8 always fits (8 × 8 RGBA is 256 bytes
    /// before compression).
    public static let dataURISides = [32, 24, 16, 12, 8]

    /// What a placeholder is made with; change it when the way changes, so that kept ones are
    /// made again.
    public static let recipe =
        "thumbhash 1; thumbnail \(thumbnailSide) lanczos3; png \(dataURISides.map(String.init).joined(separator: "/")) under \(dataURILimit)"

    public init(
        input: String, inputHash: String, recipe: String = Self.recipe, width: Int, height: Int, thumbHash: String,
        dataURI: String
    ) {
        self.input = input
        self.inputHash = inputHash
        self.recipe = recipe
        self.width = width
        self.height = height
        self.thumbHash = thumbHash
        self.dataURI = dataURI
    }
}
