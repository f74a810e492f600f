#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import BlurfarmCore

/// The one place this module touches the file system: reading a manifest's or the
/// configuration's bytes.
public enum SourceFile {
    /// The bytes of the file at `path`, or one error naming the file and the system's reason:
    /// a FIFO, a device, a socket or a folder is refused without reading it.
    ///
    /// At most ``ManifestLimits/maximumBytes`` + 1 bytes are read: enough for the parser to
    /// report a file that is too large, without reading a huge one whole.
    public static func readBytes(atPath path: String) -> Result<[UInt8], Diagnostics> {
        func failure(_ code: Int32) -> Result<[UInt8], Diagnostics> {
            .failure(Diagnostics([.error("cannot read '\(path)': \(String(cString: strerror(code)))", at: nil)]))
        }
        // Never blocking: a FIFO opened for reading waits for a writer, forever in a service.
        var fd: Int32
        repeat { fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY) } while fd < 0 && errno == EINTR
        guard fd >= 0 else { return failure(errno) }
        defer { _ = close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return failure(errno) }
        if info.st_mode & S_IFMT != S_IFREG {
            return .failure(Diagnostics([.error("cannot read '\(path)': it is \(fileKindName(info.st_mode)), not a regular file", at: nil)]))
        }
        let limit = ManifestLimits.maximumBytes + 1
        var bytes = [UInt8](repeating: 0, count: limit)
        var count = 0
        while count < limit {
            let n = bytes.withUnsafeMutableBytes { buffer in
                read(fd, buffer.baseAddress! + count, limit - count)
            }
            if n < 0 {
                if errno == EINTR { continue }
                return failure(errno)
            }
            if n == 0 { break }
            count += n
        }
        bytes.removeSubrange(count...)
        return .success(bytes)
    }
}
