import BlurfarmCore

/// `motion`: the mean of `2n + 1` bilinear samples along a velocity, as Core Image's motion
/// blur kernel does. See ``MotionMask`` for the exact definition.
public struct MotionBlur: UniformReachFilter {
    public static let descriptor = FilterDescriptor(
        name: "motion",
        summary: "motion blur: mean of 2n+1 bilinear samples along a velocity (Core Image's motion kernel)",
        parameters: [
            ParameterDescriptor(
                name: "radius", kind: .number, defaultValue: .number(20), minimum: 0, maximum: 2000,
                summary: "length of the velocity in pixels; the blur spans twice this"),
            ParameterDescriptor(
                name: "angle", kind: .number, defaultValue: .number(0), minimum: -360, maximum: 360,
                summary: "direction in degrees, counter-clockwise from +x as displayed (y points down)"),
            ParameterDescriptor(
                name: "samples", kind: .integer, minimum: 1, maximum: 4000,
                summary: "n: the blur averages 2n+1 samples; default ceil(radius), which does not ghost"),
        ],
        origin: .builtIn)

    public let mask: MotionMask
    public let schedule: KernelSchedule
    private let taps: [SparseConvolution.Tap]
    /// The mask in fixed point, for opaque 8-bit RGB (``FixedPointMotion``): every mask has one.
    let fixedPoint: FixedPointMotion.Mask?

    public init(radius: Double, angle: Double, samples: Int? = nil, schedule: KernelSchedule = .default) {
        mask = MotionMask(radius: radius, angle: angle, samples: samples)
        self.schedule = schedule
        taps = mask.taps.map { SparseConvolution.Tap(dx: $0.dx, dy: $0.dy, weight: Float($0.weight)) }
        fixedPoint = FixedPointMotion.Mask(mask)
    }

    public var spec: FilterSpec {
        FilterSpec(name: "motion", arguments: [
            "radius": .number(mask.radius), "angle": .number(mask.angle), "samples": .integer(mask.samples),
        ])
    }
    public var reach: Reach { mask.reach }

    public func apply(input: PixelBuffer, output: PixelBuffer, image _: Rect) {
        SparseConvolution.apply(taps: taps, input: input, output: output, schedule: schedule)
    }
}

extension MotionBlur: SampleRenderingFilter {
    /// Opaque RGB under `clamp` or `mirror`, where the mask has a fixed-point form (every mask).
    public func rendersSamples(channels: Int, edge: EdgeRule) -> Bool {
        fixedPoint != nil && channels == 3 && edge.foldsIntoTheImage
    }

    /// Renders the pixels of `tile` from 8-bit opaque RGB to 8-bit opaque RGB in fixed point
    /// (``FixedPointMotion``), under `clamp` or `mirror` (``rendersSamples(channels:edge:)``):
    /// within `0.5 + errorBound` (below 1) of the double-precision definition, the same bits
    /// whatever the tiles. `source` holds the tile grown by the reach, clipped to `image`.
    public func render(tile: Rect, source: SampleBuffer<UInt8>, image: Rect, edge: EdgeRule, into output: SampleBuffer<UInt8>) {
        precondition(rendersSamples(channels: source.channels, edge: edge), "motion renders opaque RGB under clamp or mirror")
        checkSampleTile(tile, source: source, image: image, edge: edge, output: output)
        FixedPointMotion.apply(fixedPoint!, mask, tile: tile, source: source, image: image, edge: edge, output: output)
    }
}
