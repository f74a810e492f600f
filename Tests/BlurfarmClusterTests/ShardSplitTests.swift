import BlurfarmCluster
@testable import BlurfarmCoordinator
import BlurfarmManifest
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
            try Self.encodedWhole(split).write(to: URL(fileURLWithPath: path))
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

    /// A split encoded whole, the tests' oracle: what `JSONEncoder` makes of it with the
    /// reports' settings, a name's bytes kept.
    static func encodedWhole(_ split: [[String]]) throws -> Data { try RunReport.encoder().encode(split) }

    /// Lists of strings written a batch at a time (a split) are byte for byte the lists
    /// encoded whole, whatever the batches: names with quotes, backslashes, control characters
    /// and bytes that are not UTF-8 (kept, not shown), empty lists and batches, no list, and
    /// lists of several batches and pieces of the file.
    @Test func listsWrittenABatchAtATimeAreTheListsEncodedWhole() async throws {
        let folder = try ShardReportsTests.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        func check(_ split: [[String]], batch: Int) throws {
            let path = folder + "/split-\(UUID().uuidString).json"
            try RunReport.writeExact(listsOf: split.count, to: path) { list, add in
                for start in stride(from: 0, to: split[list].count, by: batch) {
                    try add(Array(split[list][start..<min(start + batch, split[list].count)]))
                }
                try add([])
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Self.encodedWhole(split))
        }
        await propertyCheck(count: 200, input: Self.splits, Gen.int(in: 1...4)) { split, batch in try check(split, batch: batch) }
        try check([[], (0..<9000).map { "/split/out/\($0).jpg" }, [], ["/split/\"quoted\"\n"]], batch: 4096)
        try check([], batch: 1)
    }

    /// A plan's split lists each shard's outputs: the outputs of the inputs the assignment
    /// gives it, in plan order, a shard of no input empty; as the split encoded whole says.
    @Test func aPlansSplitListsTheOutputsOfTheInputsEachShardIsGiven() throws {
        let folder = try ShardReportsTests.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let specs = try (0..<3).map { v in VariantSpec(name: "v\(v)", pathTemplate: try PathTemplate("out/v\(v)/{stem}.png")) }
        let inputs = (0..<2000).map { i in
            PlannedInput(
                path: "/job/in/\(i).jpg", relativePath: "in/\(i).jpg",
                outputs: specs.map { PlannedOutput(variant: $0, path: "/job/out/\($0.name)/\(i).png") })
        }
        let plan = JobPlan(
            job: JobSpec(name: "split", inputs: ["in/*"], outputs: specs), manifestPath: "/job/job.job", folder: "/job",
            inputs: PlannedInputs(inputs), tileSize: 0)
        // Shard 2 of 4 gets no input; shard 0 most of them (more outputs than a batch).
        let assigned = (0..<inputs.count).map { $0 % 5 == 0 ? 1 : $0 % 7 == 0 ? 3 : 0 }
        let path = folder + "/split.json"
        try ShardSplit.write(plan, assigned: assigned, shards: 4, to: path)
        let expected = (0..<4).map { shard in
            zip(inputs, assigned).filter { $0.1 == shard }.flatMap { $0.0.outputs.map(\.path) }
        }
        #expect(expected[0].count > 4096 && expected[2].isEmpty)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Self.encodedWhole(expected))
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
        try Self.encodedWhole([["/a"], ["/b"]]).write(to: URL(fileURLWithPath: path))
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
