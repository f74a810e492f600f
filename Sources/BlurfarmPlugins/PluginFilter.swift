import BlurfarmCore
import BlurfarmKernels

/// A plugin as a ``Filter``: its region of interest and domain of definition come from the
/// plugin's table, and so do its pixels, in worker processes only.
///
/// The coordinator makes plugin filters with `mayRun: false`: it asks them for regions and
/// output sizes, and ``apply(input:output:image:)`` refuses (plugins run in the workers, so a
/// plugin that crashes kills a worker, not the farm).
public struct PluginFilter: Filter {
    public let plugin: Plugin

    /// The plugin's library.
    public var origin: FilterDescriptor.Origin { plugin.descriptor.origin }
    public let spec: FilterSpec
    /// Whether ``apply(input:output:image:)`` calls the plugin.
    public let mayRun: Bool
    /// The arguments as the plugin takes them: one double per declared parameter, in order.
    private let values: [Double]

    /// The filter for `spec`, whose arguments were resolved against the plugin's descriptor
    /// (every declared parameter has a value: plugin parameters all have defaults).
    public init(plugin: Plugin, spec: FilterSpec, mayRun: Bool) {
        precondition(spec.name == plugin.descriptor.name, "\(spec.name) is not plugin \(plugin.descriptor.name)")
        self.plugin = plugin
        self.spec = spec
        self.mayRun = mayRun
        values = plugin.descriptor.parameters.map { parameter in
            switch spec.arguments[parameter.name] ?? parameter.defaultValue {
            case .number(let v)?: v
            case .integer(let v)?: Double(v)
            case .boolean(let v)?: v ? 1 : 0
            case .string?, nil: preconditionFailure("plugin parameter '\(parameter.name)' has no number")
            }
        }
    }

    /// The plugin's region of interest; when the plugin's function fails, the output itself
    /// (and ``apply(input:output:image:)`` then fails with the plugin's error).
    public func regionOfInterest(for output: Rect, image: Rect) -> Rect {
        (try? plugin.regionOfInterest(values, output: output, image: image).get()) ?? output
    }

    /// The plugin's domain of definition; when the plugin's function fails, the input itself
    /// (and ``apply(input:output:image:)`` then fails with the plugin's error).
    public func domainOfDefinition(forInput input: Rect, image: Rect) -> Rect {
        (try? plugin.domainOfDefinition(values, input: input, image: image).get()) ?? input
    }

    /// Runs the plugin over `output.rect`. Buffers of 3 channels (an opaque image) are
    /// widened to RGBA with alpha 1 for the plugin, and its alpha dropped again.
    ///
    /// - Throws: ``FilterFailure`` with the plugin's message when one of its functions
    ///   returns an error, or when this filter may not run plugins (the coordinator's).
    public func apply(input: PixelBuffer, output: PixelBuffer, image: Rect) throws(FilterFailure) {
        let name = plugin.descriptor.name
        guard mayRun else {
            throw FilterFailure(filter: name, message: "plugin '\(name)' runs in worker processes only")
        }
        if case .failure(let failure) = plugin.regionOfInterest(values, output: output.rect, image: image) {
            throw describe(failure, function: "region_of_interest")
        }
        if case .failure(let failure) = plugin.domainOfDefinition(values, input: image, image: image) {
            throw describe(failure, function: "domain_of_definition")
        }
        let wideInput = input.channels == 4 ? input : Self.widened(input)
        let wideOutput = output.channels == 4 ? output : PixelBuffer.uninitialized(output.rect, channels: 4)
        if case .failure(let failure) = plugin.run(values, input: wideInput, output: wideOutput, image: image) {
            throw describe(failure, function: "run")
        }
        if output.channels != 4 { Self.narrow(wideOutput, into: output) }
    }

    private func describe(_ failure: Plugin.CallFailure, function: String) -> FilterFailure {
        let name = plugin.descriptor.name
        let code = Plugin.codeName(failure.code).map { "\($0), \(failure.code)" }
            ?? "\(failure.code), which is not a code of the plugin ABI"
        let text = failure.message.isEmpty ? "" : ": \(failure.message)"
        return FilterFailure(filter: name, message: "plugin '\(name)' \(function) failed (\(code))\(text)")
    }

    /// An RGBA copy of a 3-channel buffer, alpha 1.
    static func widened(_ buffer: PixelBuffer) -> PixelBuffer {
        let wide = PixelBuffer.uninitialized(buffer.rect, channels: 4)
        copyColour(from: buffer, to: wide)
        return wide
    }

    /// Copies red, green and blue of an RGBA buffer into a 3-channel one of the same rectangle.
    static func narrow(_ wide: PixelBuffer, into buffer: PixelBuffer) {
        copyColour(from: wide, to: buffer)
    }

    /// Copies red, green and blue between buffers of the same rectangle whatever their
    /// channels; a 4-channel target gets alpha 1.
    private static func copyColour(from source: PixelBuffer, to target: PixelBuffer) {
        let from = source.channels, to = target.channels
        source.withUnsafePixels { src in
            target.withUnsafePixels { dst in
                for row in 0..<target.rect.height {
                    let s = src + row * source.rowStride, d = dst + row * target.rowStride
                    for x in 0..<target.rect.width {
                        for c in 0..<3 { d[to * x + c] = s[from * x + c] }
                        if to == 4 { d[to * x + 3] = 1 }
                    }
                }
            }
        }
    }
}
