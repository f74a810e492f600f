import BlurfarmCore
import Foundation
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
        let workers = min(threads, tiles.count)
        if workers <= 1 {
            tiles.forEach(body)
            return
        }
        let group = DispatchGroup()
        for _ in 0..<workers {
            group.enter()
            let thread = Thread {
                while true {
                    let index = next.add(1, ordering: .relaxed).oldValue
                    guard index < tiles.count else { break }
                    body(tiles[index])
                }
                group.leave()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        group.wait()
    }
}
