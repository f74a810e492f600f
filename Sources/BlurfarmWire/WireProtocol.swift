// The blurfarm wire protocol: every message the coordinator and its workers exchange.
//
// Messages travel in frames over a byte stream (a pipe to a local worker, later a socket to a
// remote one). All integers are little-endian.
//
//   offset     size  field
//   0          4     magic: the ASCII bytes "BFW1" (0x42 0x46 0x57 0x31)
//   4          2     protocol version, u16 (``WireProtocol/version``, 10)
//   6          2     message type, u16 (``WireMessageType``)
//   8          4     payload length N, u32
//   12         N     payload (the message's fields, in the order its doc comment gives)
//   12 + N     4     checksum of bytes 0 ..< 12 + N (header and payload), u32
//
// The checksum is the low 32 bits of XXH3-64 (xxHash's `XXH3_64bits`, seed 0: ``FrameChecksum``);
// of no bytes it is 0x38D394C2 (XXH3-64 0x2D06800538D394C2). It covers the header too, so a
// corrupted type or length that still looks valid is caught.
//
// A whole frame (header, payload and checksum) is at most ``WireProtocol/maximumFrameSize``
// bytes. A decoder checks the header before it takes the payload: magic, then version, then
// type, then length, so a frame that is too large is refused from its 12 header bytes. Then it
// waits for the whole frame, checks the checksum, and decodes the payload, which must be used up
// exactly.
//
// Payload fields use these encodings (docs/protocol.md has the same tables):
//
//   u8, u16, u32, u64   fixed width, little-endian
//   i32, i64            two's complement, little-endian
//   bool                u8: 0 false, 1 true (anything else is malformed)
//   f64                 the u64 bit pattern of a Double (NaN payloads and -0 survive)
//   string              u32 byte count, then that many bytes of UTF-8 (validated)
//   optional T          u8 tag: 0 absent, 1 present followed by T
//   list of T           u32 count, then the elements
//   rect                x i64, y i64, width i64, height i64 (image coordinates, y down; sizes >= 0,
//                       and x + width, y + height must not overflow an i64)
//   pixels              rect, channels u8 (3 or 4), then width × height × channels Float32 bit
//                       patterns as u32, rows top to bottom, pixels left to right, channels in order
//
// Versioning: a peer speaks exactly one version. A frame of another version is refused with an
// error that names both (``WireError/unsupportedVersion(received:supported:)``), and the stream is
// closed: there is no negotiation. A change to any layout here is a new version.
//
// Conversation (every message means one thing):
//
//   worker → coordinator: hello (once, first), ready (done with a task: one more may come),
//                         heartbeat, result (tile task done), failure (task's filter failed),
//                         imageResult (image task done: its outputs encoded, or why not),
//                         detectionResult (detection task done: the photo's boxes, or why not)
//   coordinator → worker: task (one tile), imageTask (one whole image: decode, filter,
//                         encode; ImageTask.swift), detectionTask (one photo searched with a
//                         detector; DetectionTask.swift), cancel, shutdown
//
// A task is any of the three kinds: a worker holds at most two of any, and answers a tile
// task with `result` or `failure`, an image task with `imageResult` (whose outputs each say
// whether they were made: a bad input is an answer, not a failure of the task), a detection
// task with `detectionResult` (a photo that cannot be decoded, or a detector that fails, is
// an answer too).
//
// A worker says `ready` after `hello` when it is set up, after each `result` or `failure`, and
// after it drops a cancelled task (for which it sends no result). It holds at most two tasks:
// the coordinator may send the next while one runs, and never a third before a `ready`; the
// worker runs them in the order they came. A `cancel` naming a task the worker holds drops
// its reply (a waiting task is not run); a `cancel` of another task is ignored, with no reply.

import BlurfarmCore

/// Constants of the frame format.
public enum WireProtocol {
    /// The four bytes every frame starts with: ASCII "BFW1".
    public static let magic: [UInt8] = [0x42, 0x46, 0x57, 0x31]

