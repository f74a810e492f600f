import BlurfarmCore

// Each message's payload, written and read side by side, in the order WireProtocol.swift
// documents. Reading checks every field; a problem names the field's path.

extension WireMessage {
    /// Appends the payload's bytes.
    func writePayload(to w: inout ByteWriter) {
        switch self {
        case .hello(let hello):
            w.integer(hello.workerID)
            w.integer(hello.protocolVersion)
            w.integer(hello.pid)
        case .ready, .shutdown:
            break
        case .task(let task):
            task.write(to: &w)
        case .result(let result):
            w.integer(result.taskID)
            w.integer(result.checksum)
            w.integer(result.elapsedNanoseconds)
            if let output = result.output {
                w.u8(1)
                output.write(to: &w)
            } else {
                w.u8(0)
            }
        case .failure(let failure):
            w.integer(failure.taskID)
            w.string(failure.message)
        case .heartbeat(let taskID):
            if let taskID {
                w.u8(1)
                w.integer(taskID)
            } else {
                w.u8(0)
            }
        case .cancel(let taskID):
            w.integer(taskID)
        case .imageTask(let task):
            task.write(to: &w)
        case .imageResult(let result):
            result.write(to: &w)
        case .detectionTask(let task):
            task.write(to: &w)
        case .detectionResult(let result):
            result.write(to: &w)
        }
    }

    /// Reads a `type` payload that must fill the reader exactly.
    static func readPayload(_ type: WireMessageType, from r: inout ByteReader) throws(PayloadProblem) -> WireMessage {
        let message: WireMessage
        switch type {
        case .hello:
            message = .hello(Hello(
                workerID: try r.integer(UInt32.self, "workerID"),
                protocolVersion: try r.integer(UInt16.self, "protocolVersion"),
                pid: try r.integer(Int32.self, "pid")))
        case .ready:
            message = .ready
        case .task:
            message = .task(try TaskMessage(from: &r))
        case .result:
            let taskID = try r.integer(UInt64.self, "taskID")
            let checksum = try r.integer(UInt64.self, "checksum")
            let elapsed = try r.integer(UInt64.self, "elapsedNanoseconds")
            let output: InlinePixels? = switch try r.u8("output") {
            case 0: nil
            case 1: try InlinePixels(from: &r, field: "output")
            case let tag: throw .badTag(field: "output", tag: tag)
            }
            message = .result(TaskResult(taskID: taskID, checksum: checksum, elapsedNanoseconds: elapsed, output: output))
        case .failure:
            message = .failure(TaskFailure(taskID: try r.integer(UInt64.self, "taskID"), message: try r.string("message")))
        case .heartbeat:
            message = switch try r.u8("taskID") {
            case 0: .heartbeat(taskID: nil)
            case 1: .heartbeat(taskID: try r.integer(UInt64.self, "taskID"))
            case let tag: throw .badTag(field: "taskID", tag: tag)
            }
        case .shutdown:
            message = .shutdown
        case .cancel:
            message = .cancel(taskID: try r.integer(UInt64.self, "taskID"))
        case .imageTask:
            message = .imageTask(try ImageTask(from: &r))
        case .imageResult:
            message = .imageResult(try ImageResult(from: &r))
        case .detectionTask:
            message = .detectionTask(try DetectionTask(from: &r))
        case .detectionResult:
            message = .detectionResult(try DetectionResult(from: &r))
        }
        guard r.remaining == 0 else { throw .trailingBytes(count: r.remaining) }
        return message
    }
}

extension TaskMessage {
    func write(to w: inout ByteWriter) {
        w.integer(taskID)
        w.integer(imageID)
        w.integer(attempt)
        w.rect(tile)
        w.rect(image)
        w.filters(filters)
        w.u8(edge.wireTag)
        w.u8(colour.wireTag)
        w.regions(regions)
        switch pixels {
        case .shared(let source, let output, let background):
            w.u8(0)
            source.write(to: &w)
            output.write(to: &w)
            for c in 0..<3 { w.f64(Double(background[c])) }
        case .inline(let source):
            w.u8(1)
            source.write(to: &w)
        }
    }

