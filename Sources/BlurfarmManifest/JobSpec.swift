import BlurfarmCore

/// A job as a manifest describes it, checked: which inputs, and which outputs to make of
/// each. `docs/manifest.md` describes every key.
///
/// Two jobs are equal when they say the same thing: the `…Location(s)` properties record
/// where things were written and take no part in `==` or hashing.
public struct JobSpec: Hashable, Sendable {
    /// The job's name: letters, digits, `-`, `_` and `.`.
    public var name: String
    /// Globs of input files, relative to the manifest's folder (see ``GlobPattern``).
    public var inputs: [String]
    /// Globs of files to leave out, though an input glob matches them.
    public var exclude: [String]
    /// The variants written for every input; at least one.
    public var outputs: [VariantSpec]
    /// The tile side in pixels (0: one tile per image), `nil` to use the configuration's.
    public var tile: Int?
    /// How outputs are checked (default `checksum`).
    public var verify: VerifyMode
    /// Where the job's output map goes (`map:`, a `.json` path relative to the manifest's
    /// folder; docs/json.md), `nil` for none.
    public var map: String?
    /// Where `map:`'s value is written, when it came from a file.
    public var mapLocation: SourceLocation?

    /// Where the job's name is written, when it came from a file.
    public var nameLocation: SourceLocation?
    /// Where each input glob is written, parallel to `inputs` (empty when not from a file).
    public var inputLocations: [SourceLocation]
    /// Where each exclude glob is written, parallel to `exclude`.
    public var excludeLocations: [SourceLocation]

    /// A job; `exclude`, `tile` and `verify` have the manifest's defaults.
    public init(
        name: String, inputs: [String], exclude: [String] = [], outputs: [VariantSpec], tile: Int? = nil,
        verify: VerifyMode = .checksum, nameLocation: SourceLocation? = nil,
        inputLocations: [SourceLocation] = [], excludeLocations: [SourceLocation] = []
    ) {
        self.name = name
        self.inputs = inputs
        self.exclude = exclude
        self.outputs = outputs
        self.tile = tile
        self.verify = verify
        self.nameLocation = nameLocation
        self.inputLocations = inputLocations
        self.excludeLocations = excludeLocations
    }

    /// Whether both say the same thing; locations are not compared.
    public static func == (a: JobSpec, b: JobSpec) -> Bool {
        a.name == b.name && a.inputs == b.inputs && a.exclude == b.exclude && a.outputs == b.outputs
            && a.tile == b.tile && a.verify == b.verify && a.map == b.map
    }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(inputs)
        hasher.combine(exclude)
        hasher.combine(outputs)
        hasher.combine(tile)
        hasher.combine(verify)
        hasher.combine(map)
    }
}

extension JobSpec {
    /// An error at the `path:` of every variant whose format this build cannot write (AVIF
    /// without an AV1 encoder), with `unavailable`'s reason; `unavailable` gives nil for a
    /// format that can be written. The decoder knows every format; only the image writer
    /// knows what the libvips in use can encode.
    public func unwritableOutputs(_ unavailable: (ImageFormat) -> String?) -> Diagnostics {
        var problems: [Diagnostic] = []
        for variant in outputs {
            let extensions = variant.formats.isEmpty ? [variant.pathTemplate.fixedExtension].compactMap { $0 } : variant.formats
            for format in Set(extensions.compactMap { ImageFormat(extension: $0) }) {
                guard let reason = unavailable(format) else { continue }
                problems.append(.error("output '\(variant.name)': \(reason)", at: variant.pathLocation))
            }
        }
        return Diagnostics(problems)
    }
}
