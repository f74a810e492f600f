import BlurfarmCore

/// One filter of a chain applied inside its own regions (the manifest's `regions` among a
/// filter's parameters): its output blended with its input by the mask, as a variant's regions
/// blend the whole chain's output with the source (RegionBlend.swift, the same formula and
/// coverage). A filter like any other, so every path that renders a chain (in process, tiles
/// in workers, streamed bands) renders it, and the same bits whatever the tiles.
///
/// Where the coverage is 0 over the whole output rectangle the wrapped filter does not run (the
/// output is its input); where it is 1 there is no blend.
public struct RegionFilter: Filter {
    /// The filter placed.
    private let inner: any Filter
    /// Where it applies: never ``RegionMask/Extent/box`` or `cutout` (a variant's).
    private let mask: RegionMask

    /// `filter` applied inside `mask` only; `filter` itself when the mask is everywhere.
    public static func placing(_ filter: any Filter, in mask: RegionMask) -> any Filter {
        mask.isEverywhere ? filter : RegionFilter(inner: filter, mask: mask)
    }

    private init(inner: any Filter, mask: RegionMask) {
        precondition(mask.extent == .image, "a filter's regions blend; only a variant writes their box")
        self.inner = inner
        self.mask = mask
    }

    public var origin: FilterDescriptor.Origin { inner.origin }

    public var spec: FilterSpec {
        var spec = inner.spec
        spec.regions = mask
        return spec
    }

    /// The wrapped filter's, and the output itself (the blend reads the input there); only the
    /// output where no region reaches it (``apply(input:output:image:)`` copies it), so the
    /// filters before this one compute no halo for it there.
    public func regionOfInterest(for output: Rect, image: Rect) -> Rect {
        if mask.uniformCoverage(of: output, in: image) == 0 { return output }
        return inner.regionOfInterest(for: output, image: image).union(output)
    }

    public func domainOfDefinition(forInput input: Rect, image: Rect) -> Rect {
        inner.domainOfDefinition(forInput: input, image: image)
    }

    public func reach(in image: Rect) -> Reach? { inner.reach(in: image) }

    public func adapted(to colour: ColourMode) -> any Filter {
        RegionFilter(inner: inner.adapted(to: colour), mask: mask)
    }

    public func problem(forInput input: Rect, image: Rect) -> FilterFailure? {
        inner.problem(forInput: input, image: image)
    }

    public func apply(input: PixelBuffer, output: PixelBuffer, image: Rect) throws(FilterFailure) {
        let rect = output.rect
        switch mask.uniformCoverage(of: rect, in: image) {
        case 0:
            output.copy(rect, from: input)
        case 1:
            try inner.apply(input: input, output: output, image: image)
        default:
            try inner.apply(input: input, output: output, image: image)
            mask.blend(tile: rect, source: input, into: output, image: image)
        }
    }
}
