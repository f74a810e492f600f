import BlurfarmCore
import BlurfarmDetection
import BlurfarmImageIO
import BlurfarmPlugins
import BlurfarmTestSupport
import Foundation
import Testing

@testable import BlurfarmWorker

/// A worker's detection tasks: the photo searched with the detector the task names, the boxes
/// in the photo's pixels; a detector other than the coordinator's (its identity), and a photo
/// that does not decode, are answers that say so.
@Suite(.tags(.process), .blocking) struct DetectionTaskRunnerTests {
    @Test func aSearchGivesTheDetectorsBoxesAndRefusesAnotherIdentity() throws {
        let folder = try TestPlugins.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // The test-only detector: the middle half of the image it is given, scoring 0.9.
        try TestPlugins.compile("faultdetector.c", as: "faultdetector", into: folder)
        let photo = folder.appendingPathComponent("photo.png").path
        try ImageWriter.write(
            PixelBuffer(rect: Rect(width: 200, height: 100)), to: photo, sourceBitDepth: 8, sourceHadAlpha: false, metadata: nil,
            options: EncodeOptions(metadata: .strip, bitDepth: 8))
        let detector = try PluginLoader(folders: [folder.path]).detector(named: "faultdetector")
        let sessions = try DetectorSessions(detector, modelFolder: folder.path)
        let identity = sessions.identity(of: try detector.session(modelFolder: folder.path), schedule: .standard)
        #expect(identity.hasPrefix("faultdetector 1 plugin=") && identity.hasSuffix(DetectionSchedule.standard.key))
        func task(_ id: UInt64, input: String = photo, identity: String) -> DetectionTask {
            DetectionTask(
                taskID: id, imageID: 1, attempt: 1,
                input: TaskInput(path: input, name: "photo.png", pixelLimit: 1 << 30, memoryLimit: 1 << 30),
                detector: "faultdetector", modelFolder: folder.path, identity: identity, threads: 1,
                schedule: .standard)
        }
        let runner = DetectionTaskRunner(plugins: PluginLoader(folders: [folder.path]))
        #expect(runner.execute(task(1, identity: identity)) == DetectionResult(
            taskID: 1, outcome: .found(width: 200, height: 100, boxes: [DetectedBox(x: 50, y: 25, width: 100, height: 50, score: 0.9)])))
        guard case .failed(let other) = runner.execute(task(2, identity: "faultdetector 0")).outcome else {
            Issue.record("a task of another detector's identity was searched")
            return
        }
        #expect(other.kind == .detector)
        #expect(other.message.contains("not 'faultdetector 0' as the run began: was the model or the plugin replaced?"), "\(other.message)")
        guard case .failed(let missing) = runner.execute(task(3, input: folder.appendingPathComponent("none.png").path, identity: identity)).outcome
        else {
            Issue.record("a photo that is not there was searched")
            return
        }
        #expect(missing.kind == .decode && missing.code != nil, "\(missing)")
        #expect(!missing.message.contains(folder.path), "the worker names the input, not its descriptor: \(missing.message)")
    }
}
