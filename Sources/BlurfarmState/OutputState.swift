/// What the up-to-date check says of one output (``IncrementalRun``), as `check --status`
/// shows it; the raw value is the JSON's (docs/json.md).
public enum OutputState: String, Sendable, Codable, CaseIterable, CustomStringConvertible {
    /// The recorded output is there as written, from the same input bytes with the same recipe.
    case upToDate
    /// The input's bytes are not the recorded ones (or it cannot be read).
    case inputChanged
    /// The variant's recipe (its settings, the versions, a plugin) is not the recorded one.
    case recipeChanged
    /// The file at the output's path is not the one recorded.
    case outputChanged
    /// A file is at the output's path but no record says blurfarm wrote it.
    case notRecorded
    /// No file at the output's path.
    case missing
    /// A recorded output whose input is gone: `run --prune` removes it.
    case wouldBePruned
    /// The input failed to decode earlier, through its own fault, and has not changed since:
    /// `run` skips it (`--retry-failed` tries it again).
    case failedEarlier
    /// A size of a variant with `sizes` larger than its input, not made (``NotEnlargedOutput``).
    case notEnlarged

    /// As `check --status` prints it: `up to date`, `stale (input changed)`, `missing`...
    public var description: String {
        switch self {
        case .upToDate: "up to date"
        case .inputChanged: "stale (input changed)"
        case .recipeChanged: "stale (recipe changed)"
        case .outputChanged: "stale (output changed)"
        case .notRecorded: "stale (not recorded)"
        case .missing: "missing"
        case .wouldBePruned: "would be pruned"
        case .failedEarlier: "failed earlier"
        case .notEnlarged: "not made (larger than the source)"
        }
    }
}

/// One line of `check --status`: an output and its state.
public struct OutputStatus: Sendable, Codable {
    /// The input: relative to the manifest's folder for a planned output, the recorded
    /// absolute path for one that would be pruned.
    public let input: String
    /// The output's path: as planned, or the recorded absolute path.
    public let output: String
    /// The variant; nil for an output that would be pruned (the records do not keep it).
    public let variant: String?
    public let state: OutputState
    /// Why the input failed, for `failedEarlier`.
    public let reason: String?

    public init(input: String, output: String, variant: String?, state: OutputState, reason: String? = nil) {
        self.input = input
        self.output = output
        self.variant = variant
        self.state = state
        self.reason = reason
    }
}
