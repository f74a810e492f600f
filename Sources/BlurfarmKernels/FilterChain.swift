import BlurfarmCore

/// Filters applied in order to one image, with the edge rule and colour mode they share.
///
/// Each filter maps an image to an image: with `clamp`, `mirror` and `transparent` every
/// intermediate image has the source's size and the edge rule supplies the pixels beyond it;
/// with `grow` every intermediate extends as far as its values are not transparent and the
/// output is the source grown by each filter's domain of definition (by the chain's reach,
/// for the built-in filters).
public struct FilterChain: Sendable {
    public let filters: [any Filter]
    public let edge: EdgeRule
    public let colour: ColourMode
    /// Where the filters apply: the chain's output is blended with its source by this mask as
    /// the last step of every tile (``RegionMask/blend(tile:source:into:image:)``, RegionBlend.swift).
    public let regions: RegionMask
    /// The filters (``Filter/adapted(to:)`` the colour mode) with the colour conversions of the
    /// `linear` mode around them; none for no filters, so that an empty chain copies its input
    /// whatever the colour mode.
    private let stages: [any Filter]

    /// A chain; regions need an edge rule that keeps the image's size (not `grow`: the
    /// manifest refuses the pair).
    public init(filters: [any Filter], edge: EdgeRule = .clamp, colour: ColourMode = .gamma, regions: RegionMask = .everywhere) {
        precondition(regions.isEverywhere || edge != .grow, "regions are placed on an image whose size the chain keeps")
        // A redaction without regions of its own measures the chain's (each face at its size).
        let filters = filters.map { filter -> any Filter in (filter as? RedactFilter)?.placed(in: regions) ?? filter }
        self.filters = filters
        self.edge = edge
        self.colour = colour
        self.regions = regions
        let adapted = filters.map { $0.adapted(to: colour) }
        stages = colour == .linear && !filters.isEmpty
            ? [ColourConversion(.toLinear)] + adapted + [ColourConversion(.toEncoded)] : adapted
    }

    /// The farthest the chain reads from any output pixel, for a source image covering `image`:
    /// the sum of its filters' reaches (``Filter/reach(in:)``). Nil when a filter's region of
    /// interest only it knows, rectangle by rectangle (a plugin such as `zoom`).
    public func reach(in image: Rect) -> Reach? {
        var sum = Reach.zero
        for filter in filters {
            guard let reach = filter.reach(in: image) else { return nil }
            sum = sum + reach
        }
        return sum
    }

    /// Whether the chain may render an image band by band (``BandedRender``), as far as it
    /// tells before the image's size is known (``streams(in:)`` decides): every filter built in
    /// (a plugin's region of interest may depend on where a tile lies), and it writes the whole
    /// image (`output: region` writes a box, rendered whole: small, and what the regions cost
    /// anyway).
    public var streams: Bool {
        regions.extent == .image && filters.allSatisfy { $0.origin == .builtIn }
    }

    /// Whether the chain renders an image covering `image` band by band: it ``streams`` and
    /// reaches at most ``RenderSchedule/maximumStreamedReach`` rows up and down, or half the
    /// image's height when that is more (a redaction reads each region's whole box: its bands
    /// stream while no box covers most of the image).
    public func streams(in image: Rect) -> Bool {
        guard streams, let reach = reach(in: image) else { return false }
        return reach.y <= max(RenderSchedule.maximumStreamedReach, image.height / 2)
    }

    /// The channels the chain works in and writes for a source with `sourceChannels`: an
    /// opaque (3-channel) source stays opaque under `clamp` and `mirror`; `transparent` and
    /// `grow` bring transparency in, so alpha is carried.
    /// A cutout (`output: region` in a format with alpha) carries its coverage as alpha.
    public func channels(forSource sourceChannels: Int) -> Int {
        sourceChannels == 3 && edge.foldsIntoTheImage && regions.extent != .cutout ? 3 : 4
    }

