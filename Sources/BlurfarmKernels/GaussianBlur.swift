import BlurfarmCore

/// `gaussian`: convolution with a sampled Gaussian of standard deviation `sigma` pixels
/// (Core Image's `CIGaussianBlur` `inputRadius`), separable, truncated at `ceil(3σ)`.
public struct GaussianBlur: UniformReachFilter {
    public static let descriptor = FilterDescriptor(
        name: "gaussian",
        summary: "Gaussian blur (Core Image's CIGaussianBlur): separable, truncated at ceil(3 sigma)",
        parameters: [
            ParameterDescriptor(
                name: "sigma", kind: .number, defaultValue: .number(10), minimum: 0,
                minimumIsExclusive: true, maximum: 1000,
                summary: "standard deviation in pixels (Core Image's inputRadius); below 0.16 the image is returned as it is")
        ],
        origin: .builtIn)

    /// The mask: weights and reach come from here and nowhere else.
    public let mask: GaussianMask
    /// How the loops run; every schedule gives the same bits.
    public let schedule: KernelSchedule
    /// The mask's weights in the working precision, `k = 0 ... R`.
    let weights: [Float]
    /// The mask in fixed point (16-bit sums up to sigma about 16, 32-bit sums beyond), where it
    /// stays within the 8-bit accuracy bar (every sigma up to 64 and beyond): how opaque 8-bit
    /// pixels are blurred at the file's depth.
    public let fixedPoint: FixedPointMask?

    public init(sigma: Double, schedule: KernelSchedule = .default) {
        mask = GaussianMask(sigma: sigma)
        self.schedule = schedule
        weights = mask.floatWeights
        fixedPoint = FixedPointMask(mask)
    }

    public var spec: FilterSpec { FilterSpec(name: "gaussian", arguments: ["sigma": .number(mask.sigma)]) }
    public var reach: Reach { Reach(x: mask.radius, y: mask.radius) }

    public func apply(input: PixelBuffer, output: PixelBuffer, image _: Rect) {
        if mask.radius == 0 {
            output.copy(output.rect, from: input)
            return
        }
        SeparableConvolution.apply(weights: weights, input: input, output: output, schedule: schedule)
    }
}