    /// The protocol version this build speaks and accepts; any other is refused. Version 2
    /// added the sample format of shared regions and the background of shared tasks; version 3
    /// lets a worker hold two tasks, the second sent before the first's `ready`; version 4
    /// added whole-image tasks (`imageTask`, `imageResult`); version 5 the regions of tile and
    /// image tasks (where the filters apply); version 6 an image task's metadata policy,
    /// effort and optimized coding; version 7 the regions' extent (`output: region`) and each filter's own regions;
    /// version 8 the bands an image task's output was streamed in (``EncodedOutput/bands``);
    /// version 9 the frame checksum XXH3 (CRC-32 before: a whole-image task's encoded bytes are
    /// checksummed by the worker and the coordinator, 1.2% of a batch's processor time);
    /// version 10 detection tasks (`detectionTask`, `detectionResult`); version 11 the file (device,
    /// inode) of a shared region's segment, which the worker checks.
    public static let version: UInt16 = 11

    /// Tasks a worker holds at once, at most: one running and one waiting, sent before the
    /// first's `ready` so that the worker goes on at once instead of waiting for the
    /// coordinator's answer to it. A third is bad input.
    public static let tasksHeld = 2

    /// Bytes before the payload: magic (4), version (2), type (2), payload length (4).
    public static let headerSize = 12

    /// Bytes after the payload: the checksum (``FrameChecksum``).
    public static let checksumSize = 4

    /// Pixel bytes a frame can carry inline: a 2048 × 2048 RGBA `Float32` region (64 MiB).
    public static let inlinePixelCapacity = 2048 * 2048 * 4 * MemoryLayout<Float>.size

    /// The largest frame, header and checksum included, that a peer sends or accepts: the
    /// inline pixel capacity (64 MiB) plus 1 MiB for the rest of a task (chain, rectangles).
    ///
    /// A policy constant: it bounds the memory one frame can make a decoder hold, and it
    /// bounds what an inline task can carry. The coordinator sizes a remote worker's tiles so
    /// that the source region (tile grown by the halo) fits: for example tiles of 1792 pixels
    /// with halos up to 128 pixels, in RGBA. Local workers pass pixels in shared memory, so
    /// their frames are small whatever the tile.
    public static let maximumFrameSize = inlinePixelCapacity + (1 << 20)
}

/// The type code in a frame's header (u16): which message the payload holds.
public enum WireMessageType: UInt16, CaseIterable, Sendable, CustomStringConvertible {
    /// ``WireMessage/hello(_:)``
    case hello = 1
    /// ``WireMessage/ready``
    case ready = 2
    /// ``WireMessage/task(_:)``
    case task = 3
    /// ``WireMessage/result(_:)``
    case result = 4
    /// ``WireMessage/failure(_:)``
    case failure = 5
    /// ``WireMessage/heartbeat(taskID:)``
    case heartbeat = 6
    /// ``WireMessage/shutdown``
    case shutdown = 7
    /// ``WireMessage/cancel(taskID:)``
    case cancel = 8
    /// ``WireMessage/imageTask(_:)``
    case imageTask = 9
    /// ``WireMessage/imageResult(_:)``
    case imageResult = 10
    /// ``WireMessage/detectionTask(_:)``
    case detectionTask = 11
    /// ``WireMessage/detectionResult(_:)``
    case detectionResult = 12

    /// The message's name, e.g. `task`.
    public var description: String {
        switch self {
        case .hello: "hello"
        case .ready: "ready"
        case .task: "task"
        case .result: "result"
        case .failure: "failure"
        case .heartbeat: "heartbeat"
        case .shutdown: "shutdown"
        case .cancel: "cancel"
        case .imageTask: "imageTask"
        case .imageResult: "imageResult"
        case .detectionTask: "detectionTask"
        case .detectionResult: "detectionResult"
        }
    }
}

