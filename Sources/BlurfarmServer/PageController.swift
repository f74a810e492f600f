import BlurfarmSystem
import Foundation
import Hummingbird
import NIOCore

/// The status page: its files (from `settings.webFolder`, when the server has one) and
/// `/api/v1/thumbnail`, the last output written, as a small JPEG.
struct PageController {
    let service: FarmService
    let settings: ServerSettings
    let thumbnails = ThumbnailCache()

    var endpoints: RouteCollection<BasicRequestContext> {
        let routes = RouteCollection(context: BasicRequestContext.self)
        routes.get("/api/v1/thumbnail", use: thumbnail)
        if let folder = settings.webFolder {
            for (path, file, type) in [
                ("/", "index.html", "text/html; charset=utf-8"), ("/app.js", "app.js", "text/javascript; charset=utf-8"),
                ("/style.css", "style.css", "text/css; charset=utf-8"),
            ] {
                routes.get(RouterPath(path)) { _, _ in
                    guard let data = FileManager.default.contents(atPath: folder + "/" + file) else {
                        return Routes.problem(.notFound, "the web page's file '\(file)' is missing from \(folder)")
                    }
                    return Response(
                        status: .ok, headers: [.contentType: type, .cacheControl: "no-cache"],
                        body: .init(byteBuffer: ByteBuffer(bytes: data)))
                }
            }
        }
        return routes
    }

    @Sendable func thumbnail(_ request: Request, context: BasicRequestContext) async throws -> Response {
        guard let output = await service.lastWritten else { return Routes.problem(.notFound, "no output written yet") }
        // Read beneath the roots as the file is now: an output replaced by a link out of them
        // is not shown.
        let file: Int32
        do throws(RootedFileError) {
            file = try service.roots.openFile(output)
        } catch {
            return Routes.problem(.notFound, "the last output cannot be shown: \(error)")
        }
        defer { Syscalls.close(file) }
        guard let data = thumbnails.jpeg(of: output, reading: "/proc/self/fd/\(file)") else {
            return Routes.problem(.notFound, "the last output cannot be read as an image")
        }
        return Response(
            status: .ok, headers: [.contentType: "image/jpeg", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
