import BlurfarmCore

extension GaussianBlur {
    /// The rectangle of the image that rendering `tile` at file depth reads: the tile grown by
    /// the mask's radius, clipped to the image and folded by `edge` (`grow` reads as
    /// `transparent`). The same rectangle ``FilterChain/sourceRegion(for:image:)`` names for a
    /// chain of this filter alone.
    public func sourceRegion(for tile: Rect, image: Rect, edge: EdgeRule) -> Rect {
        EdgeExtension.sourceRect(
            of: regionOfInterest(for: tile, image: image), image: image, rule: edge == .grow ? .transparent : edge)
    }

    /// Renders the pixels of `tile` from 8-bit samples to 8-bit samples, without a `Float32`
    /// image in between. Opaque RGB under `clamp` or `mirror` (3 channels in and out), where
    /// the mask has a ``fixedPoint`` form, is blurred in fixed point
    /// (``FixedPointConvolution``); everything else is premultiplied into `Float32` a strip at a
    /// time, convolved, unpremultiplied and rounded to nearest (``SampleConvolution``). The
    /// choice depends on sigma, the channels and the edge rule only, never on the tile.
    ///
    /// `source` holds at least ``sourceRegion(for:image:edge:)`` of the image `image`, with 3
    /// channels (opaque RGB) or 4 (RGBA, straight alpha). `output` holds `tile`, which lies
    /// inside ``FilterChain/outputRect(forImage:)`` (the image, or the image grown by the reach
    /// for `grow`), and has ``FilterChain/channels(forSource:)`` channels (4 for an opaque
    /// source under `transparent` or `grow`). Colour mode `gamma` (the stored values are
    /// averaged); the `linear` mode runs through ``FilterChain`` in `Float32`. Each output
    /// sample is the same bits whatever tiles the output is cut into, and within one level of
    /// the double-precision definition (docs/filters.md).
    public func render(
        tile: Rect, source: SampleBuffer<UInt8>, image: Rect, edge: EdgeRule, into output: SampleBuffer<UInt8>
    ) {
        checkTile(tile, source: source, image: image, edge: edge, output: output)
        if let fixedPoint, output.channels == 3 {
            FixedPointConvolution.apply(
                fixedPoint, tile: tile, source: source, image: image, edge: edge, output: output, schedule: schedule)
            return
        }
        SampleConvolution.apply(
            weights: weights, tile: tile, source: source, image: image, edge: edge, output: output,
            schedule: schedule)
    }

    /// Renders the pixels of `tile` from 16-bit samples to 16-bit samples, as the 8-bit
    /// ``render(tile:source:image:edge:into:)-(_,SampleBuffer<UInt8>,_,_,_)`` does; within two
    /// levels of the double-precision definition.
    public func render(
        tile: Rect, source: SampleBuffer<UInt16>, image: Rect, edge: EdgeRule, into output: SampleBuffer<UInt16>
    ) {
        checkTile(tile, source: source, image: image, edge: edge, output: output)
        SampleConvolution.apply(
            weights: weights, tile: tile, source: source, image: image, edge: edge, output: output,
            schedule: schedule)
    }

    private func checkTile<S: FileSample>(
        _ tile: Rect, source: SampleBuffer<S>, image: Rect, edge: EdgeRule, output: SampleBuffer<S>
    ) {
        let chain = FilterChain(filters: [self], edge: edge)
        precondition(chain.outputRect(forImage: image).contains(tile), "tile \(tile) lies outside the output")
        let needed = sourceRegion(for: tile, image: image, edge: edge)
        precondition(
            image.contains(source.rect) && (needed.isEmpty || source.rect.contains(needed)),
            "the source \(source.rect) does not hold the \(needed) that tile \(tile) reads")
        precondition(output.rect.contains(tile), "the output \(output.rect) does not hold tile \(tile)")
        let n = chain.channels(forSource: source.channels)
        precondition(output.channels == n, "the output has \(output.channels) channels, the tile needs \(n)")
    }
}