/// One message of the protocol. Each case's comment gives its direction, meaning and payload.
public enum WireMessage: Equatable, Sendable {
    /// Worker → coordinator, the first message a worker sends: who it is.
    /// Type 1. Payload: ``Hello``.
    case hello(Hello)

    /// Worker → coordinator: the worker is idle and takes one task. Sent after `hello` once the
    /// worker is set up, after each `result` or `failure`, and after abandoning a cancelled task.
    /// Type 2. Payload: empty.
    case ready

    /// Coordinator → worker: render one tile. Sent only to a worker that said `ready`.
    /// Type 3. Payload: ``TaskMessage``.
    case task(TaskMessage)

    /// Worker → coordinator: a task is done; its tile's interior is written (in the shared
    /// output region) or carried here (inline tasks). Type 4. Payload: ``TaskResult``.
    case result(TaskResult)

    /// Worker → coordinator: a filter of the task failed with an error (not a crash: the worker
    /// lives on and says `ready` next). Type 5. Payload: ``TaskFailure``.
    case failure(TaskFailure)

    /// Worker → coordinator: the worker is alive, working on `taskID` (nil: idle).
    /// Type 6. Payload: optional u64.
    case heartbeat(taskID: UInt64?)

    /// Coordinator → worker: exit now with status 0, abandoning any task, sending nothing more.
    /// Type 7. Payload: empty.
    case shutdown

    /// Coordinator → worker: stop task `taskID` and send no result for it (then `ready`). A
    /// worker not running that task ignores the message. Type 8. Payload: u64.
    case cancel(taskID: UInt64)

    /// Coordinator → worker: decode one input, render each output's chain, encode each
    /// output in memory. Sent only to a worker that said `ready`, as a `task` is; cancelled
    /// the same way. Type 9. Payload: ``ImageTask``.
    case imageTask(ImageTask)

    /// Worker → coordinator: an image task is done; each output's encoded bytes, or why it
    /// was not made. Type 10. Payload: ``ImageResult``.
    case imageResult(ImageResult)

    /// Coordinator → worker: decode one photo as shown and search it with a detector, as the
    /// task's schedule says. Sent only to a worker that said `ready`, as a `task` is; cancelled
    /// the same way. Type 11. Payload: ``DetectionTask``.
    case detectionTask(DetectionTask)

    /// Worker → coordinator: a detection task is done; the photo's size as shown and its
    /// boxes, or why there are none. Type 12. Payload: ``DetectionResult``.
    case detectionResult(DetectionResult)

    /// The type code written in the frame's header.
    public var type: WireMessageType {
        switch self {
        case .hello: .hello
        case .ready: .ready
        case .task: .task
        case .result: .result
        case .failure: .failure
        case .heartbeat: .heartbeat
        case .shutdown: .shutdown
        case .cancel: .cancel
        case .imageTask: .imageTask
        case .imageResult: .imageResult
        case .detectionTask: .detectionTask
        case .detectionResult: .detectionResult
        }
    }
}

/// Payload of ``WireMessage/hello(_:)``: a worker introduces itself.
///
/// Layout: workerID u32, protocolVersion u16, pid i32.
public struct Hello: Equatable, Sendable {
    /// The id the coordinator gave the worker when it started it (on its command line).
    public var workerID: UInt32
    /// The protocol version the worker speaks; the coordinator refuses any but its own.
    public var protocolVersion: UInt16
    /// The worker's process id on its host.
    public var pid: Int32

    /// A hello; `protocolVersion` defaults to this build's.
    public init(workerID: UInt32, protocolVersion: UInt16 = WireProtocol.version, pid: Int32) {
        self.workerID = workerID
        self.protocolVersion = protocolVersion
        self.pid = pid
    }
}

