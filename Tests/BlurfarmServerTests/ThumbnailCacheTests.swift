@testable import BlurfarmServer
import Foundation
import Synchronization
import Testing

/// The status page's thumbnail of the last output written.
@Suite struct ThumbnailCacheTests {
    /// Asked again for the same file, the cache answers without rendering; a file rewritten
    /// (another identity or time) or another file is rendered again.
    @Test func theThumbnailIsRenderedOnceUntilItsFileChanges() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("blurfarm-thumb-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let first = folder.appendingPathComponent("first.png").path
        let second = folder.appendingPathComponent("second.png").path
        try Data("one".utf8).write(to: URL(fileURLWithPath: first), options: .atomic)
        try Data("other".utf8).write(to: URL(fileURLWithPath: second), options: .atomic)
        let renders = Mutex<[String]>([])
        let cache = ThumbnailCache { path in
            renders.withLock { $0.append((path as NSString).lastPathComponent) }
            return FileManager.default.contents(atPath: path).map { Array($0) }
        }
        #expect(cache.jpeg(of: first) == Array("one".utf8))
        #expect(cache.jpeg(of: first) == Array("one".utf8))
        #expect(renders.withLock { $0 } == ["first.png"])
        try Data("two".utf8).write(to: URL(fileURLWithPath: first), options: .atomic)
        #expect(cache.jpeg(of: first) == Array("two".utf8))
        #expect(cache.jpeg(of: second) == Array("other".utf8))
        #expect(cache.jpeg(of: second) == Array("other".utf8))
        #expect(renders.withLock { $0 } == ["first.png", "first.png", "second.png"])
        #expect(cache.jpeg(of: folder.appendingPathComponent("missing.png").path) == nil)
    }

    /// The thumbnail of a photo: a JPEG at most 320 px wide.
    @Test func theThumbnailOfAPhotoIsASmallJPEG() throws {
        let photo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("samples/plasma-Kite.jpg").path
        let bytes = try #require(ThumbnailCache().jpeg(of: photo))
        #expect(bytes.starts(with: [0xFF, 0xD8, 0xFF]))
        #expect(bytes.count < 100_000)
    }
}