    /// Whether rendering a source with `sourceChannels` gives the source itself, bit for bit:
    /// no filters, and the channels kept. Such a chain (a thumbnail, a format conversion)
    /// need not be rendered at all.
    public func isIdentity(forSource sourceChannels: Int) -> Bool {
        filters.isEmpty && channels(forSource: sourceChannels) == sourceChannels
    }

    /// The output rectangle for a source image covering `image`.
    /// With `grow` that is each filter's domain of definition in turn (the source grown by
    /// the chain's reach for the built-in filters); otherwise the image itself.
    /// With `output: region` (``RegionMask/extent``), the regions' box
    /// (``RegionMask/box(in:)``; empty when they lie outside the image: ``regionProblem(forImage:)``).
    public func outputRect(forImage image: Rect) -> Rect {
        if regions.extent != .image { return regions.box(in: image) }
        guard edge == .grow else { return image }
        return filters.reduce(image) { $1.domainOfDefinition(forInput: $0, image: image) }
    }

    /// The first filter's failure to render an image covering `image`, asked before any
    /// rectangle is used: a plugin whose domain of definition or region of interest is out of
    /// bounds (its rectangles are then replaced by safe ones, and the chain must not run).
    public func problem(forImage image: Rect) -> FilterFailure? {
        var input = image
        for filter in filters {
            if let problem = filter.problem(forInput: input, image: image) { return problem }
            if edge == .grow { input = filter.domainOfDefinition(forInput: input, image: image) }
        }
        return nil
    }

    /// Why nothing can be written for an image covering `image`: `output: region` whose
    /// regions hold no pixel of it (the box is empty): all outside it, or, inside, each too thin
    /// to hold a pixel's centre. Nil otherwise.
    public func regionProblem(forImage image: Rect) -> String? {
        guard regions.extent != .image, regions.box(in: image).isEmpty else { return nil }
        let outside = regions.regions.allSatisfy { $0.placement(in: image).whollyOutside }
        return "'output: region': "
            + (outside
                ? "every region lies outside the \(image.width)x\(image.height) image"
                : "no region holds a whole pixel's centre of the \(image.width)x\(image.height) image (too thin or too small)")
            + ", so there is no box to write"
    }

    /// How many of `tiles` (of an image covering `image`) no region reaches: rendering copies
    /// them from the source without running the filters (``render(tile:source:image:into:)``),
    /// or, for a cutout, leaves them transparent.
    public func copiedTiles(_ tiles: [Rect], image: Rect) -> Int {
        regions.isEverywhere ? 0 : tiles.reduce(0) { $0 + (regions.uniformCoverage(of: $1, in: image) == 0 ? 1 : 0) }
    }

    /// The rectangle of the source image that rendering `tile` reads (what a tile's task
    /// carries: the tile grown by the halo, clipped to the image, folded by the edge rule).
    public func sourceRegion(for tile: Rect, image: Rect) -> Rect {
        plan(tile: tile, image: image).computed[0]
    }

    /// How many pixels the filters read to render `tile`, all stages together (each stage's
    /// region of interest, beyond the image too): the measure of a tile's work that the
    /// adaptive task timeout allows time for. Saturates instead of overflowing.
    public func pixelsRead(for tile: Rect, image: Rect) -> Int {
        let reads = plan(tile: tile, image: image).reads.dropFirst()
        return reads.reduce(stages.isEmpty ? tile.area : 0) { sum, rect in
            let (total, overflow) = sum.addingReportingOverflow(rect.area)
            return overflow ? Int.max : total
        }
    }

