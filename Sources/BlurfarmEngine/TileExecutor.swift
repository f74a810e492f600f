import BlurfarmCore
import BlurfarmSystem
import Dispatch
import Synchronization

/// Runs the tiles of one image. The in-process executor runs them on threads; worker
/// processes take this over in the farm.
public protocol TileExecutor: Sendable {
    /// Calls `body` once for every tile, possibly concurrently, and returns when all are done.
    func run(tiles: [Rect], _ body: @escaping @Sendable (Rect) -> Void)
}

/// Runs tiles on a fixed number of threads of this process, each taking the next tile
/// from a shared counter.
public struct ThreadedTileExecutor: TileExecutor {
    /// Threads that run tiles (at least 1).
    public let threads: Int

    public init(threads: Int) {
        precondition(threads >= 1, "at least one thread runs tiles")
        self.threads = threads
    }

    public func run(tiles: [Rect], _ body: @escaping @Sendable (Rect) -> Void) {
        let next = Atomic<Int>(0)
        let loop: @Sendable () -> Void = {
            while true {
                let index = next.add(1, ordering: .relaxed).oldValue
                guard index < tiles.count else { break }
                body(tiles[index])
            }
        }
        // The calling thread is one of them; a thread the system refuses leaves its tiles to
        // the others.
        let group = DispatchGroup()
        for _ in 1..<max(1, min(threads, tiles.count)) {
            group.enter()
            do throws(Threads.StartFailure) {
                try Threads.start {
                    loop()
                    group.leave()
                }
            } catch {
                group.leave()
                break
            }
        }
        loop()
        group.wait()
    }
}
