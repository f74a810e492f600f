/// What a filter sees beyond the edges of its input image.
public enum EdgeRule: String, CaseIterable, Sendable {
    /// Repeat the nearest edge pixel (the default: what users want for backgrounds).
    case clamp
    /// Reflect about the edge pixel without repeating it (…2, 1 | 0, 1, 2…), periodically
    /// when the reach is longer than the image.
    case mirror
    /// Transparent black outside; the output has the input's size.
    case transparent
    /// Transparent black outside, and the output grows by the chain's reach on every side,
    /// as Core Image's output extent does.
    case grow

    /// Whether every value beyond the image is a copy of one inside it (`clamp`, `mirror`): an
    /// opaque image stays opaque, and the output keeps the image's size.
    public var foldsIntoTheImage: Bool { self == .clamp || self == .mirror }

    /// The in-image coordinate whose value stands at `coordinate` on an axis of `length`
    /// pixels, or `nil` when the rule puts transparent black there.
    @inlinable
    public func sourceCoordinate(_ coordinate: Int, length: Int) -> Int? {
        if coordinate >= 0 && coordinate < length { return coordinate }
        switch self {
        case .clamp:
            return coordinate < 0 ? 0 : length - 1
        case .mirror:
            if length == 1 { return 0 }
            let period = 2 * (length - 1)
            var m = coordinate % period
            if m < 0 { m += period }
            return m < length ? m : period - m
        case .transparent, .grow:
            return nil
        }
    }
}
