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
    /// image in between. Under `clamp` or `mirror`, where the mask has a ``fixedPoint`` form,
    /// opaque RGB (3 channels in and out) is blurred in fixed point (``FixedPointConvolution``),
    /// and so is every pixel of RGBA (4 channels in and out) whose whole window is opaque
    /// (``OpaqueWindows``); everything else is premultiplied into `Float32` a strip at a time,
    /// convolved, unpremultiplied and rounded to nearest (``SampleConvolution``). The choice
    /// depends on sigma, the channels, the edge rule and, for RGBA, the pixel's own window,
    /// never on the tile.
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
        checkSampleTile(tile, source: source, image: image, edge: edge, output: output)
        func inFloat32(_ part: Rect, into output: SampleBuffer<UInt8>) {
            SampleConvolution.apply(
                weights: weights, tile: part, source: source, image: image, edge: edge, output: output,
                schedule: schedule)
        }
        guard rendersSamples(channels: source.channels, edge: edge), let fixedPoint, !tile.isEmpty else {
            return inFloat32(tile, into: output)
        }
        func inFixedPoint(_ part: Rect, into output: SampleBuffer<UInt8>) {
            FixedPointConvolution.apply(
                fixedPoint, tile: part, source: source, image: image, edge: edge, output: output, schedule: schedule)
        }
        if source.channels == 3 { return inFixedPoint(tile, into: output) }
        // RGBA: decided for the whole tile where its alpha allows. Otherwise the tile in
        // `Float32`, then, block by block, the pixels whose windows are opaque in fixed point over
        // it (a block's pixels decided together where its alpha allows, else one by one): each
        // pixel's bits are its arithmetic's, whatever the tile or block it is rendered in.
        let r = fixedPoint.radius
        switch OpaqueWindows.uniform(tile: tile, source: source, image: image, radius: r) {
        case .opaque: return inFixedPoint(tile, into: output)
        case .translucent: return inFloat32(tile, into: output)
        case .mixed, nil: inFloat32(tile, into: output)
        }
        let side = max(128, (2 * r + 31) / 32 * 32)
        let scratch = PixelStorage.uninitialized(byteCount: side * side * 4)
        for by in stride(from: tile.y, to: tile.maxY, by: side) {
            for bx in stride(from: tile.x, to: tile.maxX, by: side) {
                let block = Rect(x: bx, y: by, width: min(side, tile.maxX - bx), height: min(side, tile.maxY - by))
                switch OpaqueWindows(tile: block, source: source, image: image, radius: r) {
                case .opaque: inFixedPoint(block, into: output)
                case .translucent: break
                case .mixed(let opaque):
                    let fixed = SampleBuffer<UInt8>(rect: block, storage: scratch, rowStride: side * 4, channels: 4)
                    inFixedPoint(block, into: fixed)
                    FixedPointConvolution.copy(fixed, into: output, where: opaque)
                }
            }
        }
    }

    /// Renders the pixels of `tile` from 16-bit samples to 16-bit samples, as the 8-bit
    /// ``render(tile:source:image:edge:into:)-(_,SampleBuffer<UInt8>,_,_,_)`` does; within two
    /// levels of the double-precision definition.
    public func render(
        tile: Rect, source: SampleBuffer<UInt16>, image: Rect, edge: EdgeRule, into output: SampleBuffer<UInt16>
    ) {
        checkSampleTile(tile, source: source, image: image, edge: edge, output: output)
        SampleConvolution.apply(
            weights: weights, tile: tile, source: source, image: image, edge: edge, output: output,
            schedule: schedule)
    }

}

extension GaussianBlur: SampleRenderingFilter {
    /// Opaque RGB and RGBA under `clamp` or `mirror`, where the mask has a ``fixedPoint`` form.
    public func rendersSamples(channels: Int, edge: EdgeRule) -> Bool {
        fixedPoint != nil && (channels == 3 || channels == 4) && edge.foldsIntoTheImage
    }
}
