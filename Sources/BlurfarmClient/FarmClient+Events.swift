import AsyncHTTPClient
import BlurfarmAPI
import Foundation
import NIOCore

/// Waiting on the service's event stream (`GET /api/v1/events`, docs/api.md): a job's end is
/// seen as the server says it, not at the next poll.
extension FarmClient {
    /// Follows the event stream until job `id` is finished and returns it: as the event that
    /// finished it tells it (its manifest's text not shown), or as asked when it had finished
    /// before; nil when the stream ends or breaks first (the server stopped). The job is asked
    /// once the stream is connected (every change after that comes as an event), then each
    /// event of it is checked as it comes; `progress` sees the job at each. The stream says `: keep-alive` every 15 seconds:
    /// ``http``'s read timeout (60 s of silence) ends it when the server is gone.
    ///
    /// - Throws: ``ClientError`` as ``job(_:)`` does; ``ClientError/refused(status:message:)``
    ///   when the server refuses the stream.
    func followEvents(until id: Int64, progress: (JobView) -> Void) async throws(ClientError) -> JobView? {
        var request = request(.GET, "api/v1/events")
        request.headers.add(name: "Accept", value: "text/event-stream")
        let response: HTTPClientResponse
        do {
            response = try await Self.http.execute(request, deadline: .distantFuture)
        } catch {
            throw .unreachable(server: base, reason: Self.reason(error))
        }
        guard response.status == .ok else {
            throw .refused(status: Int(response.status.code), message: "HTTP \(response.status.code) for the event stream")
        }
        var event = "", data = ""
        var pending: [UInt8] = []
        do {
            for try await buffer in response.body {
                pending.append(contentsOf: buffer.readableBytesView)
                while let end = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    var line = pending[..<end]
                    if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
                    let text = String(decoding: line, as: UTF8.self)
                    pending.removeSubrange(...end)
                    if text == ": connected" {
                        let view = try await job(id)
                        if view.job.state.isFinished { return view }
                        progress(view)
                    } else if text.isEmpty {
                        // The end of an event.
                        defer { (event, data) = ("", "") }
                        guard ["job", "output", "progress"].contains(event), let view = JobView(event: Data(data.utf8)),
                            view.job.id == id
                        else { continue }
                        // The finishing event's job is the job as it ended (not asked again).
                        if view.job.state.isFinished { return view }
                        progress(view)
                    } else if text.hasPrefix("event:") {
                        event = text.dropFirst("event:".count).trimmingCharacters(in: .whitespaces)
                    } else if text.hasPrefix("data:") {
                        data += (data.isEmpty ? "" : "\n") + text.dropFirst("data:".count).trimmingCharacters(in: .whitespaces)
                    }
                }
            }
        } catch let error as ClientError {
            throw error
        } catch {
            return nil  // the stream broke: the server stopped
        }
        return nil
    }
}
