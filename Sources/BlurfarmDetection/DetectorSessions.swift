import BlurfarmPlugins
import Synchronization

/// A detector's sessions, kept from photo to photo (a session's network keeps its buffers for
/// the input sizes it served last: the next photo of a size reuses them), one for each thread
/// using the detector at once; given back with ``closeIdle()``, whose caller then returns what
/// the allocator kept (`Syscalls.returnFreedMemory`).
public final class DetectorSessions: Sendable {
    public let detector: Detector
    /// Where each new session opens its model.
    public let modelFolder: String
    private let idle: Mutex<[DetectorSession]>

    /// Sessions of `detector` with models from `modelFolder`; `opened`, a first one already open.
    public init(_ detector: Detector, modelFolder: String, opened: DetectorSession? = nil) {
        self.detector = detector
        self.modelFolder = modelFolder
        idle = Mutex(opened.map { [$0] } ?? [])
    }

    /// `body` with a session no other thread uses (an idle one, else a new one), kept for the
    /// next when it returns.
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
        defer { idle.withLock { $0.append(session) } }
        return try body(session)
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
