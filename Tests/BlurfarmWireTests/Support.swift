import BlurfarmCore
import BlurfarmWire
import CXXHash
import PropertyBased
import Testing

// Test-side references, written from the specifications and not from the module's code (the
// frame checksum is the library's XXH3 called here, not through the module): the frame
// checksum, a byte-wise FNV-1a 64, a little-endian writer for hand-built payloads, random
// messages with awkward values, and a bit-exact comparison of messages.

/// The frame checksum as docs/protocol.md states it: the low 32 bits of xxHash's XXH3-64 (seed
/// 0) of the bytes, asked of the library itself (an XXH3 written here would be a second copy of
/// a large specification; `referenceChecksumHasXXHashsPublishedValue` pins the library's answer).
func referenceChecksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
    let array = Array(bytes)
    return array.withUnsafeBytes { UInt32(truncatingIfNeeded: XXH3_64bits($0.baseAddress, $0.count)) }
}

/// FNV-1a 64 over bytes.
func referenceFNV1a64(_ bytes: some Sequence<UInt8>) -> UInt64 {
    var hash: UInt64 = 14_695_981_039_346_656_037
    for byte in bytes { hash = (hash ^ UInt64(byte)) &* 1_099_511_628_211 }
    return hash
}

/// A payload built by hand, field by field, as docs/protocol.md describes.
struct Bytes {
    var bytes: [UInt8] = []

    mutating func le<T: FixedWidthInteger>(_ value: T) {
        for k in 0..<(T.bitWidth / 8) { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * k))) }
    }
    mutating func u8(_ v: UInt8) { bytes.append(v) }
    mutating func u16(_ v: UInt16) { le(v) }
    mutating func u32(_ v: UInt32) { le(v) }
    mutating func u64(_ v: UInt64) { le(v) }
    mutating func i32(_ v: Int32) { le(v) }
    mutating func i64(_ v: Int64) { le(v) }
    mutating func string(_ s: String) {
        u32(UInt32(s.utf8.count))
        bytes += Array(s.utf8)
    }
    mutating func rect(_ x: Int64, _ y: Int64, _ w: Int64, _ h: Int64) {
        i64(x)
        i64(y)
        i64(w)
        i64(h)
    }
}

/// A frame with a correct checksum around any header values and payload.
func frame(
    type: UInt16, payload: [UInt8], magic: [UInt8] = [0x42, 0x46, 0x57, 0x31], version: UInt16 = WireProtocol.version,
    length: UInt32? = nil
) -> [UInt8] {
    var b = Bytes(bytes: magic)
    b.u16(version)
    b.u16(type)
    b.u32(length ?? UInt32(payload.count))
    b.bytes += payload
    b.u32(referenceChecksum(b.bytes))
    return b.bytes
}

/// Every message the decoder yields for `bytes` fed in one piece, and the error, if any.
func decodeAll(_ bytes: [UInt8], decoder: inout FrameDecoder) -> (messages: [WireMessage], error: WireError?) {
    decoder.append(bytes)
    return drain(&decoder)
}

/// Takes messages until the decoder needs more bytes or fails.
func drain(_ decoder: inout FrameDecoder) -> (messages: [WireMessage], error: WireError?) {
    var messages: [WireMessage] = []
    do {
        while let m = try decoder.nextMessage() { messages.append(m) }
        return (messages, nil)
    } catch {
        return (messages, error)
    }
}

func encoded(_ message: WireMessage) -> [UInt8] {
    do {
        return try FrameEncoder.encode(message)
    } catch {
        Issue.record("cannot encode \(message): \(error)")
        return []
    }
}

