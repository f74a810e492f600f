import BlurfarmSystem
import Synchronization

/// The temporary files of atomic writes in progress, for whoever owns those writes (a job, a
/// command): a process that must exit at once (a second interrupt) removes them, and the
/// outputs they were for stay as they were. Each owner keeps its own: one job's clean-up never
/// touches another's files.
public final class TemporaryFiles: Sendable {
    private let paths = Mutex<Set<String>>([])

    public init() {}

    func insert(_ path: String) { paths.withLock { _ = $0.insert(path) } }

    func remove(_ path: String) { paths.withLock { _ = $0.remove(path) } }

    /// The temporary files being written now.
    public var inProgress: Set<String> { paths.withLock { $0 } }

    /// Removes every temporary file being written now; returns how many there were.
    @discardableResult
    public func removeAll() -> Int {
        paths.withLock { paths in
            for path in paths { Syscalls.removeQuietly(path) }
            defer { paths.removeAll() }
            return paths.count
        }
    }
}
