import BlurfarmAPI
import BlurfarmSystem
import Foundation

// The farm's events: each a change of the queue in one transaction with its event, after
// the tiles rendered and the outputs finished before it, which are stored together
// (FarmService+Progress.swift).
extension FarmService {
    func handle(_ event: JobFarmEvent) {
        do throws(ServiceError) {
            try apply(event)
        } catch {
            logger.error("\(error)")
        }
    }

    private func apply(_ event: JobFarmEvent) throws(ServiceError) {
        switch event {
        case .tilesDone(let id, let output, let done, let total):
            pendingTiles[id, default: PendingTiles()].add(output: output, done: done, total: total)
            storeProgressSoon()
            return
        case .outputStarted(let id, let output, let tiles):
            let started = QueueOutput(
                jobId: id, output: output, state: .rendering, tilesDone: 0, tiles: tiles, pixels: 0, seconds: nil,
                retries: 0, checksum: nil, errorKind: nil, error: nil, startedAt: Date(), finishedAt: nil)
            // In a running job, stored with the ends (a client sees it rendering at most
            // `progressInterval` after it starts): small photos start by the thousand a second,
            // and a transaction and an event each made a served job of 64 x 48 photos 1.6x
            // `run`'s time. In a job the farm holds (paused or cancelled), stored at once, with
            // what waits: a client that sees none rendering there sees the last of its outputs'
            // ends stored too (those that started before the pause were stored with it:
            // ``transition(_:_:)``).
            addOutputChange(id) { $0.started(started) }
            if farmHolds.contains(id) { storeProgress() }
            return
        case .outputFinished(let id, let outcome):
            if stopping, outcome.status == .stopped { return }
            let finished = QueueOutput(
                jobId: id, output: outcome.output, state: outcome.status, tilesDone: outcome.tiles, tiles: outcome.tiles,
                pixels: outcome.pixels, seconds: outcome.seconds, retries: outcome.retries, checksum: outcome.checksum,
                errorKind: outcome.errorKind, error: outcome.error, startedAt: nil, finishedAt: Date())
            addOutputChange(id) { $0.finished(finished) }
            if outcome.status == .written { lastWritten = outcome.output }
            return
        case .outputsCancelled(let id, let count):
            pendingOutputs[id, default: PendingOutputs()].cancelled(count)
            storeProgressSoon()
            return
        default: break
        }
        // Every other change comes after the tiles and outputs before it.
        storeProgress()
        if stopping, case .finished = event { return }
        switch event {
        case .accepted(let id, let outputs, let upToDate):
            try update(id, kind: .job, outputs: [.forgetRendering]) { job in
                job.outputsTotal = outputs
                job.outputsUpToDate = upToDate
                job.outputsWritten = 0
                job.outputsFailed = 0
                job.outputsCancelled = 0
                job.tilesDone = 0
                job.tilesTotal = 0
                job.pixelsWritten = 0
            }
        case .outputStarted, .outputFinished, .outputsCancelled, .tilesDone:
            break  // kept above
        case .problem(let id, let message, let refusal):
            try update(id, kind: .job) { job in
                job.error = Self.error(job.error, adding: message)
                if let refusal { job.refusal = refusal }
            }
        case .workersChanged:
            let workers = QueueEvent(id: nil, at: Date(), kind: .workers, jobId: nil, data: Self.json(jobFarm.workers()))
            publish(try storeCall { try $0.log(workers) })
        case .finished(let id, let failed, let cancelled):
            try transition(id, .farmFinished(failed: failed, cancelled: cancelled))
            try schedule()
            Syscalls.returnFreedMemory()
        }
    }
}

extension FarmService {
    /// The most problems a job's `error` lists, and the most bytes of each: every event repeats
    /// the job, so a job with an error line for each of thousands of inputs made the event log
    /// grow with the square of their number (2,000 unusable inputs: 429 MB in 8 s).
    static let errorLines = 20, errorLineBytes = 1000

    /// `current` (a job's `error`) with `message` added: its first ``errorLines`` problems, each
    /// cut to ``errorLineBytes``, then one line counting those left out.
    static func error(_ current: String?, adding message: String) -> String {
        var lines = current.map { $0.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) } ?? []
        var more = 0
        if let last = lines.last, last.hasPrefix("… and "), let count = Int(last.dropFirst("… and ".count).prefix { $0.isNumber }) {
            more = count
            lines.removeLast()
        }
        let added = message.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.utf8.count <= errorLineBytes ? String(line) : String(decoding: line.utf8.prefix(errorLineBytes), as: UTF8.self) + "…"
        }
        for line in added {
            if lines.count < errorLines { lines.append(line) } else { more += 1 }
        }
        if more > 0 { lines.append("… and \(more) more problem\(more == 1 ? "" : "s")") }
        return lines.joined(separator: "\n")
    }
}
