/// How a buffer stores its samples.
public enum SampleFormat: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    /// Premultiplied `Float32`, as the filters work (``PixelBuffer``).
    case float32 = 0
    /// 8-bit samples, straight alpha, as files store them (``SampleBuffer`` of `UInt8`).
    case uint8 = 1
    /// 16-bit samples, straight alpha (``SampleBuffer`` of `UInt16`).
    case uint16 = 2

    /// Bytes a sample: 4, 1 or 2.
    public var byteSize: Int {
        switch self {
        case .float32: 4
        case .uint8: 1
        case .uint16: 2
        }
    }

    /// The samples of a file of `bitDepth` bits a sample (8 or 16).
    public static func file(bitDepth: Int) -> SampleFormat { bitDepth == 16 ? .uint16 : .uint8 }

    /// `float32`, `uint8` or `uint16`.
    public var description: String {
        switch self {
        case .float32: "float32"
        case .uint8: "uint8"
        case .uint16: "uint16"
        }
    }
}

/// How a band's pixels are stored: the sample format and the samples a pixel (3 or 4).
public struct SampleLayout: Hashable, Sendable {
    public var format: SampleFormat
    public var channels: Int

    public init(format: SampleFormat, channels: Int) {
        self.format = format
        self.channels = channels
    }
}

/// Pixels in any ``SampleFormat``: the windows and output bands of a streamed image, which stay
/// at the file's depth (a quarter or half of the memory of `Float32`) and are converted a tile
/// at a time where the tile is rendered (``floats(in:)``, ``store(_:in:background:)``).
public enum AnyPixels: @unchecked Sendable {
    /// Premultiplied `Float32` (3 or 4 channels).
    case float32(PixelBuffer)
    /// 8-bit samples: 3 bands (opaque) or 4 (straight alpha).
    case uint8(SampleBuffer<UInt8>)
    /// 16-bit samples: 3 bands or 4.
    case uint16(SampleBuffer<UInt16>)

    /// Pixels of `rect` in `format` over `storage` (from its first byte, rows packed).
    public init(rect: Rect, channels: Int, format: SampleFormat, storage: PixelStorage) {
        switch format {
        case .float32: self = .float32(PixelBuffer(rect: rect, storage: storage, channels: channels))
        case .uint8: self = .uint8(SampleBuffer(rect: rect, storage: storage, channels: channels))
        case .uint16: self = .uint16(SampleBuffer(rect: rect, storage: storage, channels: channels))
        }
    }

    /// Pixels of `rect` in `format` at `byteOffset` of `storage`, `rowStride` samples from one
    /// row to the next (`byteOffset` a multiple of the sample's size).
    public init(rect: Rect, channels: Int, format: SampleFormat, storage: PixelStorage, byteOffset: Int, rowStride: Int) {
        precondition(byteOffset % format.byteSize == 0, "a buffer starts at a whole sample")
        let offset = byteOffset / format.byteSize
        switch format {
        case .float32:
            self = .float32(PixelBuffer(rect: rect, storage: storage, offset: offset, rowStride: rowStride, channels: channels))
        case .uint8:
            self = .uint8(SampleBuffer(rect: rect, storage: storage, offset: offset, rowStride: rowStride, channels: channels))
        case .uint16:
            self = .uint16(SampleBuffer(rect: rect, storage: storage, offset: offset, rowStride: rowStride, channels: channels))
        }
    }

    /// New pixels of `rect` in `layout`, undefined until written, in `allocator`'s memory when
    /// it has some (the worker pool's shared segments), else in this process's.
    public static func uninitialized(_ rect: Rect, _ layout: SampleLayout, allocator: (any PixelAllocator)? = nil) -> AnyPixels {
        let bytes = max(1, rect.area * layout.channels * layout.format.byteSize)
        return AnyPixels(
            rect: rect, channels: layout.channels, format: layout.format,
            storage: allocator?.storage(byteCount: bytes) ?? .uninitialized(byteCount: bytes))
    }

    /// New pixels of `rect` in `format`, undefined until written.
    public static func uninitialized(_ rect: Rect, channels: Int, format: SampleFormat) -> AnyPixels {
        uninitialized(rect, SampleLayout(format: format, channels: channels))
    }

    /// The pixels' rectangle, in image coordinates.
    public var rect: Rect {
        switch self {
        case .float32(let b): b.rect
        case .uint8(let b): b.rect
        case .uint16(let b): b.rect
        }
    }

    /// Samples a pixel: 3 or 4.
    public var channels: Int {
        switch self {
        case .float32(let b): b.channels
        case .uint8(let b): b.channels
        case .uint16(let b): b.channels
        }
    }

    /// The samples' format and channels.
    public var layout: SampleLayout { SampleLayout(format: format, channels: channels) }

    /// The samples' format.
    public var format: SampleFormat {
        switch self {
        case .float32: .float32
        case .uint8: .uint8
        case .uint16: .uint16
        }
    }

    /// The memory behind the samples.
    public var storage: PixelStorage {
        switch self {
        case .float32(let b): b.storage
        case .uint8(let b): b.storage
        case .uint16(let b): b.storage
        }
    }

