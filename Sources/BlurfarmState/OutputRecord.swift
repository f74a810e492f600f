import Foundation

/// What the state folder knows of one output blurfarm wrote: the key it was made for (the
/// input's bytes, the variant's recipe with the versions) and the file it wrote. An output
/// whose record matches the plan and whose file is still the one recorded is up to date.
public struct OutputRecord: Codable, Hashable, Sendable {
    /// The output's absolute path: the record's key.
    public var output: String
    /// The input's absolute path.
    public var input: String
    /// The variant's canonical description with the versions of blurfarm and libvips
    /// (``OutputRecipe``).
    public var recipe: String
    /// The input as it was when it was read for this output.
    public var inputFile: FileFingerprint
    /// The output file as written.
    public var outputFile: FileFingerprint
    /// When the output was written.
    public var written: Date
    /// The output image's width and height in pixels, as written (read from its header), for
    /// the output map; nil in records written before blurfarm kept them (the map reads the
    /// file's header then).
    public var width: Int?
    public var height: Int?

    public init(
        output: String, input: String, recipe: String, inputFile: FileFingerprint, outputFile: FileFingerprint,
        written: Date, width: Int? = nil, height: Int? = nil
    ) {
        self.output = output
        self.input = input
        self.recipe = recipe
        self.inputFile = inputFile
        self.outputFile = outputFile
        self.written = written
        self.width = width
        self.height = height
    }
}

/// What the state folder remembers of an input that could not be decoded through its own fault
/// (corrupt, not an image, over the pixel limit): the input's bytes as they were, and why. While
/// the input keeps the recorded bytes, and the decoder (the versions and the pixel limit) is the
/// recorded one, later runs skip its outputs quietly (`failedEarlier`) instead of failing them
/// again; `run --retry-failed` (or `--force`) tries it anyway (docs/scheduling.md).
public struct InputFailure: Codable, Hashable, Sendable {
    /// The input's absolute path: the failure's key.
    public var input: String
    /// The input as it was when it failed.
    public var inputFile: FileFingerprint
    /// Why it failed, without the file name (libvips's message, or the pixel limit's).
    public var reason: String
    /// What decided (``IncrementalRun/decoderKey(versions:pixelLimit:)``): a newer libvips or
    /// another pixel limit may read the file, so either changed tries it again.
    public var decoder: String
    /// When it failed.
    public var failed: Date

    public init(input: String, inputFile: FileFingerprint, reason: String, decoder: String, failed: Date) {
        self.input = input
        self.inputFile = inputFile
        self.reason = reason
        self.decoder = decoder
        self.failed = failed
    }
}