/// Whether two messages are the same bit for bit (`==` on `ParameterValue` says NaN ≠ NaN).
func sameBits(_ a: WireMessage, _ b: WireMessage) -> Bool {
    func sameValue(_ u: ParameterValue, _ v: ParameterValue) -> Bool {
        if case .number(let p) = u, case .number(let q) = v { return p.bitPattern == q.bitPattern }
        return u == v
    }
    func sameFilters(_ x: [FilterSpec], _ y: [FilterSpec]) -> Bool {
        x.count == y.count
            && zip(x, y).allSatisfy { f, g in
                f.name == g.name && f.arguments.count == g.arguments.count
                    && f.arguments.allSatisfy { key, value in g.arguments[key].map { sameValue(value, $0) } ?? false }
            }
    }
    switch (a, b) {
    case (.task(let x), .task(let y)):
        return x.taskID == y.taskID && x.imageID == y.imageID && x.attempt == y.attempt && x.tile == y.tile
            && x.image == y.image && x.edge == y.edge && x.colour == y.colour && x.regions == y.regions
            && x.pixels == y.pixels
            && sameFilters(x.filters, y.filters)
    case (.imageTask(var x), .imageTask(var y)):
        // The doubles by their bits (NaN payloads), the rest as values.
        func sharpenBits(_ decode: inout DecodeRequest) -> UInt64? {
            switch decode {
            case .whole: return nil
            case .thumbnail(let w, let h, let fit, let up, let crop, let sharpen):
                decode = .thumbnail(width: w, height: h, fit: fit, upscale: up, crop: crop, sharpen: nil)
                return sharpen?.bitPattern
            case .thumbnails(let widths, let up, let sharpen):
                decode = .thumbnails(widths: widths, upscale: up, sharpen: nil)
                return sharpen?.bitPattern
            }
        }
        guard sharpenBits(&x.decode) == sharpenBits(&y.decode), x.outputs.count == y.outputs.count,
            zip(x.outputs, y.outputs).allSatisfy({ sameFilters($0.filters, $1.filters) })
        else { return false }
        for i in x.outputs.indices {
            x.outputs[i].filters = []
            y.outputs[i].filters = []
        }
        return x == y
    default:
        return a == b
    }
}

func sameBits(_ a: [WireMessage], _ b: [WireMessage]) -> Bool {
    a.count == b.count && zip(a, b).allSatisfy(sameBits)
}

/// Random messages with awkward values: extreme ids, empty and non-ASCII strings, negative
/// coordinates, NaN floats with payloads, negative zero.
enum Random {
    static let scalars: [Unicode.Scalar] = [
        "a", "Z", "0", " ", "\u{0}", "\n", "\"", "\\", "\u{7F}", "\u{80}", "\u{e9}", "\u{301}", "\u{7FF}", "\u{800}",
        "\u{FEFF}", "\u{FFFD}", "\u{FFFF}", "\u{10000}", "\u{1F600}", "\u{10FFFF}", "\u{2028}",
    ]

