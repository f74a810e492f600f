import BlurfarmCore

// The whole-image messages (protocol version 4): one image decoded, filtered and encoded by
// one worker, for images small enough that one core does them best (docs/protocol.md, "Whole
// images"). The worker reads the input from a descriptor the coordinator opened and sends the
// encoded files back; it writes no file. Their payloads, written and read side by side, in
// the order each type's doc comment gives.

/// Payload of ``WireMessage/imageTask(_:)``: one input to decode once and make outputs of.
///
/// Layout: taskID u64, imageID u64, attempt u32, input string, inputName string, pixelLimit
/// u64, memoryLimit u64, decode (`DecodeRequest`: u8 tag, then 0 whole: nothing; 1 thumbnail:
/// width optional u32, height optional u32, fit string, upscale bool, crop string, sharpen
/// optional f64; 2 thumbnails: widths (list of u32, ascending), upscale bool, sharpen optional
/// f64; a fit or crop is its name, e.g. `inside`, `north-east`), outputs (list of
/// ``ImageTaskOutput``).
public struct ImageTask: Equatable, Sendable {
    /// The coordinator's id of this task, unique within a run; the reply names it.
    public var taskID: UInt64
    /// The coordinator's id of the image.
    public var imageID: UInt64
    /// 1 for the first try, 2 for the first retry, and so on.
    public var attempt: UInt32
    /// What the worker opens: the coordinator's open descriptor of the input,
    /// `/proc/<coordinator pid>/fd/<n>` (opened beneath the job's roots by the coordinator:
    /// the worker never resolves the job's paths).
    public var input: String
    /// The input as the job names it: the worker's messages say this, never ``input``.
    public var inputName: String
    /// The largest `width * height` decoded (checked on the header first).
    public var pixelLimit: Int
    /// The most bytes the decode may allocate.
    public var memoryLimit: Int
    /// How the input is decoded.
    public var decode: DecodeRequest
    /// The outputs made from the decode, each answered in ``ImageResult/outputs`` in order.
    public var outputs: [ImageTaskOutput]

    /// A task; see the properties.
    public init(
        taskID: UInt64, imageID: UInt64, attempt: UInt32, input: String, inputName: String, pixelLimit: Int,
        memoryLimit: Int, decode: DecodeRequest, outputs: [ImageTaskOutput]
    ) {
        self.taskID = taskID
        self.imageID = imageID
        self.attempt = attempt
        self.input = input
        self.inputName = inputName
        self.pixelLimit = pixelLimit
        self.memoryLimit = memoryLimit
        self.decode = decode
        self.outputs = outputs
    }
}

/// One output of an image task.
///
/// Layout: path string, decoded u32, filters (as in ``TaskMessage``), edge u8, colour u8,
/// regions (as in ``TaskMessage``), tileSize u32, encoding (`EncodeOptions`: quality u8, lossless bool, metadata
/// string (`keep`, `keep-icc`, `strip`), background 3 × f64, each a `Float` in 0...1, bitDepth optional u8,
/// progressive bool, subsampling string, effort optional u8, optimizeCoding bool), verifyDecode bool.
public struct ImageTaskOutput: Equatable, Sendable {
    /// Where the coordinator will write it: its extension names the format; messages name it.
    public var path: String
    /// Which decoded image it is made from: 0, or the index of its width in the decode's
    /// `thumbnails` widths.
    public var decoded: Int
    /// The filters, applied in order, each with all its arguments resolved (built-in filters:
    /// plugins run tile by tile).
    public var filters: [FilterSpec]
    public var edge: EdgeRule
    public var colour: ColourMode
    /// Where the filters apply (everywhere when it has no regions).
    public var regions: RegionMask
    /// The tiles the worker renders the chain in (the same bits whatever the tiles).
    public var tileSize: Int
    public var encoding: EncodeOptions
    /// Whether the worker decodes the encoded bytes again and compares them with the pixels it
    /// rendered before it answers (`verify: decode`).
    public var verifyDecode: Bool

    /// An output; see the properties.
    public init(
        path: String, decoded: Int, filters: [FilterSpec], edge: EdgeRule, colour: ColourMode,
        regions: RegionMask = .everywhere, tileSize: Int, encoding: EncodeOptions, verifyDecode: Bool
    ) {
        self.path = path
        self.decoded = decoded
        self.filters = filters
        self.edge = edge
        self.colour = colour
        self.regions = regions
        self.tileSize = tileSize
        self.encoding = encoding
        self.verifyDecode = verifyDecode
    }
}

