import BlurfarmCore

/// The blend of a chain's output with its source by a ``RegionMask``: the last step of
/// ``FilterChain/render(tile:source:image:into:)`` and of the 8-bit fixed-point path.
///
/// Why here: every path that renders a variant (the in-process ``Renderer``, the streamed
/// bands, a worker's tile task, a worker's whole-image task) renders each tile through the
/// chain, and the chain holds the tile's source pixels and knows the tile's place in the
/// image. The coverage is a pure function of the pixel's position and the image
/// (``RegionMask/coverage(x:y:in:)``) and the blend is pointwise, so the output is the same
/// bits whatever tiles, bands or workers render it, and no other stage needs to know of
/// regions. It blends the stored values (after the `linear` mode's conversion back), in the
/// precision the tile is rendered in:
///
///     out = s                      where c = 0 (the source, bit for bit)
///     out = f                      where c = 1 (the filtered pixel, bit for bit)
///     out = s + (f − s) · c        between, in Float32 on premultiplied values; at a file's
///                                  depth (the 8-bit fixed-point path), rounded to nearest
///
/// with s the source pixel, f the filtered one and c the coverage.
extension RegionMask {
    /// Blends the rendered `output` pixels of `tile` with `source` (which holds `tile`, with
    /// the same channels).
    func blend(tile: Rect, source: PixelBuffer, into output: PixelBuffer, image: Rect) {
        guard !isEverywhere, !tile.isEmpty else { return }
        precondition(source.channels == output.channels, "the source and the output have the same channels")
        let src = source.view(tile), out = output.view(tile)
        src.withUnsafePixels { s in
            out.withUnsafePixels { f in
                blend(tile: tile, image: image, channels: out.channels, source: (s, src.rowStride), into: (f, out.rowStride)) {
                    s, f, c in s + (f - s) * c
                }
            }
        }
    }

    /// Multiplies the rendered `output` pixels of `tile` by their coverage, every channel
    /// (premultiplied values: the filtered pixel with the coverage as its alpha), for a
    /// ``RegionMask/Extent/cutout``.
    func cut(tile: Rect, into output: PixelBuffer, image: Rect) {
        guard !isEverywhere, !tile.isEmpty else { return }
        let out = output.view(tile), n = out.channels
        var coverage: [Float] = []
        out.withUnsafePixels { f in
            for row in 0..<tile.height {
                self.coverage(row: tile.y + row, from: tile.x, count: tile.width, in: image, into: &coverage)
                let fr = f + row * out.rowStride
                for i in 0..<tile.width where coverage[i] != 1 {
                    let c = coverage[i]
                    for k in (i * n)..<(i * n + n) { fr[k] = c == 0 ? 0 : fr[k] * c }
                }
            }
        }
    }

    /// Blends the rendered `output` samples of `tile` with `source` (which holds `tile`, with
    /// the same channels) at the samples' depth, rounding to nearest.
    func blend<S: FileSample>(tile: Rect, source: SampleBuffer<S>, into output: SampleBuffer<S>, image: Rect) {
        guard !isEverywhere, !tile.isEmpty else { return }
        precondition(source.channels == output.channels, "the source and the output have the same channels")
        let src = source.view(tile), out = output.view(tile)
        src.withUnsafeSamples { s in
            out.withUnsafeSamples { f in
                blend(tile: tile, image: image, channels: out.channels, source: (s, src.rowStride), into: (f, out.rowStride)) {
                    s, f, c in
                    let a = Float(s)
                    return S((a + (Float(f) - a) * c).rounded())
                }
            }
        }
    }

    /// The loop of both blends, over rows of `tile` (`stride` values apart): where the
    /// coverage is 0 the source's values, where it is 1 the output's as they are, between
    /// `mix(source, output, coverage)`.
    private func blend<T>(
        tile: Rect, image: Rect, channels n: Int, source: (base: UnsafeMutablePointer<T>, stride: Int),
        into output: (base: UnsafeMutablePointer<T>, stride: Int), mix: (T, T, Float) -> T
    ) {
        var coverage: [Float] = []
        for row in 0..<tile.height {
            self.coverage(row: tile.y + row, from: tile.x, count: tile.width, in: image, into: &coverage)
            let sr = source.base + row * source.stride, fr = output.base + row * output.stride
            for i in 0..<tile.width {
                let c = coverage[i]
                if c == 1 { continue }
                for k in (i * n)..<(i * n + n) { fr[k] = c == 0 ? sr[k] : mix(sr[k], fr[k], c) }
            }
        }
    }
}
