import BlurfarmCore

// The whole-image messages (protocol version 4): their payloads, written and read side by side,
// in the order each type's doc comment gives (the types are BlurfarmCore's: the coordinator
// asks for a whole image through its rendering, and never knows the wire).

extension ImageTask {
    func write(to w: inout ByteWriter) {
        w.integer(taskID)
        w.integer(imageID)
        w.integer(attempt)
        input.write(to: &w)
        switch decode {
        case .whole:
            w.u8(0)
        case .thumbnail(let width, let height, let fit, let upscale, let crop, let sharpen):
            w.u8(1)
            w.optional(width) { $0.integer(UInt32($1)) }
            w.optional(height) { $0.integer(UInt32($1)) }
            w.string(fit.rawValue)
            w.bool(upscale)
            w.string(crop.rawValue)
            w.optional(sharpen) { $0.f64($1) }
        case .thumbnails(let widths, let upscale, let sharpen):
            w.u8(2)
            w.count(widths.count)
            for width in widths { w.integer(UInt32(width)) }
            w.bool(upscale)
            w.optional(sharpen) { $0.f64($1) }
        }
        w.count(outputs.count)
        for output in outputs {
            w.string(output.path)
            w.integer(UInt32(output.decoded))
            w.filters(output.filters)
            w.u8(output.edge.wireTag)
            w.u8(output.colour.wireTag)
            w.regions(output.regions)
            w.integer(UInt32(output.tileSize))
            let e = output.encoding
            w.u8(UInt8(e.quality))
            w.bool(e.lossless)
            w.string(e.metadata.rawValue)
            for c in 0..<3 { w.f64(Double(e.background[c])) }
            w.optional(e.bitDepth) { $0.u8(UInt8($1)) }
            w.bool(e.progressive)
            w.string(e.subsampling.rawValue)
            w.optional(e.effort) { $0.u8(UInt8($1)) }
            w.bool(e.optimizeCoding)
            w.bool(output.verifyDecode)
        }
    }

    init(from r: inout ByteReader) throws(PayloadProblem) {
        let taskID = try r.integer(UInt64.self, "taskID")
        let imageID = try r.integer(UInt64.self, "imageID")
        let attempt = try r.integer(UInt32.self, "attempt")
        let input = try TaskInput(from: &r)
        let decode: DecodeRequest
        switch try r.u8("decode") {
        case 0:
            decode = .whole
        case 1:
            let width = try r.optional("decode.width") { (r) throws(PayloadProblem) in Int(try r.integer(UInt32.self, "decode.width")) }
            let height = try r.optional("decode.height") { (r) throws(PayloadProblem) in Int(try r.integer(UInt32.self, "decode.height")) }
            let fitName = try r.string("decode.fit")
            guard let fit = ThumbnailFit(rawValue: fitName) else {
                throw .invalidValue(field: "decode.fit", reason: "'\(fitName)' is no fit")
            }
            let upscale = try r.bool("decode.upscale")
            let cropName = try r.string("decode.crop")
            guard let crop = ThumbnailCrop(rawValue: cropName) else {
                throw .invalidValue(field: "decode.crop", reason: "'\(cropName)' is no crop")
            }
            decode = .thumbnail(
                width: width, height: height, fit: fit, upscale: upscale, crop: crop,
                sharpen: try r.optional("decode.sharpen") { (r) throws(PayloadProblem) in try r.f64("decode.sharpen") })
        case 2:
            var widths: [Int] = []
            for i in 0..<(try r.count("decode.widths")) { widths.append(Int(try r.integer(UInt32.self, "decode.widths[\(i)]"))) }
            guard !widths.isEmpty, zip(widths, widths.dropFirst()).allSatisfy({ $0 < $1 }) else {
                throw .invalidValue(field: "decode.widths", reason: "\(widths) are not ascending and distinct")
            }
            decode = .thumbnails(
                widths: widths, upscale: try r.bool("decode.upscale"),
                sharpen: try r.optional("decode.sharpen") { (r) throws(PayloadProblem) in try r.f64("decode.sharpen") })
        case let tag:
            throw .badTag(field: "decode", tag: tag)
        }
        var outputs: [ImageTaskOutput] = []
        for i in 0..<(try r.count("outputs")) {
            let field = "outputs[\(i)]"
            let path = try r.string(field + ".path")
            let decoded = Int(try r.integer(UInt32.self, field + ".decoded"))
            let images = decode.imageCount
            guard decoded < images else {
                throw .invalidValue(field: field + ".decoded", reason: "\(decoded) is not one of the \(images) decoded images")
            }
            let filters = try r.filters(field + ".filters")
            let edgeTag = try r.u8(field + ".edge")
            guard let edge = EdgeRule(wireTag: edgeTag) else { throw .badTag(field: field + ".edge", tag: edgeTag) }
            let colourTag = try r.u8(field + ".colour")
            guard let colour = ColourMode(wireTag: colourTag) else { throw .badTag(field: field + ".colour", tag: colourTag) }
            try r.check(filters, field: field + ".filters", edge: edge)
            let regions = try r.regions(field + ".regions", edge: edge)
            let tileSize = Int(try r.integer(UInt32.self, field + ".tileSize"))
            let quality = Int(try r.u8(field + ".quality"))
            let lossless = try r.bool(field + ".lossless")
            let policy = try r.string(field + ".metadata")
            guard let metadata = MetadataPolicy(rawValue: policy) else {
                throw .invalidValue(field: field + ".metadata", reason: "'\(policy)' is no metadata policy")
            }
            let background = try r.unitFloats(field + ".background")
            let bitDepth = try r.optional(field + ".bitDepth") { (r) throws(PayloadProblem) in Int(try r.u8(field + ".bitDepth")) }
            let progressive = try r.bool(field + ".progressive")
            let name = try r.string(field + ".subsampling")
            guard let subsampling = ChromaSubsampling(rawValue: name) else {
                throw .invalidValue(field: field + ".subsampling", reason: "'\(name)' is no chroma subsampling")
            }
            let effort = try r.optional(field + ".effort") { (r) throws(PayloadProblem) in Int(try r.u8(field + ".effort")) }
            let optimizeCoding = try r.bool(field + ".optimizeCoding")
            let verifyDecode = try r.bool(field + ".verifyDecode")
            outputs.append(ImageTaskOutput(
                path: path, decoded: decoded, filters: filters, edge: edge, colour: colour, regions: regions,
                tileSize: tileSize, encoding: EncodeOptions(
                    quality: quality, lossless: lossless, metadata: metadata, background: background, bitDepth: bitDepth,
                    progressive: progressive, subsampling: subsampling, effort: effort, optimizeCoding: optimizeCoding),
                verifyDecode: verifyDecode))
        }
        self.init(
            taskID: taskID, imageID: imageID, attempt: attempt, input: input, decode: decode, outputs: outputs)
    }
}

