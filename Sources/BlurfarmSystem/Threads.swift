import Dispatch
import Synchronization

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

    /// `body(0)`, `body(1)`, … `body(count - 1)` at once, their answers in order once all are
    /// in: the first on the calling thread, each other on a thread of its own with a stack of
    /// `stackSize` bytes (sharing the caller's niceness: the service's background planning),
    /// or, where the system refuses one, on the calling thread after the first.
    public static func concurrently<Answer: Sendable>(
        _ count: Int, stackSize: Int = 8 << 20, _ body: @escaping @Sendable (Int) -> Answer
    ) -> [Answer] {
        let answers = Mutex([Answer?](repeating: nil, count: count))
        let group = DispatchGroup()
        var refused: [Int] = []
        for index in 1..<Swift.max(1, count) {
            group.enter()
            do throws(StartFailure) {
                try start(stackSize: stackSize) {
                    let answer = body(index)
                    answers.withLock { $0[index] = answer }
                    group.leave()
                }
            } catch {
                group.leave()
                refused.append(index)
            }
        }
        for index in (count > 0 ? [0] : []) + refused {
            let answer = body(index)
            answers.withLock { $0[index] = answer }
        }
        group.wait()
        return answers.withLock { answers in answers.map { $0! } }
    }

    /// `work`'s answer, made on a thread of its own (with a stack of `stackSize` bytes) while
    /// the awaiting task gives up its thread: never on one of the concurrency pool's few
    /// threads (one a core), nor on GCD's global queue, whose threads on Linux are the same
    /// ones (work that waits there stops every task of the process). Where the system refuses
    /// a thread, on GCD's.
    public static func awaited<Value: Sendable>(
        stackSize: Int = 1 << 20, _ work: @escaping @Sendable () -> Value
    ) async -> Value {
        await withCheckedContinuation { continuation in
            do throws(StartFailure) {
                try start(stackSize: stackSize) { continuation.resume(returning: work()) }
            } catch {
                DispatchQueue.global(qos: .userInitiated).async { continuation.resume(returning: work()) }
            }
        }
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
