import BlurfarmCore

/// A filter that the tiler can run on any output rectangle: a built-in kernel or a plugin.
///
/// The contract that makes tiling exact: the value a filter writes at a pixel depends only on
/// the input pixels in that pixel's neighbourhood (inside its ``regionOfInterest(for:image:)``),
/// combined by the same arithmetic in the same order wherever the pixel lies in a tile.
public protocol Filter: Sendable {
    /// The filter and its parameters, as the manifest and the reports spell it.
    /// Where the filter comes from: built in, or a plugin (which runs in worker processes only).
    var origin: FilterDescriptor.Origin { get }

    var spec: FilterSpec { get }
    /// The input rectangle the filter reads to compute `output`, for a source image covering
    /// `image` (Core Image's region of interest). The one place a filter's reach is computed:
    /// the planner, the tiler, the worker and the tests all ask it.
    func regionOfInterest(for output: Rect, image: Rect) -> Rect
    /// The rectangle where the output can differ from transparent black when the input is
    /// transparent outside `input` (Core Image's domain of definition): what the `grow` edge
    /// rule makes the output.
    func domainOfDefinition(forInput input: Rect, image: Rect) -> Rect
    /// Computes the pixels of `output.rect` from `input`, whose rectangle holds at least
    /// `regionOfInterest(for: output.rect, image: image)`, for a source image covering
    /// `image`. Writes nothing outside `output.rect`.
    ///
    /// - Throws: ``FilterFailure`` when the filter reports an error (plugins can; the built-in
    ///   filters never do).
    func apply(input: PixelBuffer, output: PixelBuffer, image: Rect) throws(FilterFailure)
    /// The filter as it runs in a chain of colour mode `colour`: a filter with colour
    /// parameters (sRGB values, as people write them) converts them to linear light for
    /// `linear`, where its pixels are linear. The filter itself by default.
    func adapted(to colour: ColourMode) -> any Filter

    /// Why the filter cannot render an image covering `image` whose input covers `input`
    /// (a plugin whose answers are out of bounds), or `nil`.
    func problem(forInput input: Rect, image: Rect) -> FilterFailure?

    /// The farthest the filter reads from any pixel it computes, for a source image covering
    /// `image`: every ``regionOfInterest(for:image:)`` lies within its output grown by it. A
    /// ``UniformReachFilter``'s reach (the same at every pixel: the blurs, also inside their
    /// regions), a redaction's largest region (``RedactFilter``); nil when only the filter knows,
    /// rectangle by rectangle (a plugin such as `zoom`).
    func reach(in image: Rect) -> Reach?
}

/// A filter whose reach is the same at every pixel (the built-in filters): its region of
/// interest is the output grown by the reach, and so is its domain of definition.
public protocol UniformReachFilter: Filter {
    /// How far the filter reads beyond the pixel it computes.
    var reach: Reach { get }
}

extension Filter {
    /// Built in, unless the filter says otherwise (plugins do).
    public var origin: FilterDescriptor.Origin { .builtIn }

    /// The filter itself: it has no colour parameters.
    public func adapted(to colour: ColourMode) -> any Filter { self }

    /// None: a filter whose rectangles are computed, not answered by a plugin, has no problem.
    public func problem(forInput input: Rect, image: Rect) -> FilterFailure? { nil }

    /// Unknown, unless the filter says (``UniformReachFilter`` does).
    public func reach(in image: Rect) -> Reach? { nil }
}

extension UniformReachFilter {
    public func reach(in image: Rect) -> Reach? { reach }

    public func regionOfInterest(for output: Rect, image: Rect) -> Rect {
        output.grown(dx: reach.x, dy: reach.y)
    }

    public func domainOfDefinition(forInput input: Rect, image: Rect) -> Rect {
        input.grown(dx: reach.x, dy: reach.y)
    }
}

/// Why a filter could not compute its pixels: the filter's name and its message.
public struct FilterFailure: Error, Sendable, CustomStringConvertible {
    /// The filter that failed.
    public let filter: String
    /// What went wrong, in the filter's words.
    public let message: String

    public init(filter: String, message: String) {
        self.filter = filter
        self.message = message
    }

    public var description: String { message }
}
