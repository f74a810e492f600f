import BlurfarmTestSupport
import Foundation
import Testing

/// Photos searched in the worker processes (docs/pool.md, "Detection"): the detector runs
/// there, not in the coordinator, so one that crashes takes a worker, is tried again on
/// another, and fails its photo alone, unwritten, while the run goes on.
@Suite(.tags(.process), .blocking) struct DetectionInWorkersTests {
    /// The test-only `faultdetector` (Tests/BlurfarmTestSupport/test-plugins/faultdetector.c):
    /// the middle half of every image, each call's process id appended to `detected`, a fault
    /// on images wider than 100 px.
    @Test func aDetectorThatCrashesTakesAWorkerNotTheRunAndFailsItsPhotoAlone() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let plugins = folder.appendingPathComponent("plugins")
        try FileManager.default.createDirectory(at: plugins, withIntermediateDirectories: true)
        let detected = folder.appendingPathComponent("detected")
        try TestPlugins.compile(
            "faultdetector.c", as: "faultdetector", into: plugins, defines: ["LOG=\"\(detected.path)\"", "CRASH_WIDTH=100"])
        let photos = folder.appendingPathComponent("photos")
        try FileManager.default.createDirectory(at: photos, withIntermediateDirectories: true)
        for (name, width, height) in [("small", 64, 48), ("wide", 200, 100)] {
            let black = folder.appendingPathComponent("\(name)-black.png").path
            try FaceDetectionTests.vips(["black", black, "\(width)", "\(height)", "--bands", "3"])
            try FaceDetectionTests.vips(["linear", black, photos.appendingPathComponent("\(name).png").path, "1", "200", "--uchar"])
        }
        try "plugin-folders: ['\(plugins.path)']\nstate: state\n"
            .write(to: folder.appendingPathComponent("farm.conf"), atomically: true, encoding: .utf8)
        try """
            job: fault
            inputs: [photos/*.png]
            outputs:
              - name: redacted
                path: out/{stem}.png
                filters: [redact]
                regions:
                  detect: faultdetector

            """.write(to: folder.appendingPathComponent("fault.job"), atomically: true, encoding: .utf8)
        let run = try Blurfarm.run(["run", "fault.job", "--config", "farm.conf", "--workers", "2"], in: folder)
        // The run ends as a run with a failed photo does: not by the detector's signal.
        #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
        #expect(run.stderr.contains(
            "photos/wide.png: detector 'faultdetector' could not search it, so nothing of it is written: "
                + "searching it in a worker failed 4 times"), "\(run.stderr)")
        #expect(run.stderr.contains("killed by signal 11"), "\(run.stderr)")
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("out/small.png").path))
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("out/wide.png").path))
        // One search of the small photo and four of the wide one, each crash in a process of its
        // own (a worker, replaced): the coordinator, one process, could not have made these.
        let pids = try String(contentsOf: detected, encoding: .utf8).split(separator: "\n")
        #expect(pids.count == 5, "\(pids)")
        #expect(Set(pids).count >= 4, "\(pids)")
    }
}