    /// Bytes from the start of the storage to the first sample of the rectangle's origin.
    public var byteOffset: Int {
        switch self {
        case .float32(let b): b.offset * 4
        case .uint8(let b): b.offset
        case .uint16(let b): b.offset * 2
        }
    }

    /// Samples from one row to the next.
    public var rowStride: Int {
        switch self {
        case .float32(let b): b.rowStride
        case .uint8(let b): b.rowStride
        case .uint16(let b): b.rowStride
        }
    }

    /// The pixels of `subrect` (inside ``rect``), sharing these pixels' memory.
    public func view(_ subrect: Rect) -> AnyPixels {
        switch self {
        case .float32(let b): .float32(b.view(subrect))
        case .uint8(let b): .uint8(b.view(subrect))
        case .uint16(let b): .uint16(b.view(subrect))
        }
    }

    /// Calls `body` with each row of `region` (inside ``rect``), top to bottom: its first byte
    /// and its byte count.
    public func forEachRow(in region: Rect, _ body: (UnsafeMutableRawPointer, Int) throws -> Void) rethrows {
        if region.isEmpty { return }
        let (first, stride) = start(of: region)
        let rowBytes = region.width * channels * format.byteSize
        try withExtendedLifetime(storage) {
            for row in 0..<region.height { try body(first + row * stride, rowBytes) }
        }
    }

    /// The first byte of `region` (inside ``rect``) and the bytes from one row to the next: for
    /// code that hands rows to C (valid while ``storage`` is alive).
    public func start(of region: Rect) -> (first: UnsafeMutableRawPointer, stride: Int) {
        precondition(rect.contains(region), "region \(region) lies outside \(rect)")
        let size = format.byteSize
        return (storage.base + byteOffset + ((region.y - rect.y) * rowStride + (region.x - rect.x) * channels) * size,
                rowStride * size)
    }

    /// Whether the rows follow one another with no gap (a band of the whole width).
    public var isPacked: Bool { rowStride == rect.width * channels }

    /// Copies the pixels of `region` (inside both rectangles) from `source`, which has the same
    /// format and channels.
    public func copy(_ region: Rect, from source: AnyPixels) {
        precondition(format == source.format && channels == source.channels, "a copy keeps the format and channels")
        if region.isEmpty { return }
        let (from, fromStride) = source.start(of: region)
        let (to, toStride) = start(of: region)
        let rowBytes = region.width * channels * format.byteSize
        withExtendedLifetime((storage, source.storage)) {
            for row in 0..<region.height { (to + row * toStride).copyMemory(from: from + row * fromStride, byteCount: rowBytes) }
        }
    }

    /// The pixels of `region` (inside ``rect``) as premultiplied `Float32`: a view of these
    /// pixels when they are `Float32`, else a new buffer converted from the samples
    /// (``SampleConversion``: `v / 255` or `v / 65535`, colour times alpha), exactly as the
    /// decoder of a whole image converts them, in memory from `scratch` when given.
    public func floats(in region: Rect, scratch: ScratchStorage? = nil) -> PixelBuffer {
        if case .float32(let b) = self { return b.view(region) }
        let pixels = scratch?.pixels(region, channels: channels) ?? PixelBuffer.uninitialized(region, channels: channels)
        let sixteen = format == .uint16, bands = channels
        pixels.withUnsafePixels { floats in
            var y = 0
            forEachRow(in: region) { row, _ in
                let destination = floats + y * pixels.rowStride
                if sixteen {
                    SampleConversion.premultiply(
                        UnsafePointer(row.assumingMemoryBound(to: UInt16.self)), bands: bands, pixelCount: region.width,
                        into: destination)
                } else {
                    SampleConversion.premultiply(
                        UnsafePointer(row.assumingMemoryBound(to: UInt8.self)), bands: bands, pixelCount: region.width,
                        into: destination)
                }
                y += 1
            }
        }
        return pixels
    }

    /// Writes the pixels of `region` (inside both rectangles) from `pixels`: copied when these
    /// are `Float32` (with the same channels), else as the encoder's samples
    /// (``SampleConversion``: rounded, straight alpha with 4 bands, composited over
    /// `background` with 3).
    public func store(_ pixels: PixelBuffer, in region: Rect, background: SIMD3<Float>) {
        precondition(pixels.rect.contains(region), "region \(region) lies outside \(pixels.rect)")
        switch self {
        case .float32(let b):
            b.copy(region, from: pixels)
        case .uint8, .uint16:
            let sixteen = format == .uint16, bands = channels
            pixels.withUnsafePixels { floats in
                var y = region.y - pixels.rect.y
                let x = (region.x - pixels.rect.x) * pixels.channels
                forEachRow(in: region) { row, _ in
                    let source = UnsafePointer(floats + y * pixels.rowStride + x)
                    if sixteen {
                        SampleConversion.unpremultiply(
                            source, channels: pixels.channels, pixelCount: region.width, bands: bands,
                            background: background, into: row.assumingMemoryBound(to: UInt16.self))
                    } else {
                        SampleConversion.unpremultiply(
                            source, channels: pixels.channels, pixelCount: region.width, bands: bands,
                            background: background, into: row.assumingMemoryBound(to: UInt8.self))
                    }
                    y += 1
                }
            }
        }
    }
}
