import BlurfarmCore
import BlurfarmKernels
import BlurfarmPlugins
import BlurfarmSharedMemory
import BlurfarmWire

/// Renders one task: resolves its filter chain, finds its source pixels, renders exactly its
/// tile, and answers with a `result` (checksum of the tile, and its pixels for inline tasks) or
/// a `failure` naming what is wrong (an unknown filter, bad arguments, a region that does not
/// fit, a segment that cannot be mapped, a plugin that cannot be loaded or returns an error).
/// Nothing a task says makes it trap; a plugin that crashes takes the worker with it.
public struct TaskRunner: Sendable {
    /// Where filters are looked up by name.
    public let registry: FilterRegistry
    /// Where a filter the registry does not have is loaded from, by name, when a task first
    /// names it (the worker's plugin folders); nil for built-in filters only.
    public let plugins: PluginLoader?
    /// The coordinator's shared segments; nil when this worker takes inline tasks only.
    public let segments: SharedSegmentTable?
    /// The memory of the tiles' conversions, reused from task to task.
    let scratch = ScratchStorage()

    /// A runner with `registry` (built-in filters by default), the plugins of `plugins` and
    /// the segments of `segments`.
    public init(registry: FilterRegistry = .builtIn, plugins: PluginLoader? = nil, segments: SharedSegmentTable?) {
        self.registry = registry
        self.plugins = plugins
        self.segments = segments
    }

    /// What went wrong with a task, in words for the coordinator's report.
    struct Problem: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    /// The reply to `task`: `.result` or `.failure`, never anything else.
    public func execute(_ task: TaskMessage) -> WireMessage {
        let clock = ContinuousClock()
        let start = clock.now
        do {
            let chain = try makeChain(task)
            let (checksum, output) = try render(task, chain: chain)
            return .result(TaskResult(
                taskID: task.taskID, checksum: checksum, elapsedNanoseconds: (clock.now - start).nanoseconds,
                output: output))
        } catch {
            return .failure(TaskFailure(taskID: task.taskID, message: error.message))
        }
    }

    /// The task's filters, checked against their descriptors as the manifest checker does.
    func makeChain(_ task: TaskMessage) throws(Problem) -> FilterChain {
        try makeChain(task.filters, edge: task.edge, colour: task.colour, regions: task.regions, plugins: plugins)
    }

