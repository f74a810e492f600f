import BlurfarmCore
import BlurfarmSystem
import Foundation
import Synchronization

/// `blurfarm run --log FILE`: lines appended to `FILE`, each stamped with the UTC time and the
/// process id (`2026-11-22T21:05:00Z blurfarm[4242]: …`). Each line is one `write` to a file
/// opened for appending, so runs that share a log never interleave within a line. Safe to use
/// from several threads.
public final class RunLog: Sendable {
    public let path: String
    private let descriptor: Int32
    private let formatter = Mutex(ISO8601DateFormatter())

    /// Opens `path` for appending, creating it (not its folder).
    /// - Throws: ``OptionError`` naming the file when it cannot be opened.
    public init(path: String) throws(OptionError) {
        self.path = path
        do throws(SystemCallError) {
            descriptor = try Syscalls.openForAppending(path)
        } catch {
            throw OptionError("\(path): cannot open the log: \(error.reason)")
        }
    }

    deinit { Syscalls.close(descriptor) }

    /// The log at `path`, or nil without one.
    /// - Throws: ``OptionError`` naming the file when it cannot be opened.
    public static func open(_ path: String?) throws(OptionError) -> RunLog? {
        try path.map { path throws(OptionError) in try RunLog(path: path) }
    }

    /// Appends `message` as one stamped line (control characters escaped, so a file's name
    /// cannot forge a line). A log that cannot be written is not worth
    /// stopping the run for: the same lines went to the terminal or cron's mail.
    public func write(_ message: String) {
        let stamp = formatter.withLock { $0.string(from: Date()) }
        let line = Array("\(stamp) blurfarm[\(Syscalls.processID)]: \(ShownName.of(message))\n".utf8)
        _ = try? Syscalls.writeOnce(descriptor, line)
    }
}
