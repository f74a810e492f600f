import BlurfarmSystem
import BlurfarmCore

extension ImageReader {
    /// The images `request` asks of `path`: one, or one per width in the order of the widths.
    ///
    /// - Throws: `ImageIOError` as the reader `request` names.
    public static func decode(
        _ path: String, _ request: DecodeRequest, pixelLimit: Int = defaultPixelLimit, memoryLimit: Int = usableMemory,
        allocator: (any PixelAllocator)? = nil, confinement: RootConfinement? = nil
    ) throws(ImageIOError) -> [DecodedImage] {
        if let thumbnails = try thumbnails(
            of: path, request, pixelLimit: pixelLimit, memoryLimit: memoryLimit, confinement: confinement,
            as: { image, sixteen throws(LibvipsFailure) in try decoded(image, sixteenBit: sixteen, allocator: allocator) })
        {
            return thumbnails
        }
        return [try read(path, pixelLimit: pixelLimit, memoryLimit: memoryLimit, allocator: allocator, confinement: confinement)]
    }

    /// The images a thumbnail request asks of `path` (``DecodeRequest/thumbnail(width:height:fit:upscale:crop:sharpen:)``
    /// or ``DecodeRequest/thumbnails(widths:upscale:sharpen:)``), made as ``decode(_:_:pixelLimit:memoryLimit:allocator:confinement:)``
    /// makes them but kept at the file's depth (``DecodedSamples``); nil for `.whole`, whose
    /// samples ``BandReader`` reads.
    ///
    /// - Throws: `ImageIOError` as ``thumbnail(_:width:height:fit:upscale:crop:sharpen:pixelLimit:memoryLimit:allocator:confinement:)``
    ///   and ``thumbnails(_:widths:upscale:sharpen:pixelLimit:memoryLimit:allocator:confinement:)``.
    public static func decodeSamples(
        _ path: String, _ request: DecodeRequest, pixelLimit: Int = defaultPixelLimit, memoryLimit: Int = usableMemory,
        confinement: RootConfinement? = nil
    ) throws(ImageIOError) -> [DecodedSamples]? {
        try thumbnails(of: path, request, pixelLimit: pixelLimit, memoryLimit: memoryLimit, confinement: confinement) {
            image, sixteen throws(LibvipsFailure) in try decodedSamples(image, sixteenBit: sixteen)
        }
    }
}

/// An input file this process holds open for another process of the same user to decode (a
/// worker): opened as the readers open their inputs (beneath the roots of a confinement, a
/// regular file, never a FIFO), and read by the other process through this process's
/// descriptor, ``sharedPath``, so that it reads the very file opened here and resolves none
/// of the job's paths. Closed when the value goes.
public final class SharedInput: Sendable {
    /// The descriptor.
    public let descriptor: Int32
    /// The path as the job names it.
    public let path: String

    /// Opens `path` (beneath the roots of `confinement` when given).
    ///
    /// - Throws: `ImageIOError` with code `.fileMissing`, `.fileUnreadable` or
    ///   `.inputOutsideRoots`, as the readers do.
    public init(_ path: String, confinement: RootConfinement?) throws(ImageIOError) {
        self.path = path
        descriptor = try InputFile(path, confinement: confinement).descriptor
    }

    /// The name another process opens the file by: `/proc/<this pid>/fd/<descriptor>`.
    public var sharedPath: String { "/proc/\(Syscalls.processID)/fd/\(descriptor)" }

    deinit { Syscalls.close(descriptor) }
}
