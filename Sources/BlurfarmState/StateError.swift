/// A problem with the state folder (records of written outputs, job locks): one line naming
/// the file.
public struct StateError: Error, Sendable, CustomStringConvertible {
    /// The file or folder concerned.
    public let path: String
    /// What went wrong, in words.
    public let message: String
    /// Whether it went wrong for want of room or quota on the file system
    /// (``ImageIOError/isOutOfRoom(_:)``): a folder that could not be made on a full disk.
    public var isDiskFull = false

    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    public var description: String { "\(path): \(message)" }
}