/// Payload of ``WireMessage/task(_:)``: one tile to render.
///
/// Layout: taskID u64, imageID u64, attempt u32, tile rect, image rect, filters (list of
/// filter: name string, arguments as a list of (name string, value)), edge u8, colour u8,
/// regions (``RegionMask``: ``ByteWriter/regions(_:)``), pixels (``TaskPixels``).
///
/// A filter's arguments go in strictly increasing byte order of their UTF-8 names (one
/// encoding per chain; duplicates are impossible), and no two names may be canonically
/// equivalent Unicode (Swift compares strings that way: `e` + U+0301 equals `é`). A value is a u8 tag and its data: 0 number
/// (f64), 1 integer (i64), 2 boolean (bool), 3 string. Edge: 0 clamp, 1 mirror, 2 transparent,
/// 3 grow. Colour: 0 gamma, 1 linear.
public struct TaskMessage: Equatable, Sendable {
    /// The coordinator's id of this task, unique within a run; replies name it.
    public var taskID: UInt64
    /// The coordinator's id of the image the tile belongs to.
    public var imageID: UInt64
    /// 1 for the first try of the tile, 2 for the first retry, and so on.
    public var attempt: UInt32
    /// The output rectangle to render: the tile's interior, in output image coordinates.
    public var tile: Rect
    /// The source image's extent, `(0, 0, width, height)`: where the edge rule starts.
    public var image: Rect
    /// The filters, applied in order, each with all its arguments resolved.
    public var filters: [FilterSpec]
    /// What the filters see beyond the image's edges.
    public var edge: EdgeRule
    /// Which values the filters average.
    public var colour: ColourMode
    /// Where the filters apply: the tile is blended with its source by this mask
    /// (everywhere when it has no regions).
    public var regions: RegionMask
    /// Where the source pixels are read and the tile's pixels written.
    public var pixels: TaskPixels

    /// A task; see the properties.
    public init(
        taskID: UInt64, imageID: UInt64, attempt: UInt32, tile: Rect, image: Rect, filters: [FilterSpec],
        edge: EdgeRule, colour: ColourMode, regions: RegionMask = .everywhere, pixels: TaskPixels
    ) {
        self.taskID = taskID
        self.imageID = imageID
        self.attempt = attempt
        self.tile = tile
        self.image = image
        self.filters = filters
        self.edge = edge
        self.colour = colour
        self.regions = regions
        self.pixels = pixels
    }
}

/// Where a task's pixels are. Layout: u8 tag, then 0 shared: source region, output region,
/// background (3 × f64, each a `Float` in 0...1); 1 inline: source pixels.
public enum TaskPixels: Equatable, Sendable {
    /// In memory the worker shares with the coordinator (local workers): the worker reads the
    /// source region and writes the tile's interior into the output region; no pixel crosses
    /// the pipe. Regions of file samples (a streamed image's bands) are converted where the
    /// tile is rendered: the source's samples to premultiplied `Float32` (`v / 255` or
    /// `v / 65535`, colour times alpha), the tile's floats to the output's samples as the
    /// encoder makes them (rounded to nearest; straight alpha with 4 bands; with 3 bands a
    /// translucent pixel composited over `background`, an RGB colour in 0...1).
    case shared(source: SharedRegion, output: SharedRegion, background: SIMD3<Float> = .zero)
    /// In the message (remote workers): the source pixels come here and the tile's pixels go
    /// back in the ``TaskResult``.
    case inline(source: InlinePixels)
}