    /// The chain of `specs`, each checked against its descriptor; a filter the registry does
    /// not have is loaded from `plugins`, or refused when it is nil.
    func makeChain(
        _ specs: [FilterSpec], edge: EdgeRule, colour: ColourMode, regions: RegionMask, plugins: PluginLoader?
    ) throws(Problem) -> FilterChain {
        var filters: [any Filter] = []
        for (index, spec) in specs.enumerated() {
            let descriptor: FilterDescriptor
            var plugin: Plugin?
            if let builtIn = registry.descriptor(named: spec.name) {
                descriptor = builtIn
            } else {
                let known = registry.descriptors.map(\.name)
                let hint = closestName(to: spec.name, among: known).map { " (did you mean '\($0)'?)" } ?? ""
                let unknown = "filter \(index + 1): unknown filter '\(spec.name)'\(hint)"
                guard let plugins else { throw Problem(unknown) }
                do throws(PluginError) {
                    plugin = try plugins.load(named: spec.name)
                } catch {
                    throw Problem("\(unknown); as a plugin: \(error)")
                }
                descriptor = plugin!.descriptor
            }
            let arguments = spec.arguments.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) }
            switch descriptor.resolve(arguments) {
            case .success(var resolved):
                resolved.regions = spec.regions
                if let plugin {
                    filters.append(RegionFilter.placing(PluginFilter(plugin: plugin, spec: resolved, mayRun: true), in: spec.regions))
                } else {
                    filters.append(registry.makeFilter(resolved))
                }
            case .failure(let problems):
                throw Problem(
                    "filter \(index + 1) '\(spec.name)': "
                        + problems.problems.map(\.description).joined(separator: "; "))
            }
        }
        return FilterChain(filters: filters, edge: edge, colour: colour, regions: regions)
    }

    /// Renders the tile; returns its checksum and, for inline tasks, its pixels.
    private func render(_ task: TaskMessage, chain: FilterChain) throws(Problem) -> (UInt64, InlinePixels?) {
        let tile = task.tile
        // A plugin's answers are checked before any rectangle is used.
        if let problem = chain.problem(forImage: task.image) { throw Problem(problem.message) }
        let outputRect = chain.outputRect(forImage: task.image)
        guard outputRect.contains(tile) else {
            throw Problem("tile \(tile) lies outside the output \(outputRect)")
        }
        switch task.pixels {
        case .inline(let pixels):
            let source = pixels.makeBuffer()
            try checkSource(source.rect, for: task, chain: chain)
            let output = PixelBuffer.uninitialized(tile, channels: chain.channels(forSource: source.channels))
            try render(chain, tile: tile, source: source, image: task.image, into: output)
            let result = InlinePixels(output)
            return (result.checksum, result)
        case .shared(let sourceRegion, let outputRegion, let background):
            guard let segments else { throw Problem("this worker takes inline pixels only") }
            let source = try pixels(sourceRegion, in: segments, role: "source")
            try checkSource(source.rect, for: task, chain: chain)
            let channels = chain.channels(forSource: source.channels)
            guard outputRegion.format != .float32 || outputRegion.channels == channels else {
                throw Problem("the output region has \(outputRegion.channels) channels, the chain writes \(channels)")
            }
            guard outputRegion.rect.contains(tile) else {
                throw Problem("the output region \(outputRegion.rect) does not hold the tile \(tile)")
            }
            let output = try pixels(outputRegion, in: segments, role: "output")
            do throws(FilterFailure) {
                try chain.render(
                    tile: tile, from: source, image: task.image, into: output, background: background, scratch: scratch)
            } catch {
                throw Problem(error.message)
            }
            return (PixelChecksum.of(output, in: tile), nil)
        }
    }

    /// Renders the tile; a filter's failure (a plugin's error) is the task's.
    private func render(
        _ chain: FilterChain, tile: Rect, source: PixelBuffer, image: Rect, into output: PixelBuffer
    ) throws(Problem) {
        do throws(FilterFailure) {
            try chain.render(tile: tile, source: source, image: image, into: output)
        } catch {
            throw Problem(error.message)
        }
    }

    /// Checks that the source pixels (`source`) lie in the image and hold every pixel the tile
    /// reads.
    private func checkSource(_ source: Rect, for task: TaskMessage, chain: FilterChain) throws(Problem) {
        guard task.image.contains(source) else {
            throw Problem("the source pixels \(source) reach outside the image \(task.image)")
        }
        let needed = chain.sourceRegion(for: task.tile, image: task.image)
        guard needed.isEmpty || source.contains(needed) else {
            throw Problem("the source pixels \(source) do not hold the \(needed) the tile reads")
        }
    }

    /// The pixels of `region` in its segment, after checking that the segment holds them.
    private func pixels(_ region: SharedRegion, in segments: SharedSegmentTable, role: String) throws(Problem) -> AnyPixels {
        let segment: SharedSegment
        do {
            segment = try segments.segment(region.segment)
        } catch {
            throw Problem("\(role) segment \(region.segment): \(error)")
        }
        guard segment.identity == region.file else {
            throw Problem(
                "\(role) segment \(region.segment): \(segments.path(of: region.segment)) is the file \(segment.identity), "
                    + "not the task's segment (\(region.file))")
        }
        guard region.byteRange.upperBound <= segment.byteCount else {
            throw Problem(
                "\(role) region spans bytes \(region.byteRange) of segment \(region.segment), "
                    + "which has \(segment.byteCount)")
        }
        return AnyPixels(
            rect: region.rect, channels: region.channels, format: region.format, storage: segment.storage,
            byteOffset: region.byteOffset, rowStride: region.rowStride)
    }
}
