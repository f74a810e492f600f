// Where the tests that block their thread run: on threads of their own, never on the
// cooperative pool's.
import BlurfarmSystem
import Dispatch
import Foundation
import Synchronization
import Testing

extension Trait where Self == BlockingTrait {
    /// The suite's tests block their thread for seconds at a time: they wait for processes
    /// (`blurfarm`, a server, Slurm, Chromium), read their pipes, and poll. Each runs on a
    /// thread of its own (``BlockingTrait``).
    public static var blocking: Self { BlockingTrait() }
}

/// Runs each test of a suite that blocks its thread on a thread of its own, never on one of
/// the cooperative pool's.
///
/// Why: Swift Testing runs every test on the cooperative pool, one thread a core (two here),
/// and the servers the asynchronous tests start in the test process answer on that pool too.
/// In thread dumps taken every 10 s of a whole run, both threads were held by tests waiting
/// for processes in every sample; while they are, no server in the process answers. A CI run
/// in which the process stalled three times for about 30 s failed at `FarmClientTests`' and
/// `PathSpellingTests`' 30 s deadlines. With this trait
/// a test's body prefers a thread of the ``BlockingTests`` executors: it waits there, and the
/// pool is left to the tests that await.
///
/// At most ``BlockingTests/width`` of them run at once, as many as ran before (the pool's
/// threads, and the main actor's, which ran `ServeTests` and `ClientCommandTests` beside them):
/// the others wait for a thread without holding one.
public struct BlockingTrait: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let executor = try await BlockingTests.shared.take()
        do {
            try await withTaskExecutorPreference(executor) { try await function() }
        } catch {
            await BlockingTests.shared.give(executor)
            throw error
        }
        await BlockingTests.shared.give(executor)
    }
}

/// The threads the tests that block run on (``BlockingTrait``), ``width`` at most, each made
/// when first needed and kept for the next test; a test that finds none free waits for one.
public actor BlockingTests {
    public static let shared = BlockingTests()

    /// How many blocking tests run at once: one a core, as the cooperative pool ran them, and
    /// one more, as the main actor ran the served suites beside them.
    public static let width = ProcessInfo.processInfo.activeProcessorCount + 1

    private var made = 0
    private var free: [ThreadExecutor] = []
    private var waiting: [CheckedContinuation<ThreadExecutor, Never>] = []

    /// Whether the calling thread is one of these (a test's check that the trait is at work).
    public nonisolated static var isCurrentThreadOne: Bool {
        ThreadExecutor.threads.withLock { $0.contains(pthread_self()) }
    }

    /// A thread's executor, once one is free.
    /// - Throws: ``Threads/StartFailure`` when the system refuses a new thread.
    func take() async throws(Threads.StartFailure) -> ThreadExecutor {
        if let executor = free.popLast() { return executor }
        if made < Self.width {
            let executor = try ThreadExecutor()
            made += 1
            return executor
        }
        return await withCheckedContinuation { waiting.append($0) }
    }

    /// Gives back what ``take()`` gave: to the first test waiting, else kept.
    func give(_ executor: ThreadExecutor) {
        if waiting.isEmpty {
            free.append(executor)
        } else {
            waiting.removeFirst().resume(returning: executor)
        }
    }
}

/// A task executor that runs its jobs one after another on a thread of its own (with the main
/// thread's 8 MiB of stack: the glob walk and the manifest's parser recurse).
final class ThreadExecutor: TaskExecutor, Sendable {
    private let jobs = Mutex<[UnownedJob]>([])
    private let queued = DispatchSemaphore(value: 0)
    /// The threads of every one.
    static let threads = Mutex<Set<pthread_t>>([])

    /// - Throws: ``Threads/StartFailure`` when the system refuses the thread.
    init() throws(Threads.StartFailure) {
        try Threads.start(stackSize: 8 << 20) { [self] in
            _ = Self.threads.withLock { $0.insert(pthread_self()) }
            while true {
                queued.wait()
                let job = jobs.withLock { $0.removeFirst() }
                job.runSynchronously(on: asUnownedTaskExecutor())
            }
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(job) }
        queued.signal()
    }
}
