import BlurfarmImageIO

/// A problem with the state folder (records of written outputs, job locks): one line naming
/// the file.
public struct StateError: Error, Sendable, CustomStringConvertible {
    /// The file or folder concerned.
    public let path: String
    /// What went wrong, in words.
    public let message: String
    /// The file system's refusal of every write, when that is why it went wrong
    /// (``ImageIOError/refusal(_:)``: full, read-only): a folder that could not be made there.
    public var refusal: ImageIOError.Code?

    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    public var description: String { "\(path): \(message)" }
}
