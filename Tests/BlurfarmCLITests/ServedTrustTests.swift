import BlurfarmTestSupport
import Foundation
import Testing

/// A real `blurfarm serve` against clients that race its files: the roots hold when a file is
/// opened, not only when a job is submitted, and nothing a client names can block the server.
@Suite(.tags(.process), .blocking) struct ServedTrustTests {
    /// A job paused in the farm, its output folder then swapped for a link to a folder outside
    /// every root (a rename and a symlink, as another user of the root could): resumed, its
    /// outputs are refused when written, and nothing lands outside.
    @Test func anOutputFolderSwappedForALinkOutOfTheRootsIsRefusedWhenWritten() throws {
        let (folder, outside) = try Self.folders()
        defer { Self.remove(folder, outside) }
        try ServedFarm.addPhotos(to: folder, count: 20)
        let server = try ServedFarm(folder: folder, workers: 1)
        defer { server.stop() }
        try FileManager.default.createDirectory(atPath: server.path("out/swap"), withIntermediateDirectories: true)
        let id = try server.submit(try server.writeJob("swap", sigma: 16))
        #expect(try server.call("POST", "/api/v1/jobs/\(id)/pause").1["state"] as? String == "paused")
        try server.waitForOutputs(of: id) { !$0.values.contains { $0.state == "rendering" } }
        let written = try server.call("GET", "/api/v1/jobs/\(id)").1["outputsWritten"] as? Int ?? 0
        #expect(written < 20)
        try FileManager.default.moveItem(atPath: server.path("out/swap"), toPath: server.path("out/kept"))
        try FileManager.default.createSymbolicLink(atPath: server.path("out/swap"), withDestinationPath: outside.path)
        _ = try server.call("POST", "/api/v1/jobs/\(id)/resume")
        let job = try server.finished(id)
        let leaked = try FileManager.default.contentsOfDirectory(atPath: outside.path)
        let outputs = try server.call("GET", "/api/v1/jobs/\(id)/outputs").1["outputs"] as? [[String: Any]] ?? []
        let failed = outputs.filter { $0["state"] as? String == "failed" }
        #expect(leaked.isEmpty, "written outside the roots: \(leaked)")
        #expect(job["state"] as? String == "failed", "\(job)")
        #expect(job["outputsWritten"] as? Int == written, "\(job)")
        #expect(failed.count == 20 - written, "\(outputs)")
        #expect(failed.allSatisfy { ($0["error"] as? String)?.contains("outside the roots") == true }, "\(failed)")
    }

    /// A job paused in the farm, its input folder then swapped for a link to a folder outside
    /// every root holding other images of the same names: resumed, those inputs are refused
    /// when they are opened, and no output is made of them.
    @Test func anInputFolderSwappedForALinkOutOfTheRootsIsRefusedWhenRead() throws {
        let (folder, outside) = try Self.folders()
        defer { Self.remove(folder, outside) }
        try ServedFarm.addPhotos(to: folder, count: 20)
        try ServedFarm.addPhotos(to: outside, count: 20)
        let server = try ServedFarm(folder: folder, workers: 1)
        defer { server.stop() }
        let id = try server.submit(try server.writeJob("swapin", sigma: 16))
        #expect(try server.call("POST", "/api/v1/jobs/\(id)/pause").1["state"] as? String == "paused")
        try server.waitForOutputs(of: id) { !$0.values.contains { $0.state == "rendering" } }
        let written = try server.call("GET", "/api/v1/jobs/\(id)").1["outputsWritten"] as? Int ?? 0
        #expect(written < 20)
        try FileManager.default.moveItem(at: folder.appendingPathComponent("photos"), to: folder.appendingPathComponent("kept"))
        try FileManager.default.createSymbolicLink(
            atPath: folder.appendingPathComponent("photos").path, withDestinationPath: outside.appendingPathComponent("photos").path)
        _ = try server.call("POST", "/api/v1/jobs/\(id)/resume")
        let job = try server.finished(id)
        let errors = try server.call("GET", "/api/v1/jobs/\(id)/outputs").1["outputs"] as? [[String: Any]] ?? []
        let made = ((try? FileManager.default.contentsOfDirectory(atPath: server.path("out/swapin"))) ?? []).filter { !$0.hasPrefix(".") }
        #expect(job["outputsWritten"] as? Int == written, "\(job)")
        #expect(made.count == written, "\(made)")
        let messages = errors.compactMap { $0["error"] as? String }
        #expect(messages.count == 20 - written && messages.allSatisfy { $0.contains("outside the roots") }, "\(messages)")
    }

    /// A manifest path that is a FIFO inside a root is refused at once (it would block the
    /// server's queue forever if opened for reading), and the server goes on answering and
    /// stops on SIGTERM.
    @Test func aManifestThatIsAFIFOIsRefusedAndTheServerAnswersOn() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let fifo = folder.appendingPathComponent("job.job").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let server = try ServedFarm(folder: folder, workers: 1)
        let (status, answer) = try server.call("POST", "/api/v1/jobs", json: ["path": fifo])
        let (health, _) = try server.call("GET", "/healthz")
        let (list, _) = try server.call("GET", "/api/v1/jobs")
        let stopped = server.stop(signal: SIGTERM, within: 120)
        #expect(status == 422, "\(answer)")
        #expect((answer["diagnostics"] as? String)?.contains("\(fifo)': is a FIFO, not a regular file") == true, "\(answer)")
        #expect(health == 200)
        #expect(list == 200)
        #expect(stopped.status == 0, "\(stopped.stderr)")
    }

    /// The page's thumbnail of the last output is read beneath the roots: the output replaced
    /// by a link to an image outside them is not served.
    @Test func theThumbnailOfAnOutputReplacedByALinkOutOfTheRootsIsRefused() throws {
        let (folder, outside) = try Self.folders()
        defer { Self.remove(folder, outside) }
        try ServedFarm.addPhotos(to: folder, count: 1)
        let secret = outside.appendingPathComponent("secret.jpg").path
        try FileManager.default.copyItem(atPath: Fixtures.corpus("photos/plasma-Kite.jpg"), toPath: secret)
        let server = try ServedFarm(folder: folder, workers: 1)
        defer { server.stop() }
        let id = try server.submit(try server.writeJob("thumb"))
        #expect(try server.finished(id)["state"] as? String == "completed")
        let before = try server.raw("GET", "/api/v1/thumbnail").0
        let output = try #require(try server.outputs(of: id).keys.first)
        try FileManager.default.removeItem(atPath: output)
        try FileManager.default.createSymbolicLink(atPath: output, withDestinationPath: secret)
        let after = try server.raw("GET", "/api/v1/thumbnail").0
        #expect(before == 200)
        #expect(after == 404)
    }

    /// A scratch folder (the server's) and another beside it, outside its roots.
    static func folders() throws -> (folder: URL, outside: URL) {
        (try Fixtures.temporaryFolder(), try Fixtures.temporaryFolder())
    }

    static func remove(_ folders: URL...) {
        for folder in folders { try? FileManager.default.removeItem(at: folder) }
    }
}
