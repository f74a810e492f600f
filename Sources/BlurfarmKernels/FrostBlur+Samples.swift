import BlurfarmCore
import CKernels

/// Frost over opaque 8-bit RGB in fixed point: the gaussian's 32-bit arithmetic keeping 6
/// fraction bits through both passes (``FixedPointMask/keepingFraction(_:)``), then
/// ``SaturateAndTint`` on those values, rounded once at the end.
///
/// **Accuracy.** The blurred values lie within the mask's `errorBound` (levels) of the
/// definition's blur. The saturation `c' = s·c + (1 − s)·l`, with `l` a weighted mean of the
/// three channels, moves an error `e` of every channel by at most `(s + |1 − s|)·e`; the clamp
/// to 0…255 moves none; the tint keeps `1 − t.a` of it. So the value before the final rounding
/// lies within `(1 − t.a)·(s + |1 − s|)·errorBound + 0.002` levels of the definition (the
/// `Float32` pointwise step adds under 0.002: values below 2600, a few roundings of 2⁻²⁴
/// relative each), and a form exists only where that is below half a level: every level within
/// 1 of the double-precision definition. The presets: light 0.13, extraLight 0.024, dark 0.035.
struct FixedPointFrost: Sendable {
    let mask: FixedPointMask
    let finish: SaturateAndTint
    /// How far, in levels, a value before the final rounding can lie from the definition.
    let errorBound: Double

    init?(blur: GaussianBlur, saturation s: Double, tint: SIMD4<Double>) {
        guard let mask = FixedPointMask.keepingFraction(blur.mask) else { return nil }
        let bound = (1 - tint.w) * (s + abs(1 - s)) * mask.errorBound + 0.002
        guard bound < 0.5 else { return nil }
        self.mask = mask
        finish = SaturateAndTint(
            saturation: Float(s), colour: SIMD3(Float(tint.x * tint.w * 255), Float(tint.y * tint.w * 255), Float(tint.z * tint.w * 255)),
            keep: Float(1 - tint.w))
        errorBound = bound
    }
}

/// Frost's pointwise step on the blurred values of opaque RGB (`level · 64`), in `Float32`, in
/// the definition's order (``FrostBlur``): `l = 0.2126·r + 0.7152·g + 0.0722·b`,
/// `c' = clamp(l + s·(c − l), 0, 255)`, `out = t.a·t.c·255 + (1 − t.a)·c'`, rounded to the
/// nearest level (halves up).
struct SaturateAndTint: Sendable {
    let saturation: Float
    /// The tint's channels times its alpha, in levels (sRGB-encoded, blended as stored).
    let colour: SIMD3<Float>
    /// `1 − t.a`.
    let keep: Float

    /// `pixels` pixels of `values` into `out` (C: `bf_saturate_tint`, vectorised by the compiler).
    func apply(_ values: UnsafePointer<UInt16>, _ out: UnsafeMutablePointer<UInt8>, pixels: Int) {
        bf_saturate_tint(values, out, pixels, saturation, colour.x, colour.y, colour.z, keep)
    }
}

extension FrostBlur: SampleRenderingFilter {
    /// Opaque RGB under `clamp` or `mirror`, the tint blended as stored (`gamma`), where the
    /// parameters have a fixed-point form (``FixedPointFrost``: the presets, and every override
    /// whose bound stays below half a level).
    public func rendersSamples(channels: Int, edge: EdgeRule) -> Bool {
        fixedPoint != nil && !tintInLinearLight && channels == 3 && edge.foldsIntoTheImage
    }

    /// Renders the pixels of `tile` from 8-bit opaque RGB to 8-bit opaque RGB in fixed point
    /// (``FixedPointFrost``), under `clamp` or `mirror` (``rendersSamples(channels:edge:)``):
    /// within 1 level of the double-precision definition, the same bits whatever the tiles.
    /// `source` holds the tile grown by the reach, clipped to `image`.
    public func render(tile: Rect, source: SampleBuffer<UInt8>, image: Rect, edge: EdgeRule, into output: SampleBuffer<UInt8>) {
        precondition(rendersSamples(channels: source.channels, edge: edge), "frost renders opaque RGB under clamp or mirror")
        checkSampleTile(tile, source: source, image: image, edge: edge, output: output)
        FixedPointConvolution.apply(
            fixedPoint!.mask, tile: tile, source: source, image: image, edge: edge, output: output, schedule: blur.schedule,
            finish: fixedPoint!.finish)
    }
}
