import BlurfarmAPI
import Foundation

// Tiles rendered: counted as they come, by the hundred a second, stored and published
// together at most every `progressInterval`, and the rate the metrics give.
extension FarmService {
    /// Tiles rendered since the server started, and per second over the last ten seconds.
    public func tileRate() -> (total: Int, perSecond: Double) {
        forgetOldTiles()
        return (tilesDone, Double(recentTiles.reduce(0) { $0 + $1.count }) / 10)
    }

    private func forgetOldTiles() {
        let now = ContinuousClock.now
        recentTiles.removeAll { now - $0.at > .seconds(10) }
    }

    /// Stores the tiles rendered since the last time (one transaction for every job) and
    /// publishes each job's progress.
    func storeTiles() {
        progressTask?.cancel()
        progressTask = nil
        guard !pendingTiles.isEmpty else { return }
        let pending = pendingTiles
        pendingTiles = [:]
        let count = pending.values.reduce(0) { $0 + $1.count }
        tilesDone += count
        forgetOldTiles()
        recentTiles.append((ContinuousClock.now, count))
        let jobs: [QueueJob]
        do throws(ServiceError) {
            let tiles = pending.sorted { $0.key < $1.key }.map { (job: $0.key, count: $0.value.count, outputs: $0.value.done) }
            jobs = try storeCall { try $0.addTilesDone(tiles) }
        } catch {
            logger.error("\(error)")
            return
        }
        // Only encoded when someone listens: the page, a client of the stream.
        guard hub.count > 0 else { return }
        for job in jobs {
            guard let last = pending[job.id!]?.last else { continue }
            hub.publish(StreamEvent(
                id: nil, kind: .progress,
                data: Self.json(ProgressEvent(job: JobView(job, withManifest: false), output: last.output, done: last.done, total: last.total))))
        }
    }
}

/// Tiles of a job rendered and not yet stored.
struct PendingTiles: Sendable {
    /// How many.
    var count = 0
    /// Each output's tiles done, as last told.
    var done: [String: Int] = [:]
    /// The last tile's output, its tiles done and in all.
    var last: (output: String, done: Int, total: Int)?

    mutating func add(output: String, done: Int, total: Int) {
        count += 1
        self.done[output] = done
        last = (output, done, total)
    }
}

/// Tiles rendered: the job with its progress, and the last tile's output with its tiles done
/// and in all.
struct ProgressEvent: Encodable {
    var job: JobView
    var output: String
    var done: Int
    var total: Int
}
