import BlurfarmAPI
import Foundation

// Tiles rendered and outputs started and finished: kept as they come, by the hundred a second
// (small photos, or outputs that fail at once: thousands), stored and published together at
// most every `progressInterval` (outputs also once ``outputBatch`` wait), at once for an output
// that starts in a job the farm holds (``farmHolds``), and the rate the metrics give.
extension FarmService {
    /// The most output changes kept before they are stored, whatever the time: a transaction's
    /// worth, and the bound on what waits in memory. Stored one transaction and one event each,
    /// 200,000 outputs that failed at once took over a minute to store, and their job's cancel
    /// waited behind them.
    static let outputBatch = 1000

    /// Stores what waits once `progressInterval` has passed, unless a store is due already.
    func storeProgressSoon() {
        guard progressTask == nil else { return }
        progressTask = Task { [progressInterval] in
            guard (try? await Task.sleep(for: progressInterval)) != nil else { return }
            self.storeProgress()
        }
    }

    /// Keeps an output's start or end for job `id` (`edit`); stores everything waiting once
    /// ``outputBatch`` outputs wait.
    func addOutputChange(_ id: Int64, _ edit: (inout PendingOutputs) -> Void) {
        edit(&pendingOutputs[id, default: PendingOutputs()])
        if outputChangesWaiting >= Self.outputBatch { storeProgress() } else { storeProgressSoon() }
    }

    /// The outputs' starts and ends not yet stored (the jobs in the farm are few: counted as
    /// asked).
    package var outputChangesWaiting: Int { pendingOutputs.values.reduce(0) { $0 + $1.changes.count } }

    /// Stores the outputs started and finished since the last time (one transaction and one
    /// `output` event for each job), then the tiles rendered.
    func storeProgress() {
        progressTask?.cancel()
        progressTask = nil
        let outputs = pendingOutputs
        pendingOutputs = [:]
        for (id, pending) in outputs.sorted(by: { $0.key < $1.key }) {
            do throws(ServiceError) {
                try update(id, kind: .output, outputs: pending.changes) { pending.apply(to: &$0) }
            } catch {
                logger.error("\(error)")
            }
        }
        storeTiles()
    }

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
    private func storeTiles() {
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

/// Outputs of a job started and finished and not yet stored: their rows' changes, in the order
/// they came, and what they add to the job's counts.
struct PendingOutputs: Sendable {
    private(set) var changes: [QueueStore.OutputChange] = []
    private var tilesTotal = 0, written = 0, pixels = 0, failed = 0, cancelled = 0

    mutating func started(_ output: QueueOutput) {
        changes.append(.started(output))
        tilesTotal += output.tiles
    }

    mutating func finished(_ output: QueueOutput) {
        changes.append(.finished(output))
        switch output.state {
        case .written:
            written += 1
            pixels += output.pixels
        case .failed: failed += 1
        default: cancelled += 1
        }
    }

    /// `count` outputs cancelled before they started: counted, without rows (the outputs a
    /// job lists are those started).
    mutating func cancelled(_ count: Int) { cancelled += count }

    /// `job` with these outputs counted.
    func apply(to job: inout QueueJob) {
        job.tilesTotal += tilesTotal
        job.outputsWritten += written
        job.pixelsWritten += pixels
        job.outputsFailed += failed
        job.outputsCancelled += cancelled
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