    /// Rectangles for one tile: `computed[i]` is what stage `i` computes (`computed[0]` is
    /// the source region read), `reads[i]` what stage `i` reads (for `i ≥ 1`).
    private func plan(tile: Rect, image: Rect) -> (computed: [Rect], reads: [Rect]) {
        let n = stages.count
        var computed = [Rect](repeating: tile, count: n + 1)
        var reads = [Rect](repeating: tile, count: n + 1)
        for i in stride(from: n, through: 1, by: -1) {
            reads[i] = stages[i - 1].regionOfInterest(for: computed[i], image: image)
            computed[i - 1] = valuesNeeded(for: reads[i], fromStage: i - 1, image: image)
        }
        if n == 0 { computed[0] = valuesNeeded(for: tile, fromStage: 0, image: image) }
        return (computed, reads)
    }

    /// The rectangle of stage `stage`'s output whose values supply `region`.
    private func valuesNeeded(for region: Rect, fromStage stage: Int, image: Rect) -> Rect {
        if edge == .grow && stage > 0 { return region }  // grown intermediates are computed as far as read
        return EdgeExtension.sourceRect(of: region, image: image, rule: edge)
    }

    /// Renders the pixels of `tile` (inside ``outputRect(forImage:)``) from `source` (the whole
    /// source image) into `output`, whose rectangle holds `tile`. The result is bit-identical
    /// whatever tiles the output is cut into. `output` has ``channels(forSource:)`` channels.
    ///
    /// - Throws: the ``FilterFailure`` of the first filter that fails (only plugins can).
    public func render(tile: Rect, source: PixelBuffer, into output: PixelBuffer) throws(FilterFailure) {
        try render(tile: tile, source: source, image: source.rect, into: output)
    }

    /// Renders the pixels of `tile` as ``render(tile:source:into:)`` does, from a `source` that
    /// holds only part of the image `image`: at least ``sourceRegion(for:image:)`` (what a
    /// worker's task carries). The result is the same bits as from the whole image.
    ///
    /// - Throws: the ``FilterFailure`` of the first filter that fails (only plugins can).
    public func render(tile: Rect, source: PixelBuffer, image: Rect, into output: PixelBuffer) throws(FilterFailure) {
        let needed = sourceRegion(for: tile, image: image)
        precondition(
            image.contains(source.rect) && (needed.isEmpty || source.rect.contains(needed)),
            "the source \(source.rect) does not hold the \(needed) that tile \(tile) reads")
        let n = channels(forSource: source.channels)
        precondition(output.channels == n, "the output has \(output.channels) channels, the chain works in \(n)")
        let target = output.view(tile)
        let (computed, reads) = plan(tile: tile, image: image)
        let sourceEdge = edge == .grow ? EdgeRule.transparent : edge
        // A tile no region reaches is its source (what the blend would give it, bit for bit),
        // and one wholly inside a region is its filtered pixels: only the regions cost.
        // A cutout's tile no region reaches is transparent.
        let coverage = regions.uniformCoverage(of: tile, in: image)
        if coverage == 0 && regions.extent == .cutout {
            target.clear(tile)
            return
        }
        if stages.isEmpty || coverage == 0 {
            target.copy(tile, from: EdgeExtension.extend(source, image: image, to: tile, rule: sourceEdge, channels: n))
            return
        }
        var current = EdgeExtension.extend(source, image: image, to: reads[1], rule: sourceEdge, channels: n)
        for i in 1...stages.count {
            let input = i == 1 ? current
                : edge == .grow ? current.view(reads[i])
                : EdgeExtension.extend(current, image: image, to: reads[i], rule: edge, channels: n)
            let result = i == stages.count ? target : PixelBuffer.uninitialized(computed[i], channels: n)
            try stages[i - 1].apply(input: input, output: result, image: image)
            current = result
        }
        if coverage == nil && regions.extent == .cutout {
            regions.cut(tile: tile, into: output, image: image)
        } else if coverage == nil {
            let unfiltered = EdgeExtension.extend(source, image: image, to: tile, rule: sourceEdge, channels: n)
            regions.blend(tile: tile, source: unfiltered, into: output, image: image)
        }
    }
}
