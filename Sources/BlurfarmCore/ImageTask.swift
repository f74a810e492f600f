// A whole-image task as data (docs/protocol.md, "Whole images"): one image decoded, filtered
// and encoded by one worker, for images small enough that one core does them best. The
// coordinator asks for one through its `ImageRendering` (a worker pool runs it; the
// coordinator never knows the wire), BlurfarmWire carries it (its payloads' layouts, in the
// order each type's doc comment gives), a worker runs it.

/// Payload of the wire's `imageTask`: one input to decode once and make outputs of.
///
/// Layout: taskID u64, imageID u64, attempt u32, input (``TaskInput``), decode (`DecodeRequest`: u8 tag, then 0 whole: nothing; 1 thumbnail:
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
    /// The file the worker decodes.
    public var input: TaskInput
    /// How the input is decoded.
    public var decode: DecodeRequest
    /// The outputs made from the decode, each answered in ``ImageResult/outputs`` in order.
    public var outputs: [ImageTaskOutput]

    /// A task; see the properties.
    public init(
        taskID: UInt64, imageID: UInt64, attempt: UInt32, input: TaskInput, decode: DecodeRequest, outputs: [ImageTaskOutput]
    ) {
        self.taskID = taskID
        self.imageID = imageID
        self.attempt = attempt
        self.input = input
        self.decode = decode
        self.outputs = outputs
    }
}

/// The file a whole-input task reads (an image task's, a detection task's), as the worker opens
/// it: the coordinator opens it beneath the job's roots and keeps it open while the task is out.
///
/// Layout: path string, name string, pixelLimit u64, memoryLimit u64.
public struct TaskInput: Equatable, Sendable {
    /// What the worker opens: the coordinator's open descriptor of the input,
    /// `/proc/<coordinator pid>/fd/<n>` (the worker never resolves the job's paths).
    public var path: String
    /// The input as the job names it: the worker's messages say this, never ``path``.
    public var name: String
    /// The largest `width * height` decoded (checked on the header first).
    public var pixelLimit: Int
    /// The most bytes a decode may allocate.
    public var memoryLimit: Int

    public init(path: String, name: String, pixelLimit: Int, memoryLimit: Int) {
        (self.path, self.name, self.pixelLimit, self.memoryLimit) = (path, name, pixelLimit, memoryLimit)
    }
}

/// One output of an image task.
///
/// Layout: path string, decoded u32, filters (as in the wire's `TaskMessage`), edge u8, colour u8,
/// regions (as in the wire's `TaskMessage`), tileSize u32, encoding (`EncodeOptions`: quality u8, lossless bool, metadata
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

/// Payload of the wire's `imageResult`: an image task done, one answer per output.
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

