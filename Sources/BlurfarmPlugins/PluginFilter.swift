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

    /// How far a plugin's rectangle may reach beyond the rectangle it was given and the image
    /// together, in widths and heights of that rectangle or of the image, the larger, on each
    /// side (a policy: `zoom`, the widest example, reads at most half the way from a tile to the
    /// image's centre, which under `grow` may lie far outside the image, and at most doubles
    /// its input under `grow`).
    static let largestReach = 1
    /// Pixels a plugin's rectangle may reach beyond that on each side in any case (a policy:
    /// bilinear neighbours and rounding, which on an image of a few pixels are more than its
    /// size).
    static let reachSlack = 16
    /// The most pixels a plugin's rectangle may hold, 2^40 (nothing larger can be allocated):
    /// with ``largestReach``, no arithmetic on the rectangles can overflow.
    static let largestArea = 1 << 40
    /// Guard pixels around the buffer a plugin writes, on each side: a plugin that writes
    /// past its tile changes them and fails its task (``apply(input:output:image:)``).
    static let guardPixels = 4
    /// What the guard pixels hold: a NaN no filter computes (compared bit for bit).
    static let canary = Float(bitPattern: 0x7FA5_A5A5)

    /// The plugin's region of interest; when the plugin's function fails or answers out of
    /// bounds, the output itself (and the chain's ``FilterChain/problem(forImage:)`` and
    /// ``apply(input:output:image:)`` then fail with the plugin's error).
    public func regionOfInterest(for output: Rect, image: Rect) -> Rect {
        (try? checkedRegionOfInterest(for: output, image: image).get()) ?? output
    }

    /// The plugin's domain of definition; when the plugin's function fails or answers out of
    /// bounds, the input itself (and the chain's ``FilterChain/problem(forImage:)`` and
    /// ``apply(input:output:image:)`` then fail with the plugin's error).
    public func domainOfDefinition(forInput input: Rect, image: Rect) -> Rect {
        (try? checkedDomainOfDefinition(forInput: input, image: image).get()) ?? input
    }

    /// The plugin's error, or its rectangles out of bounds, for an image covering `image`
    /// whose input covers `input`: its domain of definition, and its region of interest for
    /// the whole output.
    public func problem(forInput input: Rect, image: Rect) -> FilterFailure? {
        switch checkedDomainOfDefinition(forInput: input, image: image) {
        case .failure(let failure): return failure
        case .success(let output):
            if case .failure(let failure) = checkedRegionOfInterest(for: output, image: image) { return failure }
            return nil
        }
    }

    private func checkedRegionOfInterest(for output: Rect, image: Rect) -> Result<Rect, FilterFailure> {
        bounded(plugin.regionOfInterest(values, output: output, image: image), given: output, image: image,
            function: "region_of_interest")
    }

    private func checkedDomainOfDefinition(forInput input: Rect, image: Rect) -> Result<Rect, FilterFailure> {
        bounded(plugin.domainOfDefinition(values, input: input, image: image), given: input, image: image,
            function: "domain_of_definition")
    }

    /// A plugin's rectangle, when it lies within `given` and the image together grown by
    /// ``largestReach`` times the size of `given` or of the image (the larger) and
    /// ``reachSlack`` pixels, and holds at most ``largestArea`` pixels; else the failure naming
    /// the plugin. (The image is in the bound because a plugin may read toward it from a tile
    /// far outside it, under `grow`.)
    private func bounded(
        _ answer: Result<Rect, Plugin.CallFailure>, given: Rect, image: Rect, function: String
    ) -> Result<Rect, FilterFailure> {
        let rect: Rect
        switch answer {
        case .failure(let failure): return .failure(describe(failure, function: function))
        case .success(let r): rect = r
        }
        let bound = given.union(image).grown(
            dx: max(given.width, image.width) * Self.largestReach + Self.reachSlack,
            dy: max(given.height, image.height) * Self.largestReach + Self.reachSlack)
        let (area, overflow) = rect.width.multipliedReportingOverflow(by: rect.height)
        guard bound.contains(rect), !overflow, area <= Self.largestArea else {
            let name = plugin.descriptor.name
            return .failure(FilterFailure(
                filter: name,
                message: "plugin '\(name)' \(function) returned the rectangle \(rect) for \(given), out of bounds: "
                    + "at most \(bound) (the rectangle given and the image, grown on each side by the size of either, the larger, and \(Self.reachSlack) px)"))
        }
        return .success(rect)
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
        if case .failure(let failure) = checkedRegionOfInterest(for: output.rect, image: image) { throw failure }
        if case .failure(let failure) = checkedDomainOfDefinition(forInput: image, image: image) { throw failure }
        // The plugin reads a copy of its own: the input may be a view of the shared source,
        // which other tiles read, and the plugin could write into it.
        let wideInput = Self.widened(input)
        // The plugin writes into a buffer of its own, never into the output (a shared segment
        // whose neighbouring tiles other workers write), with guard pixels around it.
        let guarded = PixelBuffer.uninitialized(output.rect.grown(dx: Self.guardPixels, dy: Self.guardPixels), channels: 4)
        let tile = guarded.view(output.rect)
        Self.fillGuard(of: guarded)
        if case .failure(let failure) = plugin.run(values, input: wideInput, output: tile, image: image) {
            throw describe(failure, function: "run")
        }
        guard Self.guardIsIntact(guarded) else {
            throw FilterFailure(
                filter: name,
                message: "plugin '\(name)' run wrote outside its tile \(output.rect) (the guard pixels around it changed)")
        }
        if output.channels == 4 { output.copy(output.rect, from: tile) } else { Self.narrow(tile, into: output) }
    }

    /// The float ranges of `guarded` outside its inner tile (``guardPixels`` on each side):
    /// whole rows above and below, and the ends of the rows between.
    private static func guardRanges(of guarded: PixelBuffer) -> [Range<Int>] {
        let stride = guarded.rowStride, rows = guarded.rect.height, band = guardPixels * 4
        var ranges = [0..<(guardPixels * stride), ((rows - guardPixels) * stride)..<(rows * stride)]
        for row in guardPixels..<(rows - guardPixels) {
            ranges.append((row * stride)..<(row * stride + band))
            ranges.append(((row + 1) * stride - band)..<((row + 1) * stride))
        }
        return ranges
    }

    private static func fillGuard(of guarded: PixelBuffer) {
        guarded.withUnsafePixels { p in
            for range in guardRanges(of: guarded) { (p + range.lowerBound).update(repeating: canary, count: range.count) }
        }
    }

    private static func guardIsIntact(_ guarded: PixelBuffer) -> Bool {
        guarded.withUnsafePixels { p in
            guardRanges(of: guarded).allSatisfy { range in
                range.allSatisfy { p[$0].bitPattern == canary.bitPattern }
            }
        }
    }

    private func describe(_ failure: Plugin.CallFailure, function: String) -> FilterFailure {
        let name = plugin.descriptor.name
        let code = Plugin.codeName(failure.code).map { "\($0), \(failure.code)" }
            ?? "\(failure.code), which is not a code of the plugin ABI"
        let text = failure.message.isEmpty ? "" : ": \(failure.message)"
        return FilterFailure(filter: name, message: "plugin '\(name)' \(function) failed (\(code))\(text)")
    }

    /// An RGBA copy of a buffer: of a 3-channel one with alpha 1.
    static func widened(_ buffer: PixelBuffer) -> PixelBuffer {
        let wide = PixelBuffer.uninitialized(buffer.rect, channels: 4)
        if buffer.channels == 4 { wide.copy(buffer.rect, from: buffer) } else { copyColour(from: buffer, to: wide) }
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
