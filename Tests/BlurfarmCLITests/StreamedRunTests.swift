import BlurfarmTestSupport
import Foundation
import Testing

/// `blurfarm run` streams images band by band through the worker pool: the variants of one
/// input share one decode, the bytes are those of the whole-image path (which `verify: decode`
/// takes), and a decode that fails half way leaves no output and no temporary file.
@Suite(.tags(.process), .blocking) struct StreamedRunTests {
    static let manifest = """
        job: streamed
        inputs: [photos/*]
        tile: 96
        outputs:
          - name: soft
            path: out/soft/{stem}.jpg
            filters:
              - gaussian:
                  sigma: 6
            edge: clamp
          - name: swept
            path: out/swept/{stem}.png
            filters:
              - motion:
                  radius: 9
                  angle: 30
              - gaussian:
                  sigma: 2
            edge: mirror
            colour: linear
          - name: frosted
            path: out/frosted/{stem}.png
            filters:
              - frost:
                  style: light
            edge: grow
          - name: thumb
            path: out/thumb/{stem}.png
            resize:
              width: 64

        """

    static let photos = [
        "photos/plasma-Kite.jpg", "special/deep-16bit.png", "special/alpha-garbage-under-transparent.png", "special/cmyk.jpg",
    ]

    /// Every file below `folder/out`, by path relative to it.
    static func outputs(_ folder: URL) throws -> [String: Data] {
        let out = folder.appendingPathComponent("out")
        var files: [String: Data] = [:]
        for case let path as String in FileManager.default.enumerator(atPath: out.path)! {
            var isFolder: ObjCBool = false
            let url = out.appendingPathComponent(path)
            if FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder), !isFolder.boolValue {
                files[path] = try Data(contentsOf: url)
            }
        }
        return files
    }

    @Test func variantsStreamThroughTheWorkersFromOneDecodeToTheBytesOfTheWholeImagePath() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let photos = folder.appendingPathComponent("photos")
        try FileManager.default.createDirectory(at: photos, withIntermediateDirectories: true)
        for photo in Self.photos {
            try FileManager.default.copyItem(
                atPath: Fixtures.corpus(photo), toPath: photos.appendingPathComponent((photo as NSString).lastPathComponent).path)
        }
        let job = folder.appendingPathComponent("job.job")
        try Self.manifest.write(to: job, atomically: true, encoding: .utf8)
        // Band by band across the workers, never an image to one worker whole (WholeImageTests).
        let config = folder.appendingPathComponent("farm.conf")
        try "whole-image-pixels: 0\nstate: state\n".write(to: config, atomically: true, encoding: .utf8)
        let report = folder.appendingPathComponent("report.json")
        var files: [[String: Data]] = [], reports: [[String: [String: Any]]] = []
        for verify in ["checksum", "decode", "untiled"] {
            let result = try Blurfarm.run([
                "run", job.path, "--config", config.path, "--workers", "2", "--verify", verify, "--force", "--quiet",
                "--report", report.path,
            ])
            #expect(result.status == 0, "\(result.stderr)")
            files.append(try Self.outputs(folder))
            reports.append(try WorkerPoolTests.reportedOutputs(report))
            try FileManager.default.removeItem(at: folder.appendingPathComponent("out"))
        }
        #expect(files[0].count == 16 && files[0] == files[1] && files[1] == files[2], "\(files[0].keys.sorted())")
        let (streamed, whole) = (reports[0], reports[1])
        #expect(whole.values.allSatisfy { $0["bands"] as? Int == 0 }, "verify: decode renders whole images")
        for (path, output) in streamed {
            let bands = output["bands"] as? Int ?? -1
            #expect(output["checksum"] as? String == whole[path]?["checksum"] as? String, "\(path)")
            if path.contains("/soft/") || path.contains("/swept/") {
                #expect(bands > 1, "\(path) was not streamed")
            } else if path.contains("/thumb/") {
                #expect(bands == 0, "\(path): a resize decodes whole")
            }
        }
        // The variants of an input streamed together share its one decode.
        for stem in ["plasma-Kite", "deep-16bit", "cmyk"] {
            let soft = streamed.first { $0.key.contains("/soft/\(stem).") }?.value
            let swept = streamed.first { $0.key.contains("/swept/\(stem).") }?.value
            #expect(soft?["decodeSeconds"] as? Double != nil)
            #expect(soft?["decodeSeconds"] as? Double == swept?["decodeSeconds"] as? Double, "\(stem)")
        }
    }

    @Test func aDecodeFailingHalfWayFailsTheInputsStreamedOutputsAndLeavesNothingBehind() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let photos = folder.appendingPathComponent("photos")
        try FileManager.default.createDirectory(at: photos, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: Fixtures.corpus("photos/plasma-Kite.jpg"), toPath: photos.appendingPathComponent("good.jpg").path)
        try LyingFiles.truncatedWithEndMarker(Fixtures.corpus("photos/plasma-Volna.jpg"), keeping: 0.6)
            .write(to: photos.appendingPathComponent("cut.jpg"))
        let job = folder.appendingPathComponent("job.job")
        try Self.manifest.write(to: job, atomically: true, encoding: .utf8)
        let report = folder.appendingPathComponent("report.json")
        let result = try Blurfarm.run(["run", job.path, "--workers", "2", "--quiet", "--report", report.path])
        #expect(result.status == 1, "\(result.stderr)")
        let outputs = try WorkerPoolTests.reportedOutputs(report)
        for (path, output) in outputs {
            if path.contains("/cut.") {
                #expect(output["status"] as? String == "failed", "\(path)")
                #expect((output["error"] as? [String: Any])?["kind"] as? String == "decode", "\(path)")
            } else {
                #expect(output["status"] as? String == "written", "\(path)")
            }
        }
        let left = try Self.outputs(folder).keys.sorted()
        #expect(left == ["frosted/good.png", "soft/good.jpg", "swept/good.png", "thumb/good.png"], "\(left)")
    }
}
