import BlurfarmState
import BlurfarmCore
import BlurfarmImageIO
import Foundation

/// The digest (XXH3-128) of an output map's entries, made without encoding them: every field
/// of every entry in order, as bytes that tell each value from every other (a tag before an
/// optional, the length before a text or a list, an integer in 8 bytes), after the job's name
/// and the text the map's encoder makes of a sample entry (a blurfarm whose encoder writes
/// another text has another digest). Two runs whose entries have one digest make one map
/// (``OutputMapText``): `OutputMapDigestTests` changes each field alone. What a no-change run
/// with a map does instead of encoding it, when the map on disk is the file the last run left
/// (``OutputMapStamp``): encoding it was 173 MB of JSON at 100,000 inputs, every run.
final class OutputMapDigest {
    /// Raised when the bytes below change meaning: a digest kept by another version then
    /// differs.
    static let version = 1
    private let hasher: ContentHash.Hasher
    /// The bytes of the entry being added, reused.
    private var bytes: [UInt8] = []

    /// Why a digest could not be begun: the hash's state could not be allocated.
    struct NoHashState: Error, CustomStringConvertible {
        var description: String { "cannot allocate a hash state" }
    }

    /// The digest of a map of the job `job`, before its entries.
    /// - Throws: ``NoHashState``, or what the encoder throws.
    init(job: String) throws {
        guard let hasher = ContentHash.Hasher() else { throw NoHashState() }
        self.hasher = hasher
        let sample = ReportedText.showingBytes(in: try RunReport.encoder().encode(OutputMap(job: job, inputs: Self.sample)))
        integer(Self.version)
        text(job)
        integer(sample.count)
        bytes += sample
        hashBytes()
    }

    /// Adds `input`'s entry.
    func add(_ input: OutputMap.Input) {
        text(input.path)
        optional(input.pathBytes, text)
        optional(input.width, integer)
        optional(input.height, integer)
        optional(input.placeholder) { placeholder in
            text(placeholder.thumbHash)
            text(placeholder.dataURI)
        }
        integer(input.outputs.count)
        for output in input.outputs {
            text(output.path)
            optional(output.pathBytes, text)
            text(output.format)
            integer(output.width)
            integer(output.height)
            integer(output.bytes)
            text(output.variant)
            optional(output.size, integer)
        }
        hashBytes()
    }

    /// The digest of what the plan `full` of a run that published `published` (by their places
    /// in `full`) gives the entries of the map at `mapPath` (absolute), besides the records
    /// (``OutputMapStamp/plan``): after the job's name and the sample entry's text, the
    /// `versions` the recipes name (blurfarm's and libvips's: another blurfarm may make its
    /// entries otherwise, so its first run makes them), the placeholders' recipe and the map's
    /// path, every input in order by its path, and each of its outputs by whether it was
    /// published, its path, format, variant and size (the paths made absolute by `absolute`,
    /// as the entries' are).
    /// - Throws: what ``init(job:)`` throws.
    static func plan(
        of full: JobPlan, published: PublishedOutputs, mapPath: String, versions: String, absolute: (String) -> String
    ) throws -> String {
        let digest = try OutputMapDigest(job: full.job.name)
        digest.text(versions)
        digest.text(InputPlaceholder.recipe)
        digest.text(mapPath)
        digest.hashBytes()
        var place = 0
        for input in full.inputs {
            digest.text(absolute(input.path))
            digest.integer(input.outputs.count)
            for output in input.outputs {
                digest.bytes.append(published.contains(place) ? 1 : 0)
                place += 1
                let path = absolute(output.path)
                digest.text(path)
                digest.optional(ImageFormat(extension: PathName.pathExtension(of: path))?.mapName, digest.text)
                digest.text(output.variant.name)
                digest.optional(output.size, digest.integer)
            }
            digest.hashBytes()
        }
        return digest.digest()
    }

    /// The digest of the map so far, as 32 hexadecimal digits.
    func digest() -> String { hasher.digest() }

    private func hashBytes() {
        hasher.update(bytes)
        bytes.removeAll(keepingCapacity: true)
    }

    /// `value` in 8 bytes, the lowest first.
    private func integer(_ value: Int) {
        let word = UInt64(bitPattern: Int64(value))
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
    }

    private func text(_ value: String) {
        integer(value.utf8.count)
        bytes += value.utf8
    }

    private func optional<T>(_ value: T?, _ add: (T) -> Void) {
        guard let value else {
            bytes.append(0)
            return
        }
        bytes.append(1)
        add(value)
    }

    /// Entries whose text shows what the encoder does with every kind of value a map holds:
    /// a name with a byte that is not UTF-8, a slash, a quote, a backslash, a control
    /// character and letters beyond ASCII; fields present and absent.
    private static let sample: [OutputMap.Input] = [
        OutputMap.Input(
            path: "in/caf\u{F7E9} \"q\" \\ \u{1}é/ü.png", width: 3, height: 2,
            placeholder: OutputMap.Placeholder(thumbHash: "AbC+/=", dataURI: "data:image/png;base64,iVBO"),
            outputs: [
                OutputMap.Output(path: "out/a.webp", format: "webp", width: 1, height: 1, bytes: 10, variant: "v", size: 24),
                OutputMap.Output(path: "../x\u{F7FF}.jpg", format: "jpeg", width: -1, height: 0, bytes: 0, variant: "", size: nil),
            ]),
        OutputMap.Input(path: "", width: nil, height: nil, placeholder: nil, outputs: []),
    ]
}