extension TaskInput {
    func write(to w: inout ByteWriter) {
        w.string(path)
        w.string(name)
        w.integer(UInt64(pixelLimit))
        w.integer(UInt64(memoryLimit))
    }

    init(from r: inout ByteReader) throws(PayloadProblem) {
        self.init(
            path: try r.string("input"), name: try r.string("inputName"), pixelLimit: try r.u64AsInt("pixelLimit"),
            memoryLimit: try r.u64AsInt("memoryLimit"))
    }
}

extension ImageResult {
    func write(to w: inout ByteWriter) {
        w.integer(taskID)
        w.integer(decodeNanoseconds)
        w.count(outputs.count)
        for output in outputs {
            switch output {
            case .encoded(let e):
                w.u8(0)
                w.count(e.bytes.count)
                w.bytes.append(contentsOf: e.bytes)
                w.integer(UInt32(e.width))
                w.integer(UInt32(e.height))
                w.u8(UInt8(e.bitDepth))
                w.bool(e.hasAlpha)
                w.integer(e.checksum)
                w.integer(UInt32(e.tiles))
                w.integer(UInt32(e.bands))
                w.integer(e.filterNanoseconds)
                w.integer(e.encodeNanoseconds)
            case .failed(let f):
                w.u8(1)
                w.u8(f.kind.rawValue)
                w.optional(f.code) { $0.string($1) }
                w.optional(f.path) { $0.string($1) }
                w.string(f.message)
            }
        }
    }

    init(from r: inout ByteReader) throws(PayloadProblem) {
        let taskID = try r.integer(UInt64.self, "taskID")
        let decode = try r.integer(UInt64.self, "decodeNanoseconds")
        var outputs: [ImageOutputResult] = []
        for i in 0..<(try r.count("outputs")) {
            let field = "outputs[\(i)]"
            switch try r.u8(field) {
            case 0:
                let bytes = try r.byteArray(field + ".bytes")
                outputs.append(.encoded(EncodedOutput(
                    bytes: bytes, width: Int(try r.integer(UInt32.self, field + ".width")),
                    height: Int(try r.integer(UInt32.self, field + ".height")), bitDepth: Int(try r.u8(field + ".bitDepth")),
                    hasAlpha: try r.bool(field + ".hasAlpha"), checksum: try r.integer(UInt64.self, field + ".checksum"),
                    tiles: Int(try r.integer(UInt32.self, field + ".tiles")),
                    bands: Int(try r.integer(UInt32.self, field + ".bands")),
                    filterNanoseconds: try r.integer(UInt64.self, field + ".filterNanoseconds"),
                    encodeNanoseconds: try r.integer(UInt64.self, field + ".encodeNanoseconds"))))
            case 1:
                let tag = try r.u8(field + ".kind")
                guard let kind = ImageOutputFailure.Kind(rawValue: tag) else { throw .badTag(field: field + ".kind", tag: tag) }
                outputs.append(.failed(ImageOutputFailure(
                    kind: kind, code: try r.optional(field + ".code") { (r) throws(PayloadProblem) in try r.string(field + ".code") },
                    path: try r.optional(field + ".path") { (r) throws(PayloadProblem) in try r.string(field + ".path") },
                    message: try r.string(field + ".message"))))
            case let tag:
                throw .badTag(field: field, tag: tag)
            }
        }
        self.init(taskID: taskID, decodeNanoseconds: decode, outputs: outputs)
    }
}

extension ByteWriter {
    /// An optional: u8 0, or u8 1 and the value.
    mutating func optional<T>(_ value: T?, _ write: (inout ByteWriter, T) -> Void) {
        if let value {
            u8(1)
            write(&self, value)
        } else {
            u8(0)
        }
    }
}

extension ByteReader {
    /// An optional: u8 0, or u8 1 and the value `read` reads.
    mutating func optional<T>(
        _ field: String, _ read: (inout ByteReader) throws(PayloadProblem) -> T
    ) throws(PayloadProblem) -> T? {
        switch try u8(field) {
        case 0: return nil
        case 1: return try read(&self)
        case let tag: throw .badTag(field: field, tag: tag)
        }
    }

    /// Three f64 that are `Float`s in 0...1 (a background colour).
    mutating func unitFloats(_ field: String) throws(PayloadProblem) -> SIMD3<Float> {
        var values = SIMD3<Float>()
        for c in 0..<3 {
            let value = try f64("\(field)[\(c)]")
            guard value >= 0, value <= 1, Double(Float(value)) == value else {
                throw .invalidValue(field: "\(field)[\(c)]", reason: "\(value) is not a Float in 0...1")
            }
            values[c] = Float(value)
        }
        return values
    }
}
