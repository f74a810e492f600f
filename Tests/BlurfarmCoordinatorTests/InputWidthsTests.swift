@testable import BlurfarmCoordinator
import BlurfarmState
import BlurfarmTestSupport
import Foundation
import Testing

/// The inputs' widths kept in the job's records (``InputWidths``, ``KeptWidth``): looked up a
/// batch at a time, a header read only where the input's stamp is not the kept one, the widths
/// read waiting in the plan's file until the run keeps them, the stale ones forgotten by the
/// job's own run only, a shard's laid over the job's by the merge, and the file of earlier
/// versions moved in and removed.
@Suite struct InputWidthsTests {
    /// A folder with `count` files `in/NN.png` (their bytes do not matter: the widths come
    /// from the test's `header`), and the job's state folder.
    struct Folder {
        let root: String
        var state: String { root + "/state" }
        func input(_ index: Int) -> String { root + String(format: "/in/%02d.png", index) }

        init(count: Int) throws {
            root = try StateFolderTests.temporaryFolder()
            try FileManager.default.createDirectory(atPath: root + "/in", withIntermediateDirectories: true)
            for index in 0..<count { try Data("\(index)".utf8).write(to: URL(fileURLWithPath: input(index))) }
        }
    }

    /// Asks `widths` the widths of `inputs` (indexes) as the planner does, `batch` at a time;
    /// the header of input i says 100 + i, plus `shift`. Returns the widths and the headers read.
    static func ask(
        _ widths: InputWidths, _ inputs: [Int], in folder: Folder, batch: Int = 3, shift: Int = 0
    ) -> (widths: [Int?], headers: [Int]) {
        var headers: [Int] = []
        var found: [Int?] = []
        for first in stride(from: 0, to: inputs.count, by: batch) {
            let part = Array(inputs[first..<min(first + batch, inputs.count)])
            let kept = widths.lookUp(part.map(folder.input))
            for index in part {
                found.append(widths.width(of: folder.input(index), in: kept) { _ in
                    headers.append(index)
                    return 100 + index + shift
                })
            }
        }
        return (found, headers)
    }

    static func kept(_ records: OutputRecords) throws -> [String: Int] {
        Dictionary(uniqueKeysWithValues: try records.widthsPage(after: nil, limit: 1000).map { ($0.input, $0.width) })
    }

