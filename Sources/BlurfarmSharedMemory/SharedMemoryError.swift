import BlurfarmSystem

/// A system call on shared memory failed: which call, its `errno` (the call's
/// `SystemCallError`), and what it was applied to.
public struct SharedMemoryError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The failed call and its errno.
    package let cause: SystemCallError
    /// What the call was applied to: a path, a size, a descriptor.
    public let subject: String

    /// The system call, e.g. `mmap`.
    public var call: String { cause.call }
    /// The `errno` it failed with.
    public var errno: Int32 { cause.errno }

    /// The failure `cause` of a call on `subject`.
    package init(_ cause: SystemCallError, subject: String) {
        self.cause = cause
        self.subject = subject
    }

    /// An error of `call` on `subject`.
    public init(call: String, errno: Int32, subject: String) {
        self.init(SystemCallError(call: call, errno: errno), subject: subject)
    }

    /// One line, e.g. `open /proc/12/fd/7: No such file or directory (errno 2)`.
    public var description: String { "\(call) \(subject): \(cause.reason) (errno \(errno))" }
}
