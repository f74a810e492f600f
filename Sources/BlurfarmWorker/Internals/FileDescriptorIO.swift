// The worker's reads and writes on its pipes, retried on EINTR; errors carry the call's name.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed read or write: the call and its errno.
struct IOFailure: Error {
    let call: String
    let errno: Int32

    var description: String { "\(call): \(String(cString: strerror(errno))) (errno \(errno))" }
}

enum FileDescriptorIO {
    /// Reads up to `buffer.count` bytes; 0 means end of file.
    static func read(_ fd: Int32, into buffer: inout [UInt8]) throws(IOFailure) -> Int {
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n >= 0 { return n }
            if errno != EINTR { throw IOFailure(call: "read", errno: errno) }
        }
    }

    /// Writes all of `bytes`, however many calls it takes.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(IOFailure) {
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
