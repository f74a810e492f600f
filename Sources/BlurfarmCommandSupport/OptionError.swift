/// What is wrong with a command-line option's value (`--filter`, `--region`, `--regions`, an
/// input of `apply -o`), in words that name the option: one line for the user.
public struct OptionError: Error, Sendable, CustomStringConvertible {
    /// The line, e.g. `--filter 'gaussian': sigma is required`.
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
