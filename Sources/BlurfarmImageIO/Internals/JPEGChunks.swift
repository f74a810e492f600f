import BlurfarmCore
import Dispatch
import Foundation
import Synchronization

/// A large JPEG encoded in horizontal chunks at once, on as many cores as there are, and
/// spliced into one baseline file, which no libvips release does.
///
/// Each chunk is a whole number of MCU rows (16 pixel rows when the chroma is halved, else 8),
/// encoded on its own (``JPEGEncoder``: libvips's `jpegsave` bytes) with the same settings and a restart interval of
/// exactly the chunk's MCUs, so its entropy-coded data holds no restart marker, starts with
/// the DC predictions at zero and ends on a byte boundary: what a decoder expects after a
/// restart marker. The file is the first chunk's header (its metadata, tables and scan
/// header; the frame's height made the image's, the restart interval in its DRI segment),
/// then each chunk's entropy-coded data, a restart marker between each two (`RST0`…`RST7` in
/// turn), then `EOI`. libjpeg's encoder reads no row outside the MCU row it codes (the colour
/// conversion is per pixel, the chroma averaging is within the MCU, the last MCU row is padded
/// from the image's own last row as a serial encode pads it), so every quantised coefficient is
/// the serial encode's and the file decodes to the same pixels; the restart markers add a
/// few bytes a chunk (`JPEGChunksTests`).
///
/// The file is byte for byte what one serial encode with the same restart interval writes
/// (after a restart marker libjpeg's encoder starts afresh, as a new encoder does), so whether
/// the chunks are encoded at once or the image in one go changes nothing but the time: the
/// bytes depend only on the image's size and settings (``plan(width:height:format:options:bitDepth:)``),
/// never on the process or the cores. With fewer than ``parallelCores`` cores the decode,
/// the filters and one encoder keep every core busy on an image of a few megapixels, and the
/// chunks' own costs (an encoder each, the splice) only add time: there such an image is
/// encoded in one go, with the plan's restart markers. A very large one
/// (``parallelPixelsOnTwoCores``) is chunked from 2 cores: its one encoder would otherwise
/// be the longest of the pipeline's stages, taking turns with the filters on the thread that
/// writes.
enum JPEGChunks {
    /// Images of fewer pixels are encoded whole: below it a chunk's fixed costs outweigh the
    /// cores it could use (4K, 8.3 MP, is chunked; 1080p is not).
    static let minimumPixels = 8_000_000
    /// Pixel rows a chunk has at most: 16 MCU rows of halved chroma.
    static let maximumRows = 256
    /// The cores from which the chunks are encoded at once.
    static let parallelCores = 4

    /// The cores this process's encoders may use at once (``ImageWriter/encoderCores``).
    static let cores = Atomic<Int>(ProcessInfo.processInfo.activeProcessorCount)

    /// From 2 cores, images of at least this many pixels encode their chunks at once. Measured
    /// on 2 cores (`apply`, σ8, against one encoder): 254 MP 0.85× wall, 20 MP 0.94×, 8.3 MP
    /// 0.98× (σ2: 1.08×).
    static let parallelPixelsOnTwoCores = 16_000_000

    /// Whether an encoder of `cores` cores (this process's, ``ImageWriter/encoderCores``)
    /// encodes the chunks of a plan for an image of `pixels` pixels at once (else one serial
    /// encode with its restart interval: the same bytes).
    static func encodesInParallel(pixels: Int, cores: Int = cores.load(ordering: .relaxed)) -> Bool {
        cores >= parallelCores || (cores >= 2 && pixels >= parallelPixelsOnTwoCores)
    }

    /// How an image is cut: `rows` pixel rows a chunk (the last has what is left), a restart
    /// interval of `interval` MCUs (one chunk's).
    struct Plan: Equatable {
        let rows: Int
        let interval: Int
    }

