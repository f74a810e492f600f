import BlurfarmSystem
import CSystemShims
import Foundation
import Synchronization
import Testing

/// A thread made background work (a served plan's) runs at niceness 10 or more, and only it:
/// the other threads of the process keep theirs.
@Suite struct BackgroundThreadTests {
    static func niceness(of thread: Int32) -> Int32 {
        getpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(thread))
    }

    @Test func onlyTheThreadMadeBackgroundWorkIsLowered() async throws {
        // The main thread (its id is the process's) lives as long as the process; the test's
        // own may end while it waits (a pool's idle thread), and then has no niceness to read.
        let main = getpid()
        let before = Self.niceness(of: main)
        let seen = await withCheckedContinuation { (continuation: CheckedContinuation<(Int32, Int32), Never>) in
            do {
                try Threads.start {
                    let thread = blurfarm_thread_id()
                    let own = Self.niceness(of: thread)
                    Threads.runInBackground()
                    // Asked twice, it stays where it is (and never goes back up).
                    Threads.runInBackground()
                    continuation.resume(returning: (own, Self.niceness(of: thread)))
                }
            } catch {
                Issue.record("no thread: \(error)")
                continuation.resume(returning: (-100, -100))
            }
        }
        #expect(seen.1 == max(seen.0, 10))
        #expect(Self.niceness(of: main) == before)
    }
}
