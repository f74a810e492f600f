import BlurfarmSystem
import BlurfarmWire
import Synchronization

/// Writes whole frames to a file descriptor, one at a time: the task thread and the heartbeat
/// thread both send, and a lock keeps their frames from interleaving.
///
/// After a write fails (the coordinator closed the pipe) or ``close()`` is called, frames are
/// dropped silently: the worker stops when its input ends.
final class FrameWriter: Sendable {
    private enum Status {
        case open
        case closed
        case failed(SystemCallError)
    }

    private let fd: Int32
    private let status = Mutex(Status.open)

    init(fd: Int32) {
        self.fd = fd
    }

    /// Encodes and writes `message`. Encoding cannot fail for the small messages sent this
    /// way; a result with pixels is encoded by the caller first (``send(frame:)``).
    func send(_ message: WireMessage) {
        guard let frame = try? FrameEncoder.encode(message) else {
            preconditionFailure("\(message.type) frame does not encode")
        }
        send(frame: frame)
    }

    /// Writes an encoded frame.
    func send(frame: [UInt8]) {
        status.withLock { status in
            guard case .open = status else { return }
            do throws(SystemCallError) {
                try Syscalls.writeAll(fd, frame)
            } catch {
                status = .failed(error)
            }
        }
    }

    /// Drops every later frame.
    func close() {
        status.withLock { status in
            if case .open = status { status = .closed }
        }
    }

    /// The write error that stopped the output, if one did.
    var failure: String? {
        status.withLock { status in
            if case .failed(let error) = status { error.description } else { nil }
        }
    }
}
