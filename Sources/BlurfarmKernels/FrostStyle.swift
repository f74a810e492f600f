import BlurfarmCore

/// The presets of `frost`, as Apple's UIImageEffects defines them (`applyLightEffect`,
/// `applyExtraLightEffect`, `applyDarkEffect`): a blur radius, a saturation factor and a tint
/// drawn over the result.
public enum FrostStyle: String, CaseIterable, Sendable {
    /// sigma 30, saturation 1.8, tint white at alpha 0.3.
    case light
    /// sigma 20, saturation 1.8, tint white 0.97 at alpha 0.82.
    case extraLight
    /// sigma 20, saturation 1.8, tint white 0.11 at alpha 0.73.
    case dark

    /// The Gaussian's standard deviation in pixels.
    public var sigma: Double {
        switch self {
        case .light: 30
        case .extraLight, .dark: 20
        }
    }

    /// The saturation factor (1 leaves colours as they are, 0 makes grey).
    public var saturation: Double { 1.8 }

    /// The tint: sRGB-encoded red, green, blue and a straight alpha, 0...1.
    public var tint: SIMD4<Double> {
        switch self {
        case .light: SIMD4(1, 1, 1, 0.3)
        case .extraLight: SIMD4(0.97, 0.97, 0.97, 0.82)
        case .dark: SIMD4(0.11, 0.11, 0.11, 0.73)
        }
    }

    /// The `style` parameter of the filters that take a style (`frost`, `tint`), `light` by
    /// default, with `summary`.
    static func parameter(summary: String) -> ParameterDescriptor {
        ParameterDescriptor(
            name: "style", kind: .string(choices: allCases.map(\.rawValue)), defaultValue: .string(light.rawValue),
            summary: summary)
    }

    /// The style checked arguments name (`light` when they name none).
    init(of spec: FilterSpec) {
        self = if case .string(let name) = spec.arguments["style"], let style = FrostStyle(rawValue: name) { style } else { .light }
    }
}
