import BlurfarmCore
import BlurfarmDetection
import BlurfarmPlugins
import BlurfarmSystem
import Synchronization

/// Answers detection tasks (docs/protocol.md, "detectionTask (11)"): the photo decoded as shown and
/// searched with `PhotoSearch`, the coordinator's own algorithm, by the detector the task names
/// (loaded from the worker's plugin folders when a task first names it). Each detector keeps
/// its session from photo to photo, so that a network set up for a size serves the next photo
/// of that size with the buffers it has, in this process's one heap; ``closeSessions()`` gives
/// them back when other work comes. A photo that cannot be decoded, and a detector that fails,
/// are answers; a detector that crashes takes the worker with it, and the pool tries the photo
/// again on another.
final class DetectionTaskRunner: Sendable {
    /// Where detectors are loaded from; nil: this worker loads no plugin, and refuses.
    let plugins: PluginLoader?
    /// The detectors tasks named, by name and model folder.
    private let detectors = Mutex<[String: DetectorSessions]>([:])

    init(plugins: PluginLoader?) { self.plugins = plugins }

    /// The answer to `task`: the photo's size as shown and its boxes, or why not.
    func execute(_ task: DetectionTask) -> DetectionResult {
        func failed(_ kind: DetectionFailure.Kind, code: String? = nil, _ message: String) -> DetectionResult {
            DetectionResult(taskID: task.taskID, outcome: .failed(DetectionFailure(kind: kind, code: code, message: message)))
        }
        let sessions: DetectorSessions
        do throws(PluginError) {
            sessions = try self.sessions(of: task)
        } catch {
            return failed(.detector, "\(error)")
        }
        do throws(PhotoSearch.Failure) {
            let found = try sessions.withSession { (session) throws(PhotoSearch.Failure) in
                // The coordinator files the boxes under its detector's identity: another finds others.
                let identity = sessions.identity(of: session, schedule: task.schedule)
                guard identity == task.identity else {
                    throw .detector(PluginError(
                        sessions.detector.path,
                        "it is now '\(identity)', not '\(task.identity)' as the run began: was the model or the plugin replaced?"))
                }
                return try PhotoSearch.boxes(
                    ofImageAt: task.input.path, session: session, schedule: task.schedule, threads: task.threads,
                    pixelLimit: task.input.pixelLimit, memoryLimit: task.input.memoryLimit)
            }
            return DetectionResult(taskID: task.taskID, outcome: .found(width: found.width, height: found.height, boxes: found.boxes))
        } catch {
            switch error {
            // Said without the descriptor's path: the coordinator names the input.
            case .decode(let error): return failed(.decode, code: "\(error.code)", error.message)
            case .detector(let error): return failed(.detector, "\(error)")
            }
        }
    }

    /// The sessions of the detector `task` names, loaded when first named.
    private func sessions(of task: DetectionTask) throws(PluginError) -> DetectorSessions {
        let key = task.detector + "\u{0}" + task.modelFolder
        if let kept = detectors.withLock({ $0[key] }) { return kept }
        guard let plugins else { throw PluginError(task.detector, "this worker was started without plugin folders") }
        let loaded = try DetectorSessions(try plugins.detector(named: task.detector), modelFolder: task.modelFolder)
        detectors.withLock { $0[key] = loaded }
        return loaded
    }

    /// Closes every detector's sessions and returns what the allocator kept of their
    /// networks' buffers (hundreds of megabytes a tile): the photos are searched, and tiles or
    /// whole images come now. Nothing when no session is open.
    func closeSessions() {
        let open = detectors.withLock { detectors in
            defer { detectors = [:] }
            return detectors
        }
        guard !open.isEmpty else { return }
        for sessions in open.values { sessions.closeIdle() }
        Syscalls.returnFreedMemory()
    }
}
