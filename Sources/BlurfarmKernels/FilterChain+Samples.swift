import BlurfarmCore

extension FilterChain {
    /// Renders `tile` as ``render(tile:source:image:into:)`` does, from and into pixels of any
    /// ``SampleFormat``. A chain with a ``fixedPointGaussian(forSourceChannels:)`` renders 8-bit
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
        if case .uint8(let samples) = source, case .uint8(let out) = output,
            let gaussian = fixedPointGaussian(forSourceChannels: samples.channels)
        {
            if out.channels != samples.channels {
                // RGBA into an output without alpha: the RGBA samples over the background, as
                // the whole-image path hands the same samples to the encoder.
                let rgba = AnyPixels.uint8(SampleBuffer<UInt8>(rect: tile, channels: samples.channels))
                try render(tile: tile, from: source, image: image, into: rgba, background: background)
                output.store(rgba.floats(in: tile, scratch: scratch), in: tile, background: background)
                return
            }
            // As the Float32 chain: a tile no region reaches is its source, one inside a region
            // is not blended.
            switch regions.uniformCoverage(of: tile, in: image) {
            case 0: output.copy(tile, from: source)
            case 1: gaussian.render(tile: tile, source: samples, image: image, edge: edge, into: out)
            default:
                gaussian.render(tile: tile, source: samples, image: image, edge: edge, into: out)
                regions.blend(tile: tile, source: samples, into: out, image: image)
            }
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

extension FilterChain {
    /// The gaussian that renders this chain from 8-bit samples to 8-bit samples directly, in
    /// exact fixed point (``GaussianBlur/render(tile:source:image:edge:into:)-(_,SampleBuffer<UInt8>,_,_,_)``),
    /// or nil. A chain of one gaussian whose mask has a ``GaussianBlur/fixedPoint`` form (every
    /// sigma up to 64 and beyond), colour mode `gamma`, edge `clamp` or `mirror`, over opaque
    /// RGB (3 channels) or RGBA (4: fixed point for the pixels whose window is opaque, the
    /// file-depth `Float32` arithmetic for the others; docs/filters.md says why). Its
    /// output is within one level of the double-precision definition, not the
    /// same bits as the `Float32` arithmetic of other chains (docs/filters.md). The one place
    /// the choice is made: every 8-bit image such a chain renders takes it, streamed or whole
    /// (`ImageRendering.render(_:sourceBitDepth:outputBitDepth:chain:tileSize:ticket:)`), whatever the tiles
    /// and the engine, so one job's bytes never depend on how it ran.
    public func fixedPointGaussian(forSourceChannels channels: Int) -> GaussianBlur? {
        guard channels == 3 || channels == 4, colour == .gamma, regions.extent != .cutout, edge == .clamp || edge == .mirror, filters.count == 1,
            let gaussian = filters[0] as? GaussianBlur, gaussian.fixedPoint != nil
        else { return nil }
        return gaussian
    }
}