/// A rectangle of pixels in a shared memory segment.
///
/// Layout: segment u32, file (``FileIdentity``: device u64, inode u64), byteOffset u64, rect,
/// channels u8, format u8 (0 `Float32`, 1 8-bit, 2 16-bit samples: ``SampleFormat``), rowStride u64.
///
/// The pixel at `(rect.x + i, rect.y + j)` starts at byte
/// `byteOffset + (j * rowStride + i * channels) * size` of the segment, where size is the
/// format's bytes a sample (4, 1 or 2); channels are interleaved: premultiplied RGBA or opaque
/// RGB `Float32`s, or a file's samples (RGBA with straight alpha, or RGB). The region spans
/// ``byteRange``, which the receiver checks against the segment's size.
public struct SharedRegion: Equatable, Sendable {
    /// The segment's id: a number the coordinator assigned when it passed the segment's
    /// file descriptor (memfd) to the worker.
    public let segment: UInt32
    /// The device and inode of the file the segment is, as the coordinator's `fstat` of it says.
    /// The worker refuses a task whose segment id names another file (a descriptor number the
    /// coordinator's process closed and reused while a task still named it): it fails closed
    /// instead of reading or writing another file's bytes.
    public let file: FileIdentity
    /// Bytes from the start of the segment to the first sample of the rectangle's origin
    /// pixel; a multiple of the sample's size.
    public let byteOffset: Int
    /// The pixels the region holds, in image coordinates.
    public let rect: Rect
    /// Samples per pixel: 3 or 4.
    public let channels: Int
    /// How the samples are stored.
    public let format: SampleFormat
    /// Samples from one row to the next, at least `rect.width * channels`.
    public let rowStride: Int

    /// A region; traps unless `channels` is 3 or 4, `byteOffset` is a non-negative multiple
    /// of the sample's size, `rowStride >= rect.width * channels`, and ``byteRange`` fits in
    /// an `Int`.
    public init(
        segment: UInt32, file: FileIdentity, byteOffset: Int, rect: Rect, channels: Int, format: SampleFormat = .float32,
        rowStride: Int
    ) {
        precondition(
            Self.problem(byteOffset: byteOffset, rect: rect, channels: channels, format: format, rowStride: rowStride) == nil,
            "invalid shared region")
        self.segment = segment
        self.file = file
        self.byteOffset = byteOffset
        self.rect = rect
        self.channels = channels
        self.format = format
        self.rowStride = rowStride
    }

    /// The bytes of the segment the region spans (empty at `byteOffset` for an empty rectangle).
    public var byteRange: Range<Int> {
        byteOffset..<(byteOffset + Self.spannedFloats(rect: rect, channels: channels, rowStride: rowStride)! * format.byteSize)
    }

    /// Samples from the region's first to its last, inclusive; nil when that overflows.
    static func spannedFloats(rect: Rect, channels: Int, rowStride: Int) -> Int? {
        if rect.isEmpty { return 0 }
        let (rows, o1) = rowStride.multipliedReportingOverflow(by: rect.height - 1)
        let (total, o2) = rows.addingReportingOverflow(rect.width * channels)
        return o1 || o2 ? nil : total
    }

    /// Why these fields make no region, or nil when they do.
    static func problem(byteOffset: Int, rect: Rect, channels: Int, format: SampleFormat = .float32, rowStride: Int) -> String? {
        guard channels == 3 || channels == 4 else { return "channels must be 3 or 4, not \(channels)" }
        guard byteOffset >= 0, byteOffset % format.byteSize == 0 else {
            return "byte offset \(byteOffset) is not a non-negative multiple of \(format.byteSize)"
        }
        let (rowFloats, o) = rect.width.multipliedReportingOverflow(by: channels)
        guard !o, rowStride >= rowFloats else { return "row stride \(rowStride) is shorter than a row" }
        guard let floats = spannedFloats(rect: rect, channels: channels, rowStride: rowStride) else {
            return "the region's size overflows"
        }
        let (bytes, o1) = floats.multipliedReportingOverflow(by: format.byteSize)
        let (_, o2) = byteOffset.addingReportingOverflow(bytes)
        return o1 || o2 ? "the region's end overflows" : nil
    }
}

