import BlurfarmCore

extension FilterChain {
    /// Renders `tile` as ``render(tile:source:image:into:)`` does, from and into pixels of any
    /// ``SampleFormat``. An identity chain (``isIdentity(forSource:)``) over opaque samples
    /// copies them; a chain with a ``fixedPointFilter(forSourceChannels:)`` renders 8-bit
    /// samples into 8-bit samples directly, in fixed point. Otherwise the rows the tile
    /// reads (``sourceRegion(for:image:)``) are converted to premultiplied `Float32`
    /// (``AnyPixels/floats(in:scratch:)``), and the rendered tile, when `output` holds a file's
    /// samples, to them over `background` (``AnyPixels/store(_:in:background:)``), in memory
    /// from `scratch`: pointwise conversions, so the same bits as converting the whole image at
    /// once. How a worker and the in-process renderer render a tile of a streamed image.
    ///
    /// - Throws: the ``FilterFailure`` of the first filter that fails (only plugins can).
    public func render(
        tile: Rect, from source: AnyPixels, image: Rect, into output: AnyPixels, background: SIMD3<Float>,
        scratch: ScratchStorage? = nil
    ) throws(FilterFailure) {
        // The identity over opaque samples into samples like them (a re-encode, a format
        // conversion): the samples themselves, which their `Float32` values (`v / 255`,
        // `v / 65535`) give back exactly, without the round trip.
        if source.format != .float32, source.channels == 3, output.format == source.format, output.channels == 3,
            isIdentity(forSource: 3)
        {
            output.copy(tile, from: source)
            return
        }
        if case .uint8(let samples) = source, case .uint8(let out) = output,
            let filter = fixedPointFilter(forSourceChannels: samples.channels)
        {
            if out.channels != samples.channels {
                // RGBA into an output without alpha: the RGBA samples over the background, as
                // the whole-image path hands the same samples to the encoder.
                let bytes = tile.area * samples.channels
                let rgba = AnyPixels.uint8(
                    SampleBuffer<UInt8>(
                        rect: tile, storage: scratch?.storage(byteCount: bytes) ?? .uninitialized(byteCount: bytes),
                        channels: samples.channels))
                try render(tile: tile, from: source, image: image, into: rgba, background: background)
                output.store(rgba.floats(in: tile, scratch: scratch), in: tile, background: background)
                return
            }
            // As the Float32 chain: a tile no region reaches is its source, one inside a region
            // is not blended.
            switch regions.uniformCoverage(of: tile, in: image) {
            case 0: output.copy(tile, from: source)
            case 1: filter.render(tile: tile, source: samples, image: image, edge: edge, into: out)
            default:
                filter.render(tile: tile, source: samples, image: image, edge: edge, into: out)
                regions.blend(tile: tile, source: samples, into: out, image: image)
            }
            return
        }
        // A tile no region reaches, from opaque samples into samples like them: the samples
        // themselves (what their Float32 values, copied and stored, give back exactly).
        if source.format != .float32, source.channels == 3, output.format == source.format, output.channels == 3,
            regions.extent == .image, regions.uniformCoverage(of: tile, in: image) == 0
        {
            output.copy(tile, from: source)
            return
        }
        let needed = sourceRegion(for: tile, image: image)
        let floats = source.floats(
            in: needed.isEmpty ? Rect(x: source.rect.x, y: source.rect.y, width: 0, height: 0) : needed, scratch: scratch)
        if case .float32(let out) = output {
            try render(tile: tile, source: floats, image: image, into: out)
            return
        }
        let n = channels(forSource: source.channels)
        let rendered = scratch?.pixels(tile, channels: n) ?? PixelBuffer.uninitialized(tile, channels: n)
        try render(tile: tile, source: floats, image: image, into: rendered)
        output.store(rendered, in: tile, background: background)
    }
}

