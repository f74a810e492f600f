import BlurfarmCore

/// A filter that the tiler can run on any output rectangle.
///
/// The contract that makes tiling exact: the value a filter writes at a pixel depends only on
/// the input pixels in that pixel's neighbourhood (its ``regionOfInterest(for:)``), combined by
/// the same arithmetic in the same order wherever the pixel lies in a tile.
public protocol Filter: Sendable {
    /// The filter and its parameters, as the manifest and the reports spell it.
    var spec: FilterSpec { get }
    /// How far the filter reads beyond the pixel it computes. The one place a filter's reach
    /// is computed: the planner, the tiler and the tests all ask it.
    var reach: Reach { get }
    /// The input rectangle the filter reads to compute `output`.
    func regionOfInterest(for output: Rect) -> Rect
    /// Computes the pixels of `output.rect` from `input`, whose rectangle holds at least
    /// `regionOfInterest(for: output.rect)`. Writes nothing outside `output.rect`.
    func apply(input: PixelBuffer, output: PixelBuffer)
}

extension Filter {
    public func regionOfInterest(for output: Rect) -> Rect {
        output.grown(dx: reach.x, dy: reach.y)
    }
}
