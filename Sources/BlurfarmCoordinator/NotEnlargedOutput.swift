/// An output of a variant with `resize: sizes: [...]` that is not made because its width is
/// larger than the input's (as displayed) and the variant does not `upscale`: a file named
/// `-1280` that is 600 pixels wide would tell a page's `srcset` a width it does not have
/// (sharp's `withoutEnlargement`). The plan (`blurfarm check`) and the run's report list it;
/// it is not missing, and a recorded file at its path (made before, from a wider input or by
/// an older blurfarm that enlarged) is removed by `run --prune`. When the input grows past
/// its width, the output is planned again.
public struct NotEnlargedOutput: Sendable, Codable, Equatable {
    /// The input, relative to the manifest's folder.
    public let input: String
    /// The path the output would have.
    public let output: String
    /// The variant.
    public let variant: String
    /// The size's width, in pixels.
    public let width: Int
    /// The input's width as displayed (after its EXIF orientation), in pixels.
    public let sourceWidth: Int

    public init(input: String, output: String, variant: String, width: Int, sourceWidth: Int) {
        self.input = input
        self.output = output
        self.variant = variant
        self.width = width
        self.sourceWidth = sourceWidth
    }

    /// Why it is not made, as `check` and the report say it.
    public var reason: String {
        "\(width) px is larger than the source (\(sourceWidth) px): not enlarged ('upscale: true' enlarges)"
    }

    private enum CodingKeys: String, CodingKey { case input, output, variant, width, sourceWidth, reason }

    /// The stored properties and ``reason``.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(input, forKey: .input)
        try c.encode(output, forKey: .output)
        try c.encode(variant, forKey: .variant)
        try c.encode(width, forKey: .width)
        try c.encode(sourceWidth, forKey: .sourceWidth)
        try c.encode(reason, forKey: .reason)
    }

    /// Read back from a report; the reason is computed, not read.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            input: try c.decode(String.self, forKey: .input), output: try c.decode(String.self, forKey: .output),
            variant: try c.decode(String.self, forKey: .variant), width: try c.decode(Int.self, forKey: .width),
            sourceWidth: try c.decode(Int.self, forKey: .sourceWidth))
    }
}

/// The sizes not made of a report (``RunReport/notEnlarged``): listed, or those of a plan's
/// inputs, read back from the plan as the report is written and counted as it was made, so
/// that a run holds none of them (``PlannedInputs/forEachNotEnlarged(_:)``).
package enum NotEnlargedList: Sendable, Equatable {
    case listed([NotEnlargedOutput])
    case ofPlan(PlannedInputs)

    var count: Int {
        switch self {
        case .listed(let sizes): sizes.count
        case .ofPlan(let inputs): inputs.notEnlargedCount
        }
    }

    /// Each in plan order.
    func forEach(_ body: (NotEnlargedOutput) throws -> Void) rethrows {
        switch self {
        case .listed(let sizes): try sizes.forEach(body)
        case .ofPlan(let inputs): try inputs.forEachNotEnlarged(body)
        }
    }

    /// Every one, in plan order, as one list.
    var all: [NotEnlargedOutput] {
        if case .listed(let sizes) = self { return sizes }
        var all: [NotEnlargedOutput] = []
        forEach { all.append($0) }
        return all
    }

    /// The same sizes, however held.
    package static func == (a: NotEnlargedList, b: NotEnlargedList) -> Bool { a.all == b.all }
}
