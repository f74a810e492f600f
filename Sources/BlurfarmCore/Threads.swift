#if canImport(Glibc)
import Glibc
#endif

/// Threads that are known to have started. Foundation's `Thread.start()` says nothing when the
/// system refuses a thread (a user at its `ulimit -u`), and whoever waits for that thread
/// then waits for ever; this says so, and the caller does the work another way or fails.
public enum Threads {
    /// Why a thread could not be started.
    public struct StartFailure: Error, Sendable, CustomStringConvertible {
        /// `pthread_create`'s error number.
        public let code: Int32
        public var description: String { "cannot start a thread: \(String(cString: strerror(code)))" }
    }

    /// Starts a thread running `body`, with a stack of `stackSize` bytes.
    ///
    /// - Throws: ``StartFailure`` when the system refuses the thread; `body` is then not run.
    public static func start(stackSize: Int = 1 << 20, _ body: @escaping @Sendable () -> Void) throws(StartFailure) {
        if let code = Syscalls.startThread(stackSize: stackSize, body) { throw StartFailure(code: code) }
    }
}
