#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A system call on shared memory failed: which call, its `errno`, and what it was applied to.
public struct SharedMemoryError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The system call, e.g. `mmap`.
    public let call: String
    /// The `errno` it failed with.
    public let errno: Int32
    /// What the call was applied to: a path, a size, a descriptor.
    public let subject: String

    /// An error of `call` on `subject`.
    public init(call: String, errno: Int32, subject: String) {
        self.call = call
        self.errno = errno
        self.subject = subject
    }

    /// One line, e.g. `open /proc/12/fd/7: No such file or directory (errno 2)`.
    public var description: String {
        "\(call) \(subject): \(String(cString: strerror(errno))) (errno \(errno))"
    }
}