/// Pixels carried in a message: a rectangle's `Float32`s, tightly packed.
///
/// Layout: rect, channels u8, then `rect.area * channels` floats as u32 bit patterns, rows top
/// to bottom. Two values are equal when their rectangles and channels are and their floats
/// have the same bits (so NaNs with equal payloads are equal, and 0 differs from -0).
public struct InlinePixels: Equatable, Sendable {
    /// The pixels' rectangle, in image coordinates.
    public let rect: Rect
    /// Floats per pixel: 3 (opaque RGB) or 4 (premultiplied RGBA).
    public let channels: Int
    /// `rect.area * channels` floats: rows top to bottom, pixels left to right, channels in order.
    public let samples: [Float]

    /// Pixels; traps unless `channels` is 3 or 4 and `samples` holds `rect.area * channels` floats.
    public init(rect: Rect, channels: Int, samples: [Float]) {
        precondition(channels == 3 || channels == 4, "inline pixels have 3 or 4 channels")
        precondition(samples.count == rect.area * channels, "inline pixels need rect.area × channels floats")
        self.rect = rect
        self.channels = channels
        self.samples = samples
    }

    /// A copy of all of `buffer`'s pixels.
    public init(_ buffer: PixelBuffer) {
        let rowFloats = buffer.rect.width * buffer.channels
        var samples: [Float] = []
        samples.reserveCapacity(rowFloats * buffer.rect.height)
        buffer.withUnsafePixels { p in
            for row in 0..<buffer.rect.height {
                samples.append(contentsOf: UnsafeBufferPointer(start: p + row * buffer.rowStride, count: rowFloats))
            }
        }
        self.init(rect: buffer.rect, channels: buffer.channels, samples: samples)
    }

    /// A new buffer holding a copy of these pixels.
    public func makeBuffer() -> PixelBuffer {
        let buffer = PixelBuffer.uninitialized(rect, channels: channels)
        buffer.withUnsafePixels { p in
            samples.withUnsafeBufferPointer { s in
                if let base = s.baseAddress { p.update(from: base, count: s.count) }
            }
        }
        return buffer
    }

    /// The pixels' ``PixelChecksum``.
    public var checksum: UInt64 { PixelChecksum.of(makeBuffer(), in: rect) }

    /// Equal rectangles and channels, and bit-identical samples.
    public static func == (a: InlinePixels, b: InlinePixels) -> Bool {
        a.rect == b.rect && a.channels == b.channels && a.samples.count == b.samples.count
            && zip(a.samples, b.samples).allSatisfy { $0.bitPattern == $1.bitPattern }
    }
}

/// Payload of ``WireMessage/result(_:)``: a task finished.
///
/// Layout: taskID u64, checksum u64, elapsedNanoseconds u64, output (optional pixels).
public struct TaskResult: Equatable, Sendable {
    /// The task this answers.
    public var taskID: UInt64
    /// The ``PixelChecksum`` of the tile's interior as the worker wrote it; the coordinator
    /// computes it again over the stitched output and compares.
    public var checksum: UInt64
    /// Wall time the worker spent on the task, in nanoseconds.
    public var elapsedNanoseconds: UInt64
    /// The tile's pixels, for inline tasks; nil for shared ones (the pixels are in the
    /// output region).
    public var output: InlinePixels?

    /// A result; see the properties.
    public init(taskID: UInt64, checksum: UInt64, elapsedNanoseconds: UInt64, output: InlinePixels? = nil) {
        self.taskID = taskID
        self.checksum = checksum
        self.elapsedNanoseconds = elapsedNanoseconds
        self.output = output
    }
}

/// Payload of ``WireMessage/failure(_:)``: a task's filter reported an error.
///
/// Layout: taskID u64, message string.
public struct TaskFailure: Equatable, Sendable {
    /// The task this answers.
    public var taskID: UInt64
    /// What went wrong, for the report (e.g. a plugin's error message).
    public var message: String

    /// A failure; see the properties.
    public init(taskID: UInt64, message: String) {
        self.taskID = taskID
        self.message = message
    }
}
