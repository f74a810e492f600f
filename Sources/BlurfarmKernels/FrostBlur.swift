import BlurfarmCore

/// `frost`: the iOS look, after Apple's UIImageEffects. A Gaussian blur (the `gaussian`
/// filter's mask and schedule), then a saturation matrix with the Rec. 709 luma weights, then
/// a tint drawn source-over. A ``FrostStyle`` gives the three parameters; `sigma`, `saturation`
/// and `tint` override them one by one.
///
/// The algorithm, per premultiplied pixel `(r, g, b, a)` of the blurred image (opaque images:
/// `a = 1`), in `Float`, in this order:
///
///     l  = 0.2126·r + 0.7152·g + 0.0722·b
///     c' = clamp(l + s·(c − l), 0, a)            for c in r, g, b
///     out.c = t.a·t.c + (1 − t.a)·c'               (source-over, premultiplied)
///     out.a = t.a + (1 − t.a)·a
///
/// The saturation is linear, so applying it to premultiplied values is applying it to the
/// colour; the clamp keeps the pixel valid (UIImageEffects clamps to 0...255 on opaque data,
/// the same there). The tint's channels are sRGB-encoded values, blended as stored in the
/// `gamma` colour mode, as Core Graphics does; in the `linear` mode the whole filter works on
/// linear values, so the tint is converted to linear light first (``adapted(to:)``): `dark`
/// stays dark.
public struct FrostBlur: UniformReachFilter {
    public static let descriptor = FilterDescriptor(
        name: "frost",
        summary: "the iOS frosted-glass look (UIImageEffects): gaussian blur, saturation, tint drawn over",
        parameters: [
            FrostStyle.parameter(
                summary: "preset: light (sigma 30, tint white 0.3), extraLight (20, 0.97 at 0.82), dark (20, 0.11 at 0.73)"),
            ParameterDescriptor(
                name: "sigma", kind: .number, minimum: 0, minimumIsExclusive: true, maximum: 1000,
                summary: "standard deviation of the blur in pixels (default: the style's)"),
            ParameterDescriptor(
                name: "saturation", kind: .number, minimum: 0, maximum: 10,
                summary: "saturation factor, Rec. 709 luma weights; 1 keeps colours (default: the style's, 1.8)"),
            ParameterDescriptor(
                name: "tint", kind: .colour,
                summary: "colour drawn over the blur, '#rrggbbaa' with a straight alpha (default: the style's)"),
        ],
        origin: .builtIn)

    /// The blur the effect starts from (mask, reach and schedule).
    public let blur: GaussianBlur
    public let style: FrostStyle
    /// The saturation factor.
    public let saturation: Double
    /// The tint given instead of the style's, if any.
    public let tintOverride: RGBAColour?
    /// Whether the pixels are linear light (the chain's `linear` mode): the tint is drawn
    /// converted to linear light.
    public private(set) var tintInLinearLight = false
    /// The fixed-point form over opaque 8-bit RGB, where its bound allows (``FixedPointFrost``).
    let fixedPoint: FixedPointFrost?

    /// The tint: sRGB-encoded channels and a straight alpha, 0...1.
    public var tint: SIMD4<Double> { Self.tint(tintOverride, style: style) }

    private static func tint(_ override: RGBAColour?, style: FrostStyle) -> SIMD4<Double> {
        guard let c = override else { return style.tint }
        return SIMD4(Double(c.red), Double(c.green), Double(c.blue), Double(c.alpha)) / 255
    }

    /// The frost of `style`, with any of its parameters overridden.
    public init(
        style: FrostStyle = .light, sigma: Double? = nil, saturation: Double? = nil, tint: RGBAColour? = nil,
        schedule: KernelSchedule = .default
    ) {
        self.style = style
        blur = GaussianBlur(sigma: sigma ?? style.sigma, schedule: schedule)
        self.saturation = saturation ?? style.saturation
        tintOverride = tint
        fixedPoint = FixedPointFrost(blur: blur, saturation: self.saturation, tint: Self.tint(tint, style: style))
    }

    /// The frost of checked arguments (``descriptor``'s).
    public init(_ spec: FilterSpec, schedule: KernelSchedule) {
        let tint: RGBAColour? = if case .string(let hex) = spec.arguments["tint"] { RGBAColour(hex) } else { nil }
        let style = FrostStyle(of: spec)
        self.init(
            style: style, sigma: spec.arguments["sigma"]?.doubleValue, saturation: spec.arguments["saturation"]?.doubleValue,
            tint: tint, schedule: schedule)
    }

    /// The style, sigma and saturation, and the tint when it overrides the style's: what
    /// ``init(_:schedule:)`` makes the same filter of (worker processes receive it).
    public var spec: FilterSpec {
        var arguments: [String: ParameterValue] = [
            "style": .string(style.rawValue), "sigma": .number(blur.mask.sigma), "saturation": .number(saturation),
        ]
        if let tintOverride { arguments["tint"] = .string(tintOverride.description) }
        return FilterSpec(name: "frost", arguments: arguments)
    }

    public var reach: Reach { blur.reach }

    /// This frost, with its tint drawn in linear light under `linear`.
    public func adapted(to colour: ColourMode) -> any Filter {
        var adapted = self
        adapted.tintInLinearLight = colour == .linear
        return adapted
    }

    public func apply(input: PixelBuffer, output: PixelBuffer, image: Rect) {
        blur.apply(input: input, output: output, image: image)
        let s = Float(saturation)
        let over = SourceOver(tint, inLinearLight: tintInLinearLight)
        let n = output.channels
        let out = output.rect
        // One pass: saturate, then draw the tint over the pixel.
        output.withUnsafePixels { base in
            for y in 0..<out.height {
                var p = base + y * output.rowStride
                for _ in 0..<out.width {
                    let a: Float = n == 4 ? p[3] : 1
                    let l = 0.2126 * p[0] + 0.7152 * p[1] + 0.0722 * p[2]
                    for c in 0..<3 { p[c] = min(max(l + s * (p[c] - l), 0), a) }
                    over.draw(on: p, channels: n)
                    p += n
                }
            }
        }
    }
}