    /// The chunks of a `width` × `height` image encoded as `format` at `bitDepth` with
    /// `options`, or nil when it is encoded whole: not a JPEG, progressive, with Huffman tables
    /// of its own (one set for the file), keeping all its metadata (libvips's EXIF block
    /// would give the first chunk's height), fewer than ``minimumPixels``, a single chunk, or
    /// so wide that one MCU row passes the restart interval's 16 bits.
    static func plan(width: Int, height: Int, format: ImageFormat, options: EncodeOptions, bitDepth: Int) -> Plan? {
        // Only what libjpeg encodes here (JPEG carries no alpha: 3 channels).
        guard JPEGEncoder.canEncode(format: format, bitDepth: bitDepth, channels: 3, options: options),
            !options.progressive, !options.optimizeCoding, width * height >= minimumPixels
        else { return nil }
        let mcu = halvesChroma(options) ? 16 : 8
        let across = (width + mcu - 1) / mcu
        let mcuRows = min(maximumRows / mcu, Int(UInt16.max) / across)
        guard mcuRows >= 1, height > mcuRows * mcu else { return nil }
        return Plan(rows: mcuRows * mcu, interval: mcuRows * across)
    }

    /// Whether libvips 8.14's `jpegsave` halves the chroma (4:2:0, 16 × 16 MCUs): when asked,
    /// and by default below quality 90 (its `subsample_mode` auto).
    static func halvesChroma(_ options: EncodeOptions) -> Bool {
        switch options.subsampling {
        case .halved: true
        case .full: false
        case .auto: options.quality < 90
        }
    }

    /// One chunk encoded: `rows` rows of `width` packed 8-bit RGB pixels at `samples` (read
    /// in place, not copied); the first carries the profile of `metadata` (as a whole image's
    /// file does).
    static func encode(
        chunk samples: UnsafeRawBufferPointer, width: Int, rows: Int, first: Bool, metadata: ImageMetadata?,
        options: EncodeOptions, plan: Plan
    ) throws(LibvipsFailure) -> [UInt8] {
        // A plan keeps no more metadata than the profile: libjpeg writes libvips's bytes.
        try JPEGEncoder.encode(
            samples, width: width, height: rows, options: options, restartInterval: plan.interval,
            metadata: first ? metadata : nil)
    }

    /// The file of a whole image: `samples` packed 8-bit RGB, `width` × `height`, its chunks
    /// encoded at once (as many as the machine has cores) and spliced.
    static func encode(
        _ samples: UnsafeRawBufferPointer, width: Int, height: Int, metadata: ImageMetadata?, options: EncodeOptions,
        plan: Plan
    ) throws(LibvipsFailure) -> [UInt8] {
        let count = (height + plan.rows - 1) / plan.rows
        let parts = Mutex([Result<[UInt8], LibvipsFailure>?](repeating: nil, count: count))
        let source = SharedBytes(bytes: samples)
        DispatchQueue.concurrentPerform(iterations: count) { index in
            let top = index * plan.rows, rows = min(plan.rows, height - top)
            let chunk = UnsafeRawBufferPointer(rebasing: source.bytes[(top * width * 3)..<((top + rows) * width * 3)])
            let part = Result { () throws(LibvipsFailure) in
                try encode(chunk: chunk, width: width, rows: rows, first: index == 0, metadata: metadata, options: options, plan: plan)
            }
            parts.withLock { $0[index] = part }
        }
        var encoded: [[UInt8]] = []
        for part in parts.withLock({ $0 }) { encoded.append(try part!.get()) }
        return try splice(encoded, height: height, plan: plan)
    }

    /// Pixels read by every chunk's encoder at once, never written meanwhile.
    private struct SharedBytes: @unchecked Sendable {
        let bytes: UnsafeRawBufferPointer
    }

