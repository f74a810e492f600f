/// Threads that are known to have started. Foundation's `Thread.start()` says nothing when the
/// system refuses a thread (a user at its `ulimit -u`), and whoever waits for that thread
/// then waits for ever; this says so, and the caller does the work another way or fails.
/// Every thread of blurfarm starts here (`pthread_create`, in `Syscalls+Processes.swift`).
public enum Threads {
    /// Why a thread could not be started: the refused `pthread_create`.
    public struct StartFailure: Error, Sendable, CustomStringConvertible {
        /// `pthread_create`'s failure (`EAGAIN`: the process or its user may have no more threads).
        package let cause: SystemCallError

        public var description: String { "cannot start a thread: \(cause.reason)" }
    }

    /// Makes the calling thread background work (niceness 10): the threads of the process that
    /// answer people are scheduled before it when they share the processors. Where the system
    /// refuses, it runs as it was.
    public static func runInBackground() {
        try? Syscalls.lowerThisThreadsPriority(to: 10)
    }

    /// Starts a thread running `body`, with a stack of `stackSize` bytes.
    ///
    /// - Throws: ``StartFailure`` when the system refuses the thread; `body` is then not run.
    public static func start(stackSize: Int = 1 << 20, _ body: @escaping @Sendable () -> Void) throws(StartFailure) {
        do {
            try Syscalls.startThread(stackSize: stackSize, body)
        } catch {
            throw StartFailure(cause: error)
        }
    }
}
