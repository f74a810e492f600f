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
        switch request {
        case .whole:
            return [try read(
                path, pixelLimit: pixelLimit, memoryLimit: memoryLimit, allocator: allocator, confinement: confinement)]
        case .thumbnail(let width, let height, let fit, let upscale, let crop, let sharpen):
            return [try thumbnail(
                path, width: width, height: height, fit: fit, upscale: upscale, crop: crop, sharpen: sharpen,
                pixelLimit: pixelLimit, memoryLimit: memoryLimit, allocator: allocator, confinement: confinement)]
        case .thumbnails(let widths, let upscale, let sharpen):
            return try thumbnails(
                path, widths: widths, upscale: upscale, sharpen: sharpen, pixelLimit: pixelLimit,
                memoryLimit: memoryLimit, allocator: allocator, confinement: confinement)
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
