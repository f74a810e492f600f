/// Why a plugin was not loaded or a plugin name was refused: the file or folder concerned
/// (or the name, when no file was found) and what is wrong, in one line.
public struct PluginError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file or folder the error is about, or the name that was asked for.
    public let subject: String
    /// What is wrong.
    public let message: String

    public init(_ subject: String, _ message: String) {
        self.subject = subject
        self.message = message
    }

    /// `subject: message`, e.g. `plugins/libzoom.so: has no entry point 'blurfarm_plugin_entry'`.
    public var description: String { "\(subject): \(message)" }
}
