import BlurfarmTestSupport
import Foundation

/// The test-only `fault` filter (Tests/BlurfarmTestSupport/test-plugins/fault.c), compiled into
/// a plugin folder of its own: a job names it once its configuration has ``configuration``. It
/// copies its input but crashes (`crash: true`) or stalls once (`stall: true`, creating
/// ``marker``) on the tile holding a pixel. Plugins run in worker processes only, on tiles
/// (never in process, never streamed, never in a whole-image task: JobRunner.wholeImage), so a
/// job that names it renders its images tile by tile in the workers; a shard of a cluster run
/// loads it from the job's configuration as its workers do.
struct FaultPlugin {
    let folder: URL
    /// The file the stalled process creates with its pid.
    let marker: URL

    init() throws {
        folder = try TestPlugins.folder()
        marker = folder.appendingPathComponent("stalled")
        try TestPlugins.compile("fault.c", as: "fault", into: folder, defines: ["MARKER=\"\(marker.path)\""])
    }

    /// The configuration line that loads it.
    var configuration: String { "plugin-folders: ['\(folder.path)']\n" }

    /// The `fault` arguments that stall the first attempt at the tile holding (`x`, `y`).
    static func stall(x: Int = 5, y: Int = 5) -> KeyValuePairs<String, String> {
        ["x": "\(x)", "y": "\(y)", "stall": "true"]
    }

    func remove() { try? FileManager.default.removeItem(at: folder) }
}

/// `blurfarm-test-worker` (Tests/BlurfarmTestWorker), the worker whose `motion` stalls once in
/// the middle of a whole-image task, creating ``marker``.
struct StallingWorker {
    let marker = FileManager.default.temporaryDirectory.appendingPathComponent("stall-\(UUID().uuidString)")

    /// The environment of a coordinator whose workers are this one.
    var environment: [String: String] {
        [
            "BLURFARM_WORKER": BuiltExecutable.url.deletingLastPathComponent().appendingPathComponent("blurfarm-test-worker").path,
            "BLURFARM_TEST_STALL_MARKER": marker.path,
        ]
    }

    func remove() { try? FileManager.default.removeItem(at: marker) }
}