    /// The file of the chunks `parts` (in order, each a JPEG of ``Plan/rows`` rows but the
    /// last) of an image `height` rows high.
    ///
    /// - Throws: `LibvipsFailure` when a part is not the JPEG the plan makes (no frame or scan
    ///   header, a restart interval or MCU size other than the plan's, a restart marker inside):
    ///   an encoder that did not do what was asked.
    static func splice(_ parts: [[UInt8]], height: Int, plan: Plan) throws(LibvipsFailure) -> [UInt8] {
        func failure(_ what: String) -> LibvipsFailure { LibvipsFailure(message: "the JPEG chunks cannot be spliced: \(what)") }
        var header: [UInt8] = []
        var out: [UInt8] = []
        for (index, part) in parts.enumerated() {
            guard let layout = Layout(part) else { throw failure("chunk \(index) is not a baseline JPEG") }
            guard layout.restartInterval == plan.interval else {
                throw failure("chunk \(index) restarts every \(layout.restartInterval) MCUs, not \(plan.interval)")
            }
            if index == 0 {
                guard plan.rows % layout.mcuHeight == 0, layout.width > 0,
                    plan.interval == plan.rows / layout.mcuHeight * ((layout.width + layout.mcuWidth - 1) / layout.mcuWidth)
                else { throw failure("its MCUs are \(layout.mcuWidth)x\(layout.mcuHeight), not the plan's") }
                header = Array(part[..<layout.scanStart])
                header[layout.frame + 5] = UInt8(height >> 8)
                header[layout.frame + 6] = UInt8(height & 0xFF)
                out.reserveCapacity(parts.reduce(0) { $0 + $1.count })
                out += header
            } else {
                out += [0xFF, 0xD0 + UInt8((index - 1) % 8)]
            }
            let data = part[layout.scanStart..<(part.count - 2)]
            guard !containsRestartMarker(data) else { throw failure("chunk \(index) has a restart marker inside") }
            out += data
        }
        out += [0xFF, 0xD9]
        return out
    }

    /// Whether entropy-coded `data` holds a restart marker (`FF D0`…`FF D7`).
    private static func containsRestartMarker(_ data: ArraySlice<UInt8>) -> Bool {
        data.withUnsafeBufferPointer { bytes in
            var i = 0
            while i + 1 < bytes.count {
                if bytes[i] == 0xFF, (0xD0...0xD7).contains(bytes[i + 1]) { return true }
                i += 1
            }
            return false
        }
    }

    /// Where a baseline JPEG's frame and scan are: the marker segments before the scan, walked
    /// by their lengths.
    private struct Layout {
        /// The offset of the frame header's marker (`FF C0`).
        var frame = -1
        /// The first byte after the scan header: the entropy-coded data.
        var scanStart = -1
        var width = 0
        var mcuWidth = 8, mcuHeight = 8
        var restartInterval = 0

        /// Nil when `bytes` is not a baseline JPEG with one scan ending in `EOI`.
        init?(_ bytes: [UInt8]) {
            guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8, bytes[bytes.count - 2] == 0xFF,
                bytes[bytes.count - 1] == 0xD9
            else { return nil }
            var at = 2
            while at + 4 <= bytes.count, bytes[at] == 0xFF {
                let marker = bytes[at + 1]
                let length = Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
                guard length >= 2, at + 2 + length <= bytes.count else { return nil }
                let segment = bytes[(at + 4)..<(at + 2 + length)]
                switch marker {
                case 0xC0:
                    // P, Y (2), X (2), Nf, then per component: id, Hi:Vi, Tq.
                    guard segment.count >= 6 else { return nil }
                    let s = segment.startIndex
                    frame = at
                    width = Int(segment[s + 3]) << 8 | Int(segment[s + 4])
                    let components = Int(segment[s + 5])
                    guard segment.count >= 6 + 3 * components else { return nil }
                    let factors = (0..<components).map { segment[s + 6 + 3 * $0 + 1] }
                    mcuWidth = 8 * Int(factors.map { $0 >> 4 }.max() ?? 1)
                    mcuHeight = 8 * Int(factors.map { $0 & 0x0F }.max() ?? 1)
                case 0xC1...0xC3, 0xC5...0xC7, 0xC9...0xCB, 0xCD...0xCF:
                    return nil  // not baseline
                case 0xDD:
                    guard segment.count >= 2 else { return nil }
                    restartInterval = Int(segment[segment.startIndex]) << 8 | Int(segment[segment.startIndex + 1])
                case 0xDA:
                    guard frame >= 0 else { return nil }
                    scanStart = at + 2 + length
                    return
                default:
                    break
                }
                at += 2 + length
            }
            return nil
        }
    }
}