    static func string<R: RandomNumberGenerator>(_ rng: inout R, maxCount: Int = 12) -> String {
        var view = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0...maxCount, using: &rng) { view.append(scalars.randomElement(using: &rng)!) }
        return String(view)
    }

    static func u64<R: RandomNumberGenerator>(_ rng: inout R) -> UInt64 {
        [0, 1, UInt64.max, UInt64.max - 1, 1 << 63, rng.next()].randomElement(using: &rng)!
    }

    static func u32<R: RandomNumberGenerator>(_ rng: inout R) -> UInt32 {
        [0, 1, UInt32.max, UInt32.random(in: 0...UInt32.max, using: &rng)].randomElement(using: &rng)!
    }

    static func rect<R: RandomNumberGenerator>(_ rng: inout R, maxSize: Int = 1 << 20) -> Rect {
        let width = Int.random(in: 0...maxSize, using: &rng), height = Int.random(in: 0...maxSize, using: &rng)
        let x: Int, y: Int
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: (x, y) = (Int.min, Int.min)
        case 1: (x, y) = (Int.max - width, Int.max - height)
        default: (x, y) = (Int.random(in: -100_000...100_000, using: &rng), Int.random(in: -100_000...100_000, using: &rng))
        }
        return Rect(x: x, y: y, width: width, height: height)
    }

    /// A float with any bit pattern now and then (NaNs with payloads, infinities, subnormals).
    static func float<R: RandomNumberGenerator>(_ rng: inout R) -> Float {
        switch Int.random(in: 0..<6, using: &rng) {
        case 0: Float(bitPattern: UInt32.random(in: 0...UInt32.max, using: &rng))
        case 1: [-0.0, .infinity, -.infinity, .leastNonzeroMagnitude, Float(bitPattern: 0x7FC0_0001),
                 Float(bitPattern: 0xFF80_0001)].randomElement(using: &rng)!
        default: Float.random(in: 0...1, using: &rng)
        }
    }

    static func double<R: RandomNumberGenerator>(_ rng: inout R) -> Double {
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: Double(bitPattern: rng.next())
        case 1: [-0.0, .nan, .infinity, Double(bitPattern: 0x7FF0_0000_0000_0001), .leastNonzeroMagnitude].randomElement(using: &rng)!
        default: Double.random(in: -1000...1000, using: &rng)
        }
    }

    static func value<R: RandomNumberGenerator>(_ rng: inout R) -> ParameterValue {
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: .number(double(&rng))
        case 1: .integer([Int.min, Int.max, -1, 0, Int.random(in: -1000...1000, using: &rng)].randomElement(using: &rng)!)
        case 2: .boolean(Bool.random(using: &rng))
        default: .string(string(&rng))
        }
    }

    /// A filter with any arguments, and now and then regions of its own (none with `grow`).
    static func filter<R: RandomNumberGenerator>(_ rng: inout R, edge: EdgeRule) -> FilterSpec {
        var arguments: [String: ParameterValue] = [:]
        for _ in 0..<Int.random(in: 0...4, using: &rng) { arguments[string(&rng, maxCount: 4)] = value(&rng) }
        var placed = regions(&rng, edge: edge)
        placed.extent = .image
        return FilterSpec(name: string(&rng), arguments: arguments, regions: placed)
    }

    static func pixels<R: RandomNumberGenerator>(_ rng: inout R) -> InlinePixels {
        let r = rect(&rng, maxSize: 5)
        let channels = Bool.random(using: &rng) ? 3 : 4
        return InlinePixels(rect: r, channels: channels, samples: (0..<r.area * channels).map { _ in float(&rng) })
    }

    static func region<R: RandomNumberGenerator>(_ rng: inout R) -> SharedRegion {
        let r = rect(&rng, maxSize: 4096)
        let channels = Bool.random(using: &rng) ? 3 : 4
        return SharedRegion(
            segment: u32(&rng), file: FileIdentity(device: UInt64.random(in: 0...UInt64.max, using: &rng), inode: UInt64.random(in: 0...UInt64.max, using: &rng)), byteOffset: 4 * Int.random(in: 0...(1 << 40), using: &rng), rect: r,
            channels: channels, rowStride: r.width * channels + Int.random(in: 0...64, using: &rng))
    }

    /// Regions with any finite values the protocol allows (none with `grow`).
    static func regions<R: RandomNumberGenerator>(_ rng: inout R, edge: EdgeRule) -> RegionMask {
        guard edge != .grow, Bool.random(using: &rng) else { return RegionMask(invert: Bool.random(using: &rng)) }
        let invert = Bool.random(using: &rng)
        func length(size: Bool) -> RegionLength {
            let value = size ? Double.random(in: 1e-300...1e300, using: &rng) : Double.random(in: -1e300...1e300, using: &rng)
            return Bool.random(using: &rng) ? .pixels(value) : .percent(value)
        }
        return RegionMask(
            regions: (0..<Int.random(in: 1...3, using: &rng)).map { _ in
                Region(
                    shape: Region.Shape.allCases.randomElement(using: &rng)!, x: length(size: false), y: length(size: false),
                    width: length(size: true), height: length(size: true),
                    cornerRadius: Double.random(in: 0...1e9, using: &rng), feather: Double.random(in: 0...1e9, using: &rng))
            },
            invert: invert, extent: invert ? .image : RegionMask.Extent.allCases.randomElement(using: &rng)!)
    }

    static func task<R: RandomNumberGenerator>(_ rng: inout R) -> TaskMessage {
        let edge = EdgeRule.allCases.randomElement(using: &rng)!
        return TaskMessage(
            taskID: u64(&rng), imageID: u64(&rng), attempt: u32(&rng), tile: rect(&rng), image: rect(&rng),
            filters: (0..<Int.random(in: 0...3, using: &rng)).map { _ in filter(&rng, edge: edge) },
            edge: edge, colour: ColourMode.allCases.randomElement(using: &rng)!, regions: regions(&rng, edge: edge),
            pixels: Bool.random(using: &rng)
                ? .shared(source: region(&rng), output: region(&rng)) : .inline(source: pixels(&rng)))
    }

    static func message<R: RandomNumberGenerator>(_ rng: inout R) -> WireMessage {
        switch WireMessageType.allCases.randomElement(using: &rng)! {
        case .hello:
            .hello(Hello(
                workerID: u32(&rng), protocolVersion: UInt16.random(in: 0...UInt16.max, using: &rng),
                pid: [Int32.min, -1, 0, Int32.max, Int32.random(in: 1...99999, using: &rng)].randomElement(using: &rng)!))
        case .ready: .ready
        case .task: .task(task(&rng))
        case .result:
            .result(TaskResult(
                taskID: u64(&rng), checksum: u64(&rng), elapsedNanoseconds: u64(&rng),
                output: Bool.random(using: &rng) ? pixels(&rng) : nil))
        case .failure: .failure(TaskFailure(taskID: u64(&rng), message: string(&rng, maxCount: 40)))
        case .heartbeat: .heartbeat(taskID: Bool.random(using: &rng) ? u64(&rng) : nil)
        case .shutdown: .shutdown
        case .cancel: .cancel(taskID: u64(&rng))
        case .imageTask: .imageTask(imageTask(&rng))
        case .imageResult: .imageResult(imageResult(&rng))
        case .detectionTask: .detectionTask(detectionTask(&rng))
        case .detectionResult: .detectionResult(detectionResult(&rng))
        }
    }

    /// A detection task with any fields the protocol allows (a schedule whose tiles are longer
    /// than their overlap, which holds the cut faces, which are at least the detector's least).
    static func detectionTask<R: RandomNumberGenerator>(_ rng: inout R) -> DetectionTask {
        let least = Int.random(in: 1...64, using: &rng)
        let cut = Int.random(in: least...256, using: &rng)
        let overlap = Int.random(in: cut...1024, using: &rng)
        let schedule = DetectionSchedule(
            wholeSide: Int.random(in: 1...Int(UInt32.max), using: &rng), smallestFace: Int.random(in: 1...1000, using: &rng),
            detectorSmallest: least, tileSide: Int.random(in: (overlap + 1)...Int(UInt32.max), using: &rng), overlap: overlap,
            cutFace: cut)
        return DetectionTask(
            taskID: u64(&rng), imageID: u64(&rng), attempt: u32(&rng),
            input: taskInput(&rng),
            detector: string(&rng), modelFolder: string(&rng), identity: string(&rng, maxCount: 40),
            threads: Int.random(in: 1...Int(UInt32.max), using: &rng), schedule: schedule)
    }

    /// A detection result: boxes a detector may give (finite, with a size, scoring 0...1), or a failure.
    static func detectionResult<R: RandomNumberGenerator>(_ rng: inout R) -> DetectionResult {
        guard Bool.random(using: &rng) else {
            return DetectionResult(taskID: u64(&rng), outcome: .failed(DetectionFailure(
                kind: Bool.random(using: &rng) ? .decode : .detector, code: Bool.random(using: &rng) ? string(&rng) : nil,
                message: string(&rng, maxCount: 40))))
        }
        let boxes = (0..<Int.random(in: 0...5, using: &rng)).map { _ in
            DetectedBox(
                x: Double.random(in: -1e6...1e6, using: &rng), y: Double.random(in: -1e6...1e6, using: &rng),
                width: Double.random(in: 1e-9...1e6, using: &rng), height: Double.random(in: 1e-9...1e6, using: &rng),
                score: [0, 1, Double.random(in: 0...1, using: &rng)].randomElement(using: &rng)!)
        }
        return DetectionResult(
            taskID: u64(&rng),
            outcome: .found(
                width: Int.random(in: 1...Int(UInt32.max), using: &rng), height: Int.random(in: 1...Int(UInt32.max), using: &rng),
                boxes: boxes))
    }

    /// The file a whole-input task reads: any names, any limits.
    static func taskInput<R: RandomNumberGenerator>(_ rng: inout R) -> TaskInput {
        TaskInput(
            path: string(&rng), name: string(&rng), pixelLimit: Int.random(in: 0...Int.max, using: &rng),
            memoryLimit: Int.random(in: 0...Int.max, using: &rng))
    }

    static func optionalSize<R: RandomNumberGenerator>(_ rng: inout R) -> Int? {
        Bool.random(using: &rng) ? Int.random(in: 1...100_000, using: &rng) : nil
    }

    static func imageTask<R: RandomNumberGenerator>(_ rng: inout R) -> ImageTask {
        let sharpen: Double? = Bool.random(using: &rng) ? double(&rng) : nil
        let decode: DecodeRequest = switch Int.random(in: 0..<3, using: &rng) {
        case 0: .whole
        case 1:
            .thumbnail(
                width: optionalSize(&rng), height: optionalSize(&rng), fit: ThumbnailFit.allCases.randomElement(using: &rng)!,
                upscale: Bool.random(using: &rng), crop: ThumbnailCrop.allCases.randomElement(using: &rng)!, sharpen: sharpen)
        default:
            .thumbnails(
                widths: Array(Set((0..<Int.random(in: 1...4, using: &rng)).map { _ in Int.random(in: 1...9000, using: &rng) }))
                    .sorted(),
                upscale: Bool.random(using: &rng), sharpen: sharpen)
        }
        let images = decode.imageCount
        return ImageTask(
            taskID: u64(&rng), imageID: u64(&rng), attempt: u32(&rng),
            input: taskInput(&rng),
            decode: decode,
            outputs: (0..<Int.random(in: 0...3, using: &rng)).map { _ in
                let edge = EdgeRule.allCases.randomElement(using: &rng)!
                return ImageTaskOutput(
                    path: string(&rng), decoded: Int.random(in: 0..<images, using: &rng),
                    filters: (0..<Int.random(in: 0...3, using: &rng)).map { _ in filter(&rng, edge: edge) },
                    edge: edge, colour: ColourMode.allCases.randomElement(using: &rng)!, regions: regions(&rng, edge: edge),
                    tileSize: Int.random(in: 0...4096, using: &rng),
                    encoding: EncodeOptions(
                        quality: Int.random(in: 0...255, using: &rng), lossless: Bool.random(using: &rng),
                        metadata: MetadataPolicy.allCases.randomElement(using: &rng)!,
                        background: SIMD3((0..<3).map { _ in Float.random(in: 0...1, using: &rng) }),
                        bitDepth: Bool.random(using: &rng) ? [8, 16].randomElement(using: &rng)! : nil,
                        progressive: Bool.random(using: &rng),
                        subsampling: ChromaSubsampling.allCases.randomElement(using: &rng)!,
                        effort: Bool.random(using: &rng) ? Int.random(in: 0...9, using: &rng) : nil,
                        optimizeCoding: Bool.random(using: &rng)),
                    verifyDecode: Bool.random(using: &rng))
            })
    }

    static func imageResult<R: RandomNumberGenerator>(_ rng: inout R) -> ImageResult {
        ImageResult(
            taskID: u64(&rng), decodeNanoseconds: u64(&rng),
            outputs: (0..<Int.random(in: 0...3, using: &rng)).map { _ -> ImageOutputResult in
                if Bool.random(using: &rng) {
                    return .encoded(EncodedOutput(
                        bytes: (0..<Int.random(in: 0...64, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) },
                        width: Int(u32(&rng)), height: Int(u32(&rng)), bitDepth: [8, 16].randomElement(using: &rng)!,
                        hasAlpha: Bool.random(using: &rng), checksum: u64(&rng), tiles: Int(u32(&rng)), bands: Int(u32(&rng)),
                        filterNanoseconds: u64(&rng), encodeNanoseconds: u64(&rng)))
                }
                return .failed(ImageOutputFailure(
                    kind: [.decode, .plugin, .verification, .encode, .tooLarge].randomElement(using: &rng)!,
                    code: Bool.random(using: &rng) ? string(&rng, maxCount: 12) : nil,
                    path: Bool.random(using: &rng) ? string(&rng) : nil, message: string(&rng, maxCount: 40)))
            })
    }

    /// A stream of 0 to 8 messages.
    static let messages = Generator<[WireMessage], Shrink.None<[WireMessage]>>(run: { rng in
        (0..<Int.random(in: 0...8, using: &rng)).map { _ in message(&rng) }
    })
}
