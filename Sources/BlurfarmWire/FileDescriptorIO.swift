// Reads and writes on the pipes between coordinator and worker, retried on EINTR; errors
// carry the call's name. The worker and the coordinator's pool both use these.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed read or write: the call and its errno.
public struct IOFailure: Error, CustomStringConvertible {
    public let call: String
    public let errno: Int32

    public var description: String { "\(call): \(String(cString: strerror(errno))) (errno \(errno))" }
}

public enum FileDescriptorIO {
    /// Reads up to `buffer.count` bytes; 0 means end of file.
    public static func read(_ fd: Int32, into buffer: inout [UInt8]) throws(IOFailure) -> Int {
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n >= 0 { return n }
            if errno != EINTR { throw IOFailure(call: "read", errno: errno) }
        }
    }

    /// Writes all of `bytes`, however many calls it takes.
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(IOFailure) {
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, $0.count - written) }
            if n >= 0 {
                written += n
            } else if errno != EINTR {
                throw IOFailure(call: "write", errno: errno)
            }
        }
    }
}
