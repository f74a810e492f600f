import BlurfarmCore
import BlurfarmPlugins
import BlurfarmState
import Synchronization

/// A detector's sessions, kept from photo to photo (a session's network keeps its buffers for
/// the input sizes it served last: the next photo of a size reuses them), one for each thread
/// using the detector at once; given back with ``closeIdle()``, whose caller then returns what
/// the allocator kept (`Syscalls.returnFreedMemory`).
public final class DetectorSessions: Sendable {
    public let detector: Detector
    /// Where each new session opens its model.
    public let modelFolder: String
    /// The content hash of the detector's library, read when the sessions were made.
    public let libraryHash: String
    private let idle: Mutex<[DetectorSession]>

    /// Sessions of `detector` with models from `modelFolder`; `opened`, a first one already open.
    ///
    /// - Throws: ``PluginError`` when the detector's library cannot be read to hash it.
    public init(_ detector: Detector, modelFolder: String, opened: DetectorSession? = nil) throws(PluginError) {
        self.detector = detector
        self.modelFolder = modelFolder
        do {
            libraryHash = try ContentHash.ofFile(detector.path)
        } catch {
            throw PluginError(detector.path, "cannot read it to hash it: \(error.message)")
        }
        idle = Mutex(opened.map { [$0] } ?? [])
    }

    /// What the boxes `session` finds with `schedule` are filed under: its model's identity
    /// (as the detector names it), the library's hash and the schedule. A changed model, plugin
    /// or schedule finds other boxes; the coordinator and a worker searching for it must say the
    /// same.
    public func identity(of session: DetectorSession, schedule: DetectionSchedule) -> String {
        "\(session.identity) plugin=\(libraryHash) \(schedule.key)"
    }

    /// `body` with a session no other thread uses (an idle one, else a new one), kept for the
    /// next unless the detector failed in it (its state may be broken: the next opens afresh).
    ///
    /// - Throws: ``PhotoSearch/Failure/detector(_:)`` when no session opens; what `body` throws.
    public func withSession<Value>(_ body: (DetectorSession) throws(PhotoSearch.Failure) -> Value) throws(PhotoSearch.Failure)
        -> Value
    {
        let session: DetectorSession
        if let kept = idle.withLock({ $0.popLast() }) {
            session = kept
        } else {
            do {
                session = try detector.session(modelFolder: modelFolder)
            } catch {
                throw .detector(error)
            }
        }
        do throws(PhotoSearch.Failure) {
            let value = try body(session)
            idle.withLock { $0.append(session) }
            return value
        } catch {
            if case .decode = error { idle.withLock { $0.append(session) } }
            throw error
        }
    }

    /// Closes the sessions no thread is using, with their networks' buffers (a tile's take
    /// hundreds of megabytes); the next photo opens one again, its model read again.
    public func closeIdle() {
        let closing = idle.withLock { idle in
            defer { idle = [] }
            return idle
        }
        withExtendedLifetime(closing) {}
    }
}
