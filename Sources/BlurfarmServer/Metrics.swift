import BlurfarmPool
import BlurfarmAPI

/// `/metrics` in the Prometheus text format (version 0.0.4).
enum Metrics {
    /// The metrics of `service` now.
    static func text(_ service: FarmService, connections: ConnectionLimits) async -> String {
        var lines: [String] = []
        func metric(_ name: String, _ type: String, _ help: String, _ samples: [(labels: String, value: String)]) {
            lines.append("# HELP \(name) \(help)")
            lines.append("# TYPE \(name) \(type)")
            for sample in samples { lines.append("\(name)\(sample.labels) \(sample.value)") }
        }
        let counts = (try? service.store.countsByState()) ?? [:]
        metric(
            "blurfarm_jobs", "gauge", "Jobs by state.",
            JobState.allCases.map { ("{state=\"\($0.rawValue)\"}", "\(counts[$0] ?? 0)") })
        metric("blurfarm_queue_depth", "gauge", "Jobs queued, waiting for the farm.", [("", "\(counts[.queued] ?? 0)")])
        metric(
            "blurfarm_plans_in_progress", "gauge", "Manifests being planned: submissions being checked, jobs dispatched to the farm.",
            [("", "\(await service.plansInProgress)")])
        metric(
            "blurfarm_plans_total", "counter",
            "Manifests planned since the server started: submissions checked, jobs planned again when their turn came.",
            [("", "\(service.plansTotal)")])
        let totals = (try? service.store.outputTotals()) ?? (written: 0, failed: 0)
        metric("blurfarm_outputs_written_total", "counter", "Outputs written by served jobs.", [("", "\(totals.written)")])
        metric("blurfarm_outputs_failed_total", "counter", "Outputs that failed in served jobs.", [("", "\(totals.failed)")])
        let tiles = await service.tileRate()
        metric("blurfarm_tiles_total", "counter", "Tiles rendered since the server started.", [("", "\(tiles.total)")])
        metric(
            "blurfarm_tiles_per_second", "gauge", "Tiles rendered per second over the last ten seconds.",
            [("", "\(tiles.perSecond)")])
        let workers = service.workers()
        metric(
            "blurfarm_workers", "gauge", "Worker processes by state.",
            WorkerState.allCases.map { state in
                ("{state=\"\(state.rawValue)\"}", "\(workers.filter { $0.state == state }.count)")
            })
        metric(
            "blurfarm_worker_restarts_total", "counter", "Workers replaced after one was lost.",
            [("", "\(workers.reduce(0) { $0 + $1.restarts })")])
        metric("blurfarm_connections", "gauge", "HTTP connections open.", [("", "\(connections.count)")])
        metric(
            "blurfarm_connections_limit", "gauge", "The most HTTP connections at once (--max-connections).",
            [("", "\(connections.total)")])
        metric(
            "blurfarm_connections_refused_total", "counter",
            "HTTP connections closed as they were accepted: over the limit of one address or of all.",
            [("", "\(connections.refused)")])
        metric(
            "blurfarm_connections_closed_for_room_total", "counter",
            "HTTP connections closed to make room for a newcomer, all being taken: each the one waiting longest for a request's head.",
            [("", "\(connections.closedForRoom)")])
        return lines.joined(separator: "\n") + "\n"
    }
}