    init(from r: inout ByteReader) throws(PayloadProblem) {
        let taskID = try r.integer(UInt64.self, "taskID")
        let imageID = try r.integer(UInt64.self, "imageID")
        let attempt = try r.integer(UInt32.self, "attempt")
        let tile = try r.rect("tile")
        let image = try r.rect("image")
        let filters = try r.filters("filters")
        let edgeTag = try r.u8("edge")
        guard let edge = EdgeRule(wireTag: edgeTag) else { throw .badTag(field: "edge", tag: edgeTag) }
        let colourTag = try r.u8("colour")
        guard let colour = ColourMode(wireTag: colourTag) else { throw .badTag(field: "colour", tag: colourTag) }
        try r.check(filters, field: "filters", edge: edge)
        let regions = try r.regions("regions", edge: edge)
        let pixels: TaskPixels = switch try r.u8("pixels") {
        case 0: .shared(
            source: try SharedRegion(from: &r, field: "pixels.source"),
            output: try SharedRegion(from: &r, field: "pixels.output"),
            background: try r.unitFloats("pixels.background"))
        case 1: .inline(source: try InlinePixels(from: &r, field: "pixels.source"))
        case let tag: throw .badTag(field: "pixels", tag: tag)
        }
        self.init(
            taskID: taskID, imageID: imageID, attempt: attempt, tile: tile, image: image, filters: filters, edge: edge,
            colour: colour, regions: regions, pixels: pixels)
    }
}

extension ByteWriter {
    /// A chain's filters: a list of (name string, arguments as a list of (name string, value),
    /// regions), the arguments in increasing byte order of their names, the regions where that
    /// filter applies in the chain (as ``regions(_:)`` writes a chain's; never a box).
    mutating func filters(_ filters: [FilterSpec]) {
        count(filters.count)
        for filter in filters {
            string(filter.name)
            count(filter.arguments.count)
            for (name, value) in filter.arguments.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
                string(name)
                switch value {
                case .number(let v):
                    u8(0)
                    f64(v)
                case .integer(let v):
                    u8(1)
                    i64(v)
                case .boolean(let v):
                    u8(2)
                    bool(v)
                case .string(let v):
                    u8(3)
                    string(v)
                }
            }
            regions(filter.regions)
        }
    }
}

extension ByteReader {
    /// A chain's filters, as ``ByteWriter/filters(_:)`` writes them: each argument's name
    /// after the one before in byte order, none canonically equivalent to another.
    mutating func filters(_ field: String) throws(PayloadProblem) -> [FilterSpec] {
        var filters: [FilterSpec] = []
        for i in 0..<(try count(field)) {
            let name = try string(field + "[\(i)].name")
            var arguments: [String: ParameterValue] = [:]
            var previous: String?
            for j in 0..<(try count(field + "[\(i)].arguments")) {
                let field = field + "[\(i)].arguments[\(j)]"
                let argument = try string(field + ".name")
                if let previous, !previous.utf8.lexicographicallyPrecedes(argument.utf8) {
                    throw .invalidValue(
                        field: field + ".name",
                        reason: "'\(argument)' does not follow '\(previous)': names go in increasing byte order, once each")
                }
                previous = argument
                // Swift's String equality is canonical equivalence: "e\u{301}" and "\u{e9}" are
                // one key, though their bytes differ. Refuse rather than let one overwrite the other.
                guard arguments[argument] == nil else {
                    throw .invalidValue(
                        field: field + ".name", reason: "'\(argument)' is canonically equivalent to an earlier name")
                }
                arguments[argument] = switch try u8(field + ".value") {
                case 0: .number(try f64(field + ".value"))
                case 1: .integer(try i64(field + ".value"))
                case 2: .boolean(try bool(field + ".value"))
                case 3: .string(try string(field + ".value"))
                case let tag: throw .badTag(field: field + ".value", tag: tag)
                }
            }
            // Where the filter applies in the chain: blended, never a box.
            let regions = try regions(field + "[\(i)].regions", edge: nil)
            if regions.extent != .image {
                throw .invalidValue(field: field + "[\(i)].regions.extent", reason: "a filter's regions blend; only a chain writes their box")
            }
            filters.append(FilterSpec(name: name, arguments: arguments, regions: regions))
        }
        return filters
    }

