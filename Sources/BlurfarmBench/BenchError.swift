/// A benchmark that cannot run, in words for the user: a missing corpus, script or venv, a
/// command that failed, a libvips lane that answered an error.
public struct BenchError: Error, CustomStringConvertible, Sendable {
    /// One line saying what failed and, where there is one, the fix.
    public let message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
