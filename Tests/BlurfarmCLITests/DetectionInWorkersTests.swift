import BlurfarmTestSupport
import Foundation
import Testing

/// Photos searched in the worker processes (docs/pool.md, "Detection"): the detector runs
/// there, not in the coordinator, so one that crashes takes a worker, is tried again on
/// another, and fails its photo alone, unwritten, while the run goes on.
@Suite(.tags(.process), .blocking) struct DetectionInWorkersTests {
    /// Writes `folder/farm.conf` (the plugins of `plugins`, `settings` more) and the job
    /// `name` (`folder/name.job`): each photo of `photos/` redacted where `faultdetector` finds.
    static func writeJob(_ name: String, in folder: URL, plugins: URL, settings: String = "") throws {
        try "plugin-folders: ['\(plugins.path)']\nstate: state\n\(settings)"
            .write(to: folder.appendingPathComponent("farm.conf"), atomically: true, encoding: .utf8)
        try """
            job: \(name)
            inputs: [photos/*.png]
            outputs:
              - name: redacted
                path: out/{stem}.png
                filters: [redact]
                regions:
                  detect: faultdetector

            """.write(to: folder.appendingPathComponent("\(name).job"), atomically: true, encoding: .utf8)
    }

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
        try Self.writeJob("fault", in: folder, plugins: plugins)
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

    /// A photo replaced while the run reads it never gets another photo's boxes: replaced
    /// after its search (while the next photo is searched), its output is not put in place,
    /// and the next run searches it again; replaced during its own search, its boxes are
    /// neither used nor cached under the hash of the photo before. (The boxes of one photo
    /// once redacted the photo that took its place, and a photo replaced while it was hashed
    /// had the new one's boxes filed under its hash, for every later copy of it.)
    @Test(arguments: [(120, "after its search"), (300, "during its search")])
    func aPhotoReplacedWhileTheRunReadsItIsNotWrittenWithAnothersBoxes(renameWidth: Int, when: String) throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let photos = folder.appendingPathComponent("photos"), plugins = folder.appendingPathComponent("plugins")
        try FileManager.default.createDirectory(at: photos, withIntermediateDirectories: true)
        let swap = folder.appendingPathComponent("swap.png"), a = photos.appendingPathComponent("a.png")
        try TestPlugins.compile(
            "faultdetector.c", as: "faultdetector", into: plugins,
            defines: ["RENAME_WIDTH=\(renameWidth)", "RENAME_FROM=\"\(swap.path)\"", "RENAME_TO=\"\(a.path)\""])
        // a.png (300 x 200) is searched first, the larger file; then b.png (120 x 80).
        for (path, width, height, level) in [(a.path, 300, 200, 200), (photos.appendingPathComponent("b.png").path, 120, 80, 200), (swap.path, 300, 200, 40)] {
            let black = folder.appendingPathComponent("black.png").path
            try FaceDetectionTests.vips(["black", black, "\(width)", "\(height)", "--bands", "3"])
            try FaceDetectionTests.vips(["linear", black, path, "1", "\(level)", "--uchar"])
        }
        try Self.writeJob("swap", in: folder, plugins: plugins, settings: "workers: 1\n")
        let run = try Blurfarm.run(["run", "swap.job", "--config", "farm.conf"], in: folder)
        #expect(run.status == 1, "\(when): \(run.stdout)\(run.stderr)")
        #expect(run.stderr.contains("photos/a.png: changed while its regions were found (replaced or rewritten)"), "\(when): \(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("out/a.png").path), "\(when)")
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("out/b.png").path), "\(when)")
        #expect(!FileManager.default.fileExists(atPath: swap.path))
        // b.png's boxes are cached, and a.png's first content's when they were had before it was
        // replaced; none found while it was (the next run searches it again).
        let cached = try FileManager.default.subpathsOfDirectory(atPath: folder.appendingPathComponent("state/detections").path)
            .filter { $0.hasSuffix(".json") }
        #expect(cached.count == (renameWidth == 300 ? 1 : 2), "\(when): \(cached)")
        let again = try Blurfarm.run(["run", "swap.job", "--config", "farm.conf"], in: folder)
        #expect(again.status == 0 && again.stdout.contains("1 written"), "\(when): \(again.stdout)\(again.stderr)")
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("out/a.png").path), "\(when)")
    }
}
