import BlurfarmCore

/// `tint`: a colour drawn source-over every pixel, as UIBlurEffect lays its tint over the blur
/// behind a view. Put last in a chain (after the blur), it tints the filtered pixels, and with
/// `regions` only them: the blend with the source comes after the whole chain.
///
/// A ``FrostStyle`` (`light`, `extraLight`, `dark`) gives the colour and alpha of Apple's
/// styles; `colour` and `alpha` override them. The algorithm is frost's last step
/// (``drawSourceOver(_:inLinearLight:on:)``), per premultiplied pixel `(r, g, b, a)`, in `Float`:
///
///     out.c = t.a·t.c + (1 − t.a)·c      for c in r, g, b
///     out.a = t.a + (1 − t.a)·a
///
/// A pointwise filter: its reach is zero.
public struct TintFilter: UniformReachFilter {
    public static let descriptor = FilterDescriptor(
        name: "tint",
        summary: "a colour drawn over the image (after a blur: UIBlurEffect's tint); presets light, extraLight, dark",
        parameters: [
            FrostStyle.parameter(
                summary: "preset, frost's tints: light (white at 0.3), extraLight (0.97 at 0.82), dark (0.11 at 0.73)"),
            ParameterDescriptor(
                name: "colour", kind: .colour,
                summary: "the colour drawn, '#rrggbb' or '#rrggbbaa' (default: the style's); its alpha unless 'alpha' is given"),
            ParameterDescriptor(
                name: "alpha", kind: .number, minimum: 0, maximum: 1,
                summary: "the tint's opacity, 0 (none) to 1 (the colour alone) (default: the colour's, else the style's)"),
        ],
        origin: .builtIn)

    public let style: FrostStyle
    /// The colour given instead of the style's, if any.
    public let colour: RGBAColour?
    /// The opacity given instead of the colour's or the style's, if any.
    public let alpha: Double?
    /// Whether the pixels are linear light (the chain's `linear` mode): the colour is drawn
    /// converted to linear light, as frost's is.
    public private(set) var inLinearLight = false

    /// The tint of `style`, with its colour and alpha overridden when given.
    public init(style: FrostStyle = .light, colour: RGBAColour? = nil, alpha: Double? = nil) {
        self.style = style
        self.colour = colour
        self.alpha = alpha
    }

    /// The tint of checked arguments (``descriptor``'s).
    public init(_ spec: FilterSpec) {
        let colour: RGBAColour? = if case .string(let hex) = spec.arguments["colour"] { RGBAColour(hex) } else { nil }
        let style = FrostStyle(of: spec)
        self.init(style: style, colour: colour, alpha: spec.arguments["alpha"]?.doubleValue)
    }

    /// The colour drawn: sRGB-encoded channels and a straight alpha, 0...1.
    public var tint: SIMD4<Double> {
        guard let c = colour else {
            var t = style.tint
            if let alpha { t.w = alpha }
            return t
        }
        return SIMD4(Double(c.red) / 255, Double(c.green) / 255, Double(c.blue) / 255, alpha ?? Double(c.alpha) / 255)
    }

    /// The style, and the colour and alpha when given: what ``init(_:)`` makes the same filter
    /// of (worker processes receive it).
    public var spec: FilterSpec {
        var arguments: [String: ParameterValue] = ["style": .string(style.rawValue)]
        if let colour { arguments["colour"] = .string(colour.description) }
        if let alpha { arguments["alpha"] = .number(alpha) }
        return FilterSpec(name: "tint", arguments: arguments)
    }

    public var reach: Reach { .zero }

    /// This tint, drawn in linear light under `linear`.
    public func adapted(to colour: ColourMode) -> any Filter {
        var adapted = self
        adapted.inLinearLight = colour == .linear
        return adapted
    }

    public func apply(input: PixelBuffer, output: PixelBuffer, image: Rect) {
        output.copy(output.rect, from: input)
        Self.drawSourceOver(tint, inLinearLight: inLinearLight, on: output)
    }

    /// Draws `tint` (sRGB-encoded channels, straight alpha, 0...1) source-over every
    /// premultiplied pixel of `output`, in place (opaque pixels when it has 3 channels); the
    /// colour converted to linear light first when `inLinearLight`.
    static func drawSourceOver(_ tint: SIMD4<Double>, inLinearLight: Bool, on output: PixelBuffer) {
        let over = SourceOver(tint, inLinearLight: inLinearLight)
        let n = output.channels
        let out = output.rect
        output.withUnsafePixels { base in
            for y in 0..<out.height {
                var p = base + y * output.rowStride
                for _ in 0..<out.width {
                    over.draw(on: p, channels: n)
                    p += n
                }
            }
        }
    }
}

/// A tint drawn source-over premultiplied pixels, one pixel at a time: the step `tint` and
/// `frost` share (frost draws it in its own pass over the tile, right after saturating).
struct SourceOver {
    /// The tint's colour, premultiplied by its alpha (in linear light when asked).
    let colour: SIMD3<Float>
    let alpha: Float
    /// What each pixel keeps of itself: 1 − alpha.
    let keep: Float

    /// `tint`: sRGB-encoded channels and a straight alpha, 0...1.
    init(_ tint: SIMD4<Double>, inLinearLight: Bool) {
        alpha = Float(tint.w)
        keep = 1 - alpha
        var t = SIMD3<Float>(Float(tint.x), Float(tint.y), Float(tint.z))
        if inLinearLight { for c in 0..<3 { t[c] = SRGB.toLinear(t[c]) } }
        colour = t * alpha
    }

    /// Draws the tint over the pixel at `p` (`channels` floats: RGB of an opaque image, or RGBA).
    @inline(__always)
    func draw(on p: UnsafeMutablePointer<Float>, channels: Int) {
        for c in 0..<3 { p[c] = colour[c] + keep * p[c] }
        if channels == 4 { p[3] = alpha + keep * p[3] }
    }
}
