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

    public init(
        output: String, input: String, recipe: String, inputFile: FileFingerprint, outputFile: FileFingerprint,
        written: Date
    ) {
        self.output = output
        self.input = input
        self.recipe = recipe
        self.inputFile = inputFile
        self.outputFile = outputFile
        self.written = written
    }
}