    /// Checks that no filter of a chain of edge rule `edge` has regions with `grow` (what
    /// the manifest allows), once the edge is read after the filters.
    func check(_ filters: [FilterSpec], field: String, edge: EdgeRule) throws(PayloadProblem) {
        if edge == .grow, let i = filters.firstIndex(where: { !$0.regions.isEverywhere }) {
            throw .invalidValue(
                field: field + "[\(i)].regions", reason: "regions are placed on an image the chain keeps the size of, not with edge 'grow'")
        }
    }
}

extension SharedRegion {
    func write(to w: inout ByteWriter) {
        w.integer(segment)
        w.integer(file.device)
        w.integer(file.inode)
        w.integer(UInt64(byteOffset))
        w.rect(rect)
        w.u8(UInt8(channels))
        w.u8(format.rawValue)
        w.integer(UInt64(rowStride))
    }

    init(from r: inout ByteReader, field: String) throws(PayloadProblem) {
        let segment = try r.integer(UInt32.self, field + ".segment")
        let file = FileIdentity(
            device: try r.integer(UInt64.self, field + ".file.device"), inode: try r.integer(UInt64.self, field + ".file.inode"))
        let byteOffset = try r.u64AsInt(field + ".byteOffset")
        let rect = try r.rect(field + ".rect")
        let channels = Int(try r.u8(field + ".channels"))
        let formatTag = try r.u8(field + ".format")
        guard let format = SampleFormat(rawValue: formatTag) else { throw .badTag(field: field + ".format", tag: formatTag) }
        let rowStride = try r.u64AsInt(field + ".rowStride")
        if let problem = Self.problem(byteOffset: byteOffset, rect: rect, channels: channels, format: format, rowStride: rowStride) {
            throw .invalidValue(field: field, reason: problem)
        }
        self.init(segment: segment, file: file, byteOffset: byteOffset, rect: rect, channels: channels, format: format, rowStride: rowStride)
    }
}

extension InlinePixels {
    func write(to w: inout ByteWriter) {
        w.rect(rect)
        w.u8(UInt8(channels))
        w.floats(samples)
    }

    init(from r: inout ByteReader, field: String) throws(PayloadProblem) {
        let rect = try r.rect(field + ".rect")
        let channels = Int(try r.u8(field + ".channels"))
        guard channels == 3 || channels == 4 else {
            throw .invalidValue(field: field + ".channels", reason: "channels must be 3 or 4, not \(channels)")
        }
        let (area, o1) = rect.width.multipliedReportingOverflow(by: rect.height)
        let (count, o2) = area.multipliedReportingOverflow(by: channels)
        guard !o1, !o2 else { throw .invalidValue(field: field + ".rect", reason: "too many pixels") }
        self.init(rect: rect, channels: channels, samples: try r.floats(count: count, field + ".samples"))
    }
}

extension EdgeRule {
    /// The rule's u8 in a task: 0 clamp, 1 mirror, 2 transparent, 3 grow.
    var wireTag: UInt8 {
        switch self {
        case .clamp: 0
        case .mirror: 1
        case .transparent: 2
        case .grow: 3
        }
    }

    init?(wireTag: UInt8) {
        switch wireTag {
        case 0: self = .clamp
        case 1: self = .mirror
        case 2: self = .transparent
        case 3: self = .grow
        default: return nil
        }
    }
}

