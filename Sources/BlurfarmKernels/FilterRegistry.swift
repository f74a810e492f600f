import BlurfarmCore

/// Every filter blurfarm can run, by name: the one catalogue the manifest checker, the planner,
/// the worker and `blurfarm filters` use.
public struct FilterRegistry: Sendable {
    /// Makes a filter from checked arguments.
    public typealias Factory = @Sendable (FilterSpec, KernelSchedule) -> any Filter

    public private(set) var descriptors: [FilterDescriptor] = []
    private var factories: [String: Factory] = [:]

    public init() {}

    /// The built-in filters: `gaussian`, `motion`, `frost`, `tint` and `redact`.
    public static let builtIn: FilterRegistry = {
        var registry = FilterRegistry()
        registry.register(GaussianBlur.descriptor) { spec, schedule in
            GaussianBlur(sigma: spec.arguments["sigma"]!.doubleValue!, schedule: schedule)
        }
        registry.register(MotionBlur.descriptor) { spec, schedule in
            let samples: Int? = if case .integer(let n) = spec.arguments["samples"] { n } else { nil }
            return MotionBlur(
                radius: spec.arguments["radius"]!.doubleValue!, angle: spec.arguments["angle"]!.doubleValue!,
                samples: samples, schedule: schedule)
        }
        registry.register(FrostBlur.descriptor) { spec, schedule in FrostBlur(spec, schedule: schedule) }
        registry.register(TintFilter.descriptor) { spec, _ in TintFilter(spec) }
        registry.register(RedactFilter.descriptor) { spec, _ in RedactFilter(spec) }
        return registry
    }()

    /// Adds a filter. A name that is already taken is a programming error.
    public mutating func register(_ descriptor: FilterDescriptor, factory: @escaping Factory) {
        precondition(factories[descriptor.name] == nil, "filter '\(descriptor.name)' registered twice")
        descriptors.append(descriptor)
        factories[descriptor.name] = factory
    }

    public func descriptor(named name: String) -> FilterDescriptor? {
        descriptors.first { $0.name == name }
    }

    /// The filter for checked arguments (from ``FilterDescriptor/resolve(_:)``).
    public func makeFilter(_ spec: FilterSpec, schedule: KernelSchedule = .default) -> any Filter {
        guard let factory = factories[spec.name] else { preconditionFailure("unknown filter '\(spec.name)'") }
        var filter = factory(spec, schedule)
        // A redaction with regions of its own measures them (its chain's are given by the chain).
        if let redact = filter as? RedactFilter, !spec.regions.isEverywhere { filter = redact.placed(in: spec.regions) }
        return RegionFilter.placing(filter, in: spec.regions)
    }
}