    @Test func widthsAreReadOnceKeptByTheRunAndForgottenWithTheirInputs() throws {
        let folder = try Folder(count: 10)
        defer { try? FileManager.default.removeItem(atPath: folder.root) }
        let records = try OutputRecords(folder: folder.state)

        // The first plan reads every header; all but the last two widths wait in the plan's file.
        let first = InputWidths(folder: folder.state, spill: SpillFile(in: [folder.root]), held: 4)
        let asked = Self.ask(first, Array(0..<10), in: folder)
        #expect(asked.widths == (0..<10).map { 100 + $0 } && asked.headers == Array(0..<10))
        #expect(first.waiting == (2, 8))
        #expect(try Self.kept(records).isEmpty, "planning wrote widths")
        try first.save(into: records, forgetting: true)
        #expect(try Self.kept(records) == Dictionary(uniqueKeysWithValues: (0..<10).map { (folder.input($0), 100 + $0) }))

        // The next plan reads the header of the input rewritten alone, and the run forgets the
        // widths of the three inputs no longer planned.
        try Data("rewritten, longer".utf8).write(to: URL(fileURLWithPath: folder.input(4)))
        let second = InputWidths(folder: folder.state, spill: SpillFile(in: [folder.root]), held: 4)
        let again = Self.ask(second, Array(0..<7), in: folder, batch: 2, shift: 1000)
        #expect(again.headers == [4])
        #expect(again.widths == [100, 101, 102, 103, 1104, 105, 106])
        try second.save(into: records, forgetting: true)
        var expected = Dictionary(uniqueKeysWithValues: (0..<7).map { (folder.input($0), 100 + $0) })
        expected[folder.input(4)] = 1104
        #expect(try Self.kept(records) == expected)

        // A shard's save keeps what it read and forgets nothing (it plans a part of the job).
        let shardRecords = try OutputRecords(folder: folder.root + "/shard")
        try shardRecords.keepWidths { nil }
        let shard = InputWidths(folder: folder.state)
        try Data("rewritten again".utf8).write(to: URL(fileURLWithPath: folder.input(0)))
        #expect(Self.ask(shard, [0, 1], in: folder, shift: 2000).headers == [0])
        try shard.save(into: shardRecords, forgetting: false)
        #expect(try Self.kept(shardRecords) == [folder.input(0): 2100])
        var other = [[KeptWidth(input: "/elsewhere.png", stamp: try #require(FileStamp.of(folder.input(1))), width: 7)]]
        try shardRecords.keepWidths { other.popLast() }
        try shard.save(into: shardRecords, forgetting: false)
        #expect(try Self.kept(shardRecords).count == 2, "a shard's save forgot a width")
    }

    /// A run that asks what is kept writes nothing: the index's log does not grow.
    @Test func aRunThatReadsNoHeaderWritesNothing() throws {
        let folder = try Folder(count: 5)
        defer { try? FileManager.default.removeItem(atPath: folder.root) }
        let records = try OutputRecords(folder: folder.state)
        let first = InputWidths(folder: folder.state)
        _ = Self.ask(first, Array(0..<5), in: folder)
        try first.save(into: records, forgetting: true)
        let log = folder.state + "/" + OutputRecords.fileName + "-wal"
        let size = try FileManager.default.attributesOfItem(atPath: log)[.size] as? Int
        let next = InputWidths(folder: folder.state)
        #expect(Self.ask(next, Array(0..<5), in: folder).headers.isEmpty)
        try next.save(into: records, forgetting: true)
        #expect(try FileManager.default.attributesOfItem(atPath: log)[.size] as? Int == size)
        #expect(try Self.kept(records).count == 5)
    }

    /// The file earlier versions kept is read while it is there: a width whose stamp is the
    /// file's is used, the other read again; the job's run moves them into the index and
    /// removes the file, a shard's leaves it.
    @Test func theFileOfEarlierVersionsIsMovedIntoTheIndex() throws {
        let folder = try Folder(count: 3)
        defer { try? FileManager.default.removeItem(atPath: folder.root) }
        try FileManager.default.createDirectory(atPath: folder.state, withIntermediateDirectories: true)
        let stamp = try #require(FileStamp.of(folder.input(0)))
        var stale = try #require(FileStamp.of(folder.input(1)))
        stale.size += 1
        struct Entry: Encodable {
            var stamp: FileStamp
            var width: Int
        }
        let legacy = [
            RealPath.absolute(folder.input(0)): Entry(stamp: stamp, width: 500),
            RealPath.absolute(folder.input(1)): Entry(stamp: stale, width: 500),
        ]
        let file = folder.state + "/" + InputWidths.legacyFileName
        try JSONEncoder().encode(legacy).write(to: URL(fileURLWithPath: file))

        let shard = InputWidths(folder: folder.state)
        #expect(Self.ask(shard, [0, 1, 2], in: folder).widths == [500, 101, 102])
        try shard.save(into: try OutputRecords(folder: folder.root + "/shard"), forgetting: false)
        #expect(FileManager.default.fileExists(atPath: file), "a shard removed the job's file")

        let records = try OutputRecords(folder: folder.state)
        let widths = InputWidths(folder: folder.state)
        let asked = Self.ask(widths, [0, 1, 2], in: folder)
        #expect(asked.widths == [500, 101, 102] && asked.headers == [1, 2])
        try widths.save(into: records, forgetting: true)
        #expect(!FileManager.default.fileExists(atPath: file))
        #expect(try Self.kept(records) == [folder.input(0): 500, folder.input(1): 101, folder.input(2): 102])
    }

    /// The merge lays a shard's widths over the job's: the shard's replace the job's, the
    /// job's others stay, in pages of any size.
    @Test func aShardsWidthsAreLaidOverTheJobsByTheMerge() throws {
        let folder = try Folder(count: 1)
        defer { try? FileManager.default.removeItem(atPath: folder.root) }
        let stamp = try #require(FileStamp.of(folder.input(0)))
        let job = JobStateFolder(path: folder.state)
        let records = try OutputRecords(folder: job.path)
        let count = OutputRecords.widthsPage + 3
        var jobs = [[KeptWidth(input: "/a/0", stamp: stamp, width: 1), KeptWidth(input: "/job", stamp: stamp, width: 2)]]
        try records.keepWidths { jobs.popLast() }
        let shard = try OutputRecords(folder: job.shard(try #require(JobShard(index: 0, count: 2))).path)
        var batches = [(0..<count).map { KeptWidth(input: "/a/\($0)", stamp: stamp, width: 10 + $0) }]
        try shard.keepWidths { batches.popLast() }
        try ShardRecords.merge(job, into: records)
        let merged = try records.widthsPage(after: nil, limit: 2 * count)
        #expect(merged.count == count + 1)
        #expect(merged.first { $0.input == "/job" }?.width == 2)
        #expect(merged.filter { $0.input.hasPrefix("/a/") }.allSatisfy { $0.width == 10 + Int($0.input.dropFirst(3))! })
    }
}