/// Payload of ``WireMessage/imageResult(_:)``: an image task done, one answer per output.
///
/// Layout: taskID u64, decodeNanoseconds u64, outputs (list of ``ImageOutputResult``).
public struct ImageResult: Equatable, Sendable {
    /// The task this answers.
    public var taskID: UInt64
    /// Wall time the decode took.
    public var decodeNanoseconds: UInt64
    /// One per output of the task, in its order.
    public var outputs: [ImageOutputResult]

    /// A result; see the properties.
    public init(taskID: UInt64, decodeNanoseconds: UInt64, outputs: [ImageOutputResult]) {
        self.taskID = taskID
        self.decodeNanoseconds = decodeNanoseconds
        self.outputs = outputs
    }
}

/// One output's answer. Layout: u8 tag, then 0 encoded: ``EncodedOutput``; 1 failed:
/// ``ImageOutputFailure``.
public enum ImageOutputResult: Equatable, Sendable {
    case encoded(EncodedOutput)
    case failed(ImageOutputFailure)
}

/// An output encoded in memory, for the coordinator to write.
///
/// Layout: bytes (u32 count, then the bytes), width u32, height u32, bitDepth u8, hasAlpha
/// bool, checksum u64, tiles u32, bands u32, filterNanoseconds u64, encodeNanoseconds u64.
public struct EncodedOutput: Equatable, Sendable {
    /// The file's bytes.
    public var bytes: [UInt8]
    public var width: Int
    public var height: Int
    /// Bits per sample written: 8 or 16.
    public var bitDepth: Int
    /// Whether an alpha channel was written.
    public var hasAlpha: Bool
    /// The ``PixelChecksum`` of the samples encoded: the report's checksum of the output.
    public var checksum: UInt64
    /// The tiles the chain was rendered in (0 for a chain that only copies).
    public var tiles: Int
    /// The bands the worker streamed the input in, decoding, filtering and encoding band by
    /// band (0: decoded whole).
    public var bands: Int
    public var filterNanoseconds: UInt64
    public var encodeNanoseconds: UInt64

    /// An encoded output; see the properties.
    public init(
        bytes: [UInt8], width: Int, height: Int, bitDepth: Int, hasAlpha: Bool, checksum: UInt64, tiles: Int, bands: Int,
        filterNanoseconds: UInt64, encodeNanoseconds: UInt64
    ) {
        self.bytes = bytes
        self.width = width
        self.height = height
        self.bitDepth = bitDepth
        self.hasAlpha = hasAlpha
        self.checksum = checksum
        self.tiles = tiles
        self.bands = bands
        self.filterNanoseconds = filterNanoseconds
        self.encodeNanoseconds = encodeNanoseconds
    }
}

/// Why an output of an image task was not made, kept typed for the report.
///
/// Layout: kind u8 (0 decode, 1 plugin, 2 verification, 3 encode, 4 too large), code optional string,
/// path optional string, message string.
public struct ImageOutputFailure: Equatable, Sendable {
    /// Where it failed.
    public enum Kind: UInt8, Sendable {
        /// The input could not be read or decoded: every output of the task fails so.
        case decode = 0
        /// The chain refused the image (a plugin's answers, an output over the pixel limit).
        case plugin = 1
        /// `verify: decode` found the encoded file differs from the pixels.
        case verification = 2
        /// The pixels could not be encoded.
        case encode = 3
        /// The encoded file does not fit the answer's frame with the others
        /// (``WireProtocol/inlinePixelCapacity`` bytes in all): the coordinator makes it.
        case tooLarge = 4
        /// `output: region`, and every region lies outside the image.
        case regions = 5
    }

    public var kind: Kind
    /// ImageIO's error code (its name, e.g. `decodeFailed`) for decode and encode failures.
    public var code: String?
    /// The file's name as the job gives it, when the failure concerns one.
    public var path: String?
    /// What went wrong, without the file's name.
    public var message: String

    /// A failure; see the properties.
    public init(kind: Kind, code: String?, path: String?, message: String) {
        self.kind = kind
        self.code = code
        self.path = path
        self.message = message
    }
}

// MARK: - Payloads

extension ImageTask {
    func write(to w: inout ByteWriter) {
        w.integer(taskID)
        w.integer(imageID)
        w.integer(attempt)
        w.string(input)
        w.string(inputName)
        w.integer(UInt64(pixelLimit))
        w.integer(UInt64(memoryLimit))
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
        let input = try r.string("input")
        let inputName = try r.string("inputName")
        let pixelLimit = try r.u64AsInt("pixelLimit")
        let memoryLimit = try r.u64AsInt("memoryLimit")
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
            taskID: taskID, imageID: imageID, attempt: attempt, input: input, inputName: inputName, pixelLimit: pixelLimit,
            memoryLimit: memoryLimit, decode: decode, outputs: outputs)
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