/// The chunks of one image encoded as its rows come (``BandWriter``'s large JPEGs): each
/// chunk goes to an encoder on the system's thread pool as soon as its rows are in, at most
/// one a core at once (each holds its chunk's rows until it is encoded), and ``finish()``
/// splices them. One thread at a time appends.
final class JPEGChunkQueue: @unchecked Sendable {
    private let width: Int, height: Int, plan: JPEGChunks.Plan
    private let metadata: ImageMetadata?, options: EncodeOptions
    /// The rows of the chunk being filled, and how many it has.
    private var buffer: [UInt8] = []
    private var filled = 0
    private var submitted = 0
    private let parts = Mutex<[Int: Result<[UInt8], LibvipsFailure>]>([:])
    private let running = DispatchGroup()
    private let slots: DispatchSemaphore

    init(width: Int, height: Int, plan: JPEGChunks.Plan, metadata: ImageMetadata?, options: EncodeOptions) {
        (self.width, self.height, self.plan, self.metadata, self.options) = (width, height, plan, metadata, options)
        slots = DispatchSemaphore(value: max(1, JPEGChunks.cores.load(ordering: .relaxed)))
    }

    /// Takes `count` rows of packed 8-bit RGB at `rows` (copied: the caller may reuse them).
    func append(_ rows: UnsafeRawBufferPointer, count: Int) {
        let rowBytes = width * 3
        var done = 0
        while done < count {
            if buffer.isEmpty { buffer.reserveCapacity(plan.rows * rowBytes) }
            let take = min(count - done, plan.rows - filled)
            buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: rows[(done * rowBytes)..<((done + take) * rowBytes)]))
            filled += take
            done += take
            if filled == plan.rows { submit() }
        }
    }

    /// Encodes the chunk filled so far on the pool, once a slot is free.
    private func submit() {
        let (chunk, rows, index) = (buffer, filled, submitted)
        (buffer, filled, submitted) = ([], 0, submitted + 1)
        slots.wait()
        running.enter()
        let (width, plan, metadata, options) = (width, plan, metadata, options)
        DispatchQueue.global(qos: .userInitiated).async { [self] in
            let part = chunk.withUnsafeBytes { raw in
                Result { () throws(LibvipsFailure) in
                    try JPEGChunks.encode(
                        chunk: raw, width: width, rows: rows, first: index == 0, metadata: metadata, options: options, plan: plan)
                }
            }
            parts.withLock { $0[index] = part }
            slots.signal()
            running.leave()
        }
    }

    /// The spliced file, once every row has come and every chunk is encoded.
    ///
    /// - Throws: the first chunk's failure, or ``JPEGChunks/splice(_:height:plan:)``'s.
    func finish() throws(LibvipsFailure) -> [UInt8] {
        if filled > 0 { submit() }
        running.wait()
        let encoded = parts.withLock { $0 }
        var ordered: [[UInt8]] = []
        for index in 0..<submitted { ordered.append(try encoded[index]!.get()) }
        return try JPEGChunks.splice(ordered, height: height, plan: plan)
    }

    /// Waits for the chunks being encoded and drops them.
    func abandon() {
        running.wait()
        parts.withLock { $0 = [:] }
    }
}
