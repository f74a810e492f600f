import BlurfarmAPI
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Waiting on the service's event stream (`GET /api/v1/events`, docs/api.md): a job's end is
/// seen as the server says it, not at the next poll.
extension FarmClient {
    /// Follows the event stream until job `id` is finished and returns it; nil when the stream
    /// ends first (the server stopped). The job is asked once the stream is connected (every
    /// change after that comes as an event), then each event of it is checked as it comes;
    /// `progress` sees the job at each.
    ///
    /// - Throws: ``ClientError`` as ``job(_:)`` does; ``ClientError/refused(status:message:)``
    ///   when the server refuses the stream.
    func followEvents(until id: Int64, progress: (JobView) -> Void) async throws(ClientError) -> JobView? {
        var request = URLRequest(url: base.appendingPathComponent("api/v1/events"))
        // The stream says `: keep-alive` every 15 seconds: a minute of silence is a server gone.
        request.timeoutInterval = 60
        request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        let stream = EventStream(request: request)
        defer { stream.close() }
        var lines = stream.lines.makeAsyncIterator()
        var event = "", data = ""
        while let line = await lines.next() {
            switch line {
            case .failed(let status):
                throw .refused(status: status, message: "HTTP \(status) for the event stream")
            case .line(let text) where text == ": connected":
                let view = try await job(id)
                if view.job.state.isFinished { return view }
                progress(view)
            case .line(let text) where text.isEmpty:
                // The end of an event.
                defer { (event, data) = ("", "") }
                guard ["job", "output", "progress"].contains(event), let view = JobView(event: Data(data.utf8)),
                    view.job.id == id
                else { continue }
                if view.job.state.isFinished { return try await job(id) }
                progress(view)
            case .line(let text):
                if text.hasPrefix("event:") {
                    event = text.dropFirst("event:".count).trimmingCharacters(in: .whitespaces)
                } else if text.hasPrefix("data:") {
                    data += (data.isEmpty ? "" : "\n") + text.dropFirst("data:".count).trimmingCharacters(in: .whitespaces)
                }
            }
        }
        return nil
    }
}

/// One `text/event-stream` response read as it arrives, line by line (URLSession's data
/// delegate: what Foundation on Linux has for a body that does not end).
private final class EventStream: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    enum Line: Sendable {
        case line(String)
        /// The server answered this status, not 200.
        case failed(status: Int)
    }

    let lines: AsyncStream<Line>
    private let continuation: AsyncStream<Line>.Continuation
    /// Bytes of a line not yet ended; touched only on the session's delegate queue.
    private var pending = Data()
    private var session: URLSession?

    init(request: URLRequest) {
        (lines, continuation) = AsyncStream.makeStream(of: Line.self)
        super.init()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let session = URLSession(configuration: .default, delegate: self, delegateQueue: queue)
        self.session = session
        session.dataTask(with: request).resume()
    }

    /// Stops reading; the session lets go of this delegate.
    func close() {
        session?.invalidateAndCancel()
        continuation.finish()
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200 else {
            continuation.yield(.failed(status: status))
            continuation.finish()
            return completionHandler(.cancel)
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        pending.append(data)
        while let end = pending.firstIndex(of: UInt8(ascii: "\n")) {
            var line = pending[pending.startIndex..<end]
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            continuation.yield(.line(String(decoding: line, as: UTF8.self)))
            pending.removeSubrange(pending.startIndex...end)
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        continuation.finish()
    }
}