extension ColourMode {
    /// The mode's u8 in a task: 0 gamma, 1 linear.
    var wireTag: UInt8 {
        switch self {
        case .gamma: 0
        case .linear: 1
        }
    }

    init?(wireTag: UInt8) {
        switch wireTag {
        case 0: self = .gamma
        case 1: self = .linear
        default: return nil
        }
    }
}

extension ByteWriter {
    /// Where a chain's filters apply (``RegionMask``): a list of regions, each shape u8 (0 rect,
    /// 1 ellipse), x, y, width, height (each a unit u8, 0 pixels or 1 percent, then f64),
    /// cornerRadius f64, feather f64; then invert bool, then the extent u8
    /// (``RegionMask/Extent``: 0 image, 1 box, 2 cutout).
    mutating func regions(_ mask: RegionMask) {
        count(mask.regions.count)
        for region in mask.regions {
            u8(region.shape == .rect ? 0 : 1)
            for length in [region.x, region.y, region.width, region.height] {
                switch length {
                case .pixels(let p):
                    u8(0)
                    f64(p)
                case .percent(let q):
                    u8(1)
                    f64(q)
                }
            }
            f64(region.cornerRadius)
            f64(region.feather)
        }
        bool(mask.invert)
        u8(mask.extent.rawValue)
    }
}

extension ByteReader {
    /// A ``RegionMask`` as ``ByteWriter/regions(_:)`` writes it, for a chain of edge rule
    /// `edge`: every number finite, sizes > 0, radius and feather >= 0, and no region with
    /// `grow` (what the manifest allows; not checked for a nil `edge`: a filter's regions, read
    /// before the edge, are checked with ``check(_:field:edge:)``).
    mutating func regions(_ field: String, edge: EdgeRule?) throws(PayloadProblem) -> RegionMask {
        var regions: [Region] = []
        for i in 0..<(try count(field)) {
            let field = field + "[\(i)]"
            let shape: Region.Shape = switch try u8(field + ".shape") {
            case 0: .rect
            case 1: .ellipse
            case let tag: throw .badTag(field: field + ".shape", tag: tag)
            }
            var lengths: [RegionLength] = []
            for (name, isSize) in [("x", false), ("y", false), ("width", true), ("height", true)] {
                let unit = try u8(field + "." + name)
                let value = try f64(field + "." + name)
                guard value.isFinite, !isSize || value > 0 else {
                    throw .invalidValue(field: field + "." + name, reason: "\(value) is not a \(isSize ? "size > 0" : "finite position")")
                }
                switch unit {
                case 0: lengths.append(.pixels(value))
                case 1: lengths.append(.percent(value))
                case let tag: throw .badTag(field: field + "." + name, tag: tag)
                }
            }
            let cornerRadius = try f64(field + ".cornerRadius")
            let feather = try f64(field + ".feather")
            for (name, value) in [("cornerRadius", cornerRadius), ("feather", feather)] where !(value.isFinite && value >= 0) {
                throw .invalidValue(field: field + "." + name, reason: "\(value) is not a number of pixels >= 0")
            }
            regions.append(Region(
                shape: shape, x: lengths[0], y: lengths[1], width: lengths[2], height: lengths[3],
                cornerRadius: cornerRadius, feather: feather))
        }
        let invert = try bool(field + ".invert")
        let tag = try u8(field + ".extent")
        guard let extent = RegionMask.Extent(rawValue: tag) else { throw .badTag(field: field + ".extent", tag: tag) }
        let mask = RegionMask(regions: regions, invert: invert, extent: extent)
        if mask.isEverywhere ? extent != .image : invert && extent != .image {
            throw .invalidValue(field: field + ".extent", reason: "only some regions, not inverted, have a box to write")
        }
        if !mask.isEverywhere, edge == .grow {
            throw .invalidValue(field: field, reason: "regions are placed on an image the chain keeps the size of, not with edge 'grow'")
        }
        return mask
    }
}