/// A filter that renders 8-bit samples into 8-bit samples itself, at the file's depth: in exact
/// fixed point where it can (the gaussian's RGBA pixels whose window is not opaque take its
/// file-depth `Float32` arithmetic instead), within one level of its double-precision definition,
/// the same bits in any tiles, for the channels and edge rules it names: a chain of it alone
/// renders a file's samples with no `Float32` image in between
/// (``FilterChain/fixedPointFilter(forSourceChannels:)``).
public protocol SampleRenderingFilter: Filter {
    /// Whether ``render(tile:source:image:edge:into:)`` serves `channels` (3: opaque RGB, 4:
    /// RGBA) in and out under `edge`.
    func rendersSamples(channels: Int, edge: EdgeRule) -> Bool
    /// Renders `tile` of the image `image` from `source` (holding what the tile reads: the
    /// chain's ``FilterChain/sourceRegion(for:image:)``) into `output`.
    func render(tile: Rect, source: SampleBuffer<UInt8>, image: Rect, edge: EdgeRule, into output: SampleBuffer<UInt8>)
}

extension Filter {
    /// Checks that rendering `tile` of `image` at the file's depth, as the chain of this filter
    /// alone under `edge` would, is asked right: the tile inside the chain's output, `source`
    /// inside the image and holding the tile's ``FilterChain/sourceRegion(for:image:)``, `output`
    /// holding the tile with the chain's channels.
    func checkSampleTile<S: FileSample>(
        _ tile: Rect, source: SampleBuffer<S>, image: Rect, edge: EdgeRule, output: SampleBuffer<S>
    ) {
        let chain = FilterChain(filters: [self], edge: edge)
        precondition(chain.outputRect(forImage: image).contains(tile), "tile \(tile) lies outside the output")
        let needed = chain.sourceRegion(for: tile, image: image)
        precondition(
            image.contains(source.rect) && (needed.isEmpty || source.rect.contains(needed)),
            "the source \(source.rect) does not hold the \(needed) that tile \(tile) reads")
        precondition(output.rect.contains(tile), "the output \(output.rect) does not hold tile \(tile)")
        let n = chain.channels(forSource: source.channels)
        precondition(output.channels == n, "the output has \(output.channels) channels, the tile needs \(n)")
    }
}

extension FilterChain {
    /// The filter that renders this chain from 8-bit samples to 8-bit samples directly (in
    /// exact fixed point where it can), or nil: a chain of one ``SampleRenderingFilter`` that serves the
    /// channels under the chain's edge rule, colour mode `gamma`, no cutout region (and for RGBA
    /// no region at all). The gaussian
    /// (a fixed-point mask: every sigma up to 64 and beyond; `clamp` or `mirror`) serves opaque
    /// RGB and RGBA (fixed point for the pixels whose window is opaque, the file-depth `Float32`
    /// arithmetic for the others), the motion blur opaque RGB (docs/filters.md says why). Its
    /// output is within one level of the double-precision definition, not the
    /// same bits as the `Float32` arithmetic of other chains (docs/filters.md). The one place
    /// the choice is made: every 8-bit image such a chain renders takes it, streamed or whole
    /// (`ImageRendering.render(_:sourceBitDepth:outputBitDepth:chain:tileSize:ticket:)`), whatever the tiles
    /// and the engine, so one job's bytes never depend on how it ran.
    public func fixedPointFilter(forSourceChannels channels: Int) -> (any SampleRenderingFilter)? {
        // RGBA under regions stays in Float32: outside them a pixel is the source's, and the
        // whole-image path's source (premultiplied, decoded) has lost the colour a file may
        // keep under alpha 0, which the samples still hold.
        guard colour == .gamma, regions.extent != .cutout, channels == 3 || regions.isEverywhere, filters.count == 1,
            let filter = filters[0] as? any SampleRenderingFilter, filter.rendersSamples(channels: channels, edge: edge)
        else { return nil }
        return filter
    }
}
