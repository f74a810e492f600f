import ArgumentParser
import BlurfarmCore
import BlurfarmSystem
import Foundation
import Synchronization

/// `blurfarm run --log FILE`: lines appended to `FILE`, each stamped with the UTC time and the
/// process id (`2026-11-22T21:05:00Z blurfarm[4242]: …`). Each line is one `write` to a file
/// opened for appending, so runs that share a log never interleave within a line. Safe to use
/// from several threads.
final class RunLog: Sendable {
    let path: String
    private let descriptor: Int32
    private let formatter = Mutex(ISO8601DateFormatter())

    /// Opens `path` for appending, creating it (not its folder).
    /// - Throws: ``CommandError`` naming the file when it cannot be opened.
    init(path: String) throws(CommandError) {
        self.path = path
        do throws(SystemCallError) {
            descriptor = try Syscalls.openForAppending(path)
        } catch {
            throw CommandError("\(path): cannot open the log: \(error.reason)", exitCode: ExitStatus.invalid)
        }
    }

    deinit { Syscalls.close(descriptor) }

    /// The log at `path`, or nil without one; a log that cannot be opened ends the command
    /// (its ``CommandError``, exit status 2).
    static func open(_ path: String?) throws(CommandError) -> RunLog? {
        try path.map { path throws(CommandError) in try RunLog(path: path) }
    }

    /// Appends `message` as one stamped line (control characters escaped, so a file's name
    /// cannot forge a line). A log that cannot be written is not worth
    /// stopping the run for: the same lines went to the terminal or cron's mail.
    func write(_ message: String) {
        let stamp = formatter.withLock { $0.string(from: Date()) }
        let line = Array("\(stamp) blurfarm[\(Syscalls.processID)]: \(ShownName.of(message))\n".utf8)
        _ = try? Syscalls.writeOnce(descriptor, line)
    }
}
