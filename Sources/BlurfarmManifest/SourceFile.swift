#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import BlurfarmCore
import BlurfarmSystem

/// The one place this module touches the file system: reading a manifest's or the
/// configuration's bytes.
public enum SourceFile {
    /// The bytes of the file at `path`, or one error naming the file and the system's reason:
    /// a FIFO, a device, a socket or a folder is refused without reading it.
    ///
    /// At most ``ManifestLimits/maximumBytes`` + 1 bytes are read: enough for the parser to
    /// report a file that is too large, without reading a huge one whole.
    public static func readBytes(atPath path: String) -> Result<[UInt8], Diagnostics> {
        func failure(_ reason: String) -> Result<[UInt8], Diagnostics> {
            .failure(Diagnostics([.error("cannot read '\(path)': \(reason)", at: nil)]))
        }
        // Never blocking: a FIFO opened for reading waits for a writer, forever in a service.
        let fd: Int32
        do {
            fd = try Syscalls.retrying("open") { open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY) }
        } catch {
            return failure(error.reason)
        }
        defer { Syscalls.close(fd) }
        let info: stat
        do {
            info = try Syscalls.status(of: fd)
        } catch {
            return failure(error.reason)
        }
        if info.st_mode & S_IFMT != S_IFREG {
            return failure("it is \(fileKindName(info.st_mode)), not a regular file")
        }
        let limit = ManifestLimits.maximumBytes + 1
        var bytes = [UInt8](repeating: 0, count: limit)
        var count = 0
        while count < limit {
            let n: Int
            do {
                n = try Syscalls.retrying("read") { bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, limit - count) } }
            } catch {
                return failure(error.reason)
            }
            if n == 0 { break }
            count += n
        }
        bytes.removeSubrange(count...)
        return .success(bytes)
    }
}
