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
        do throws(SystemCallError) {
            let fd = try Syscalls.openForReading(path)
            defer { Syscalls.close(fd) }
            let info = try Syscalls.status(of: fd)
            if info.st_mode & S_IFMT != S_IFREG {
                return failure("it is \(fileKindName(info.st_mode)), not a regular file")
            }
            return .success(try Syscalls.readAll(fd, upTo: ManifestLimits.maximumBytes + 1))
        } catch {
            return failure(error.reason)
        }
    }
}
