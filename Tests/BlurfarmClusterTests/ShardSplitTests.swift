import BlurfarmCluster
import BlurfarmCoordinator
import BlurfarmState
import BlurfarmTestSupport
import Foundation
import PropertyBased
import Testing

/// A split file read a batch of paths at a time into an index (``ShardSplit/read(_:shards:only:)``)
/// answers as the split decoded whole does (``SplitListing``).
@Suite struct ShardSplitTests {
    static let splits = Generator<[[String]], Shrink.None<[[String]]>>(run: { rng in
        (0..<Int.random(in: 1...4, using: &rng)).map { _ in
            // A path holds no NUL (nor does the index: SQLite's text ends at one).
            (0..<Int.random(in: 0...5, using: &rng)).map { _ in "/split/" + RunReportRoundTripTests.path(&rng).replacing("\u{0}", with: "") }
        }
    })

    /// Every shard's outputs, and one shard's alone, are listed as the split decoded whole lists
    /// them: names with quotes, backslashes, control characters and bytes that are not UTF-8,
    /// a path in two shards, an empty shard; and 10,000 paths, several batches and chunks.
    @Test func aSplitReadABatchAtATimeListsWhatTheSplitDecodedWholeLists() async throws {
        let folder = try ShardReportsTests.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // A file each: the property's cases run at once.
        func check(_ split: [[String]]) throws {
            let path = folder + "/split-\(UUID().uuidString).json"
            try ShardSplit.write(split, to: path)
            let asked = split.flatMap { $0 }.map { RealPath.resolveFolder(of: $0) } + ["/split/none"]
            let (read, whole) = (try ShardSplit.read(path, shards: split.count).shards(listing: asked), SplitListing.of( split)(asked))
            #expect(read == whole)
            let only = split.count - 1
            let (readOne, wholeOne) = (
                try ShardSplit.read(path, shards: split.count, only: only).shards(listing: asked), SplitListing.of( split, only: only)(asked)
            )
            #expect(readOne == wholeOne)
        }
        await propertyCheck(count: 200, input: Self.splits) { split in
            var split = split
            if split.count > 1, let first = split[0].first { split[1].append(first) }
            try check(split)
        }
        try check([(0..<6000).map { "/split/out/\($0).jpg" }, [], (6000..<10000).map { "/split/out/\($0).jpg" }])
    }

    /// A file that is not a list of lists of paths, or cut short, is unreadable; one of another
    /// number of shards does not match.
    @Test func aSplitThatCannotBeReadOrDoesNotMatchIsRefused() throws {
        let folder = try ShardReportsTests.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/split.json"
        for text in ["", "[", "[[\"a\"]", "[[\"a\"]] x", "{}", "[\"a\"]", "[[1]]", "[[\"a\", [\"b\"]]]", "[[\"a\"],{}]"] {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            let error = Self.refusal { () throws(ClusterError) in _ = try ShardSplit.read(path, shards: 1) }
            guard case .unreadableSplit(path)? = error else {
                Issue.record("\(text): \(String(describing: error))")
                continue
            }
        }
        try ShardSplit.write([["/a"], ["/b"]], to: path)
        for expected in [3, nil] {
            let error = Self.refusal { () throws(ClusterError) in _ = try ShardSplit.read(path, shards: expected) }
            guard case .splitMismatch(path, 2, expected)? = error else {
                Issue.record("\(String(describing: expected)): \(String(describing: error))")
                continue
            }
        }
        #expect(try ShardSplit.read(path, shards: 2).shards(listing: ["/b"]) == [.init("/b"): [1]])
    }

    /// What `body` throws, nil when it does not.
    static func refusal(_ body: () throws(ClusterError) -> Void) -> ClusterError? {
        do {
            try body()
            return nil
        } catch {
            return error
        }
    }
}
