import BlurfarmCore

extension FilterChain {
    /// Renders `tile` as ``render(tile:source:image:into:)`` does, from and into pixels of any
    /// ``SampleFormat``: the rows the tile reads (``sourceRegion(for:image:)``) converted to
    /// premultiplied `Float32` (``AnyPixels/floats(in:scratch:)``), and the rendered tile,
    /// when `output` holds a file's samples, converted to them over `background`
    /// (``AnyPixels/store(_:in:background:)``), in memory from `scratch`. Pointwise
    /// conversions, so the same bits as converting the whole image at once. How a worker and
    /// the in-process renderer render a tile of a streamed image.
    ///
    /// - Throws: the ``FilterFailure`` of the first filter that fails (only plugins can).
    public func render(
        tile: Rect, from source: AnyPixels, image: Rect, into output: AnyPixels, background: SIMD3<Float>,
        scratch: ScratchStorage? = nil
    ) throws(FilterFailure) {
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
