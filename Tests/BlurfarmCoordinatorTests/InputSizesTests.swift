@testable import BlurfarmCoordinator
import BlurfarmState
import BlurfarmTestSupport
import Foundation
import Testing

/// The inputs' sizes kept in the job's records (``InputSizes``, ``KeptSize``): looked up a
/// batch at a time, a header read only where the input's stamp is not the kept one, the sizes
/// read waiting in the plan's file until the run keeps them, the stale ones forgotten by the
/// job's own run only, a shard's laid over the job's by the merge, and the widths' file of
/// earlier versions removed.
@Suite struct InputSizesTests {
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
    /// the header of input i says 100 + i wide (plus `shift`) and 50 + i high. Returns the
    /// widths and the headers read.
    static func ask(
        _ widths: InputSizes, _ inputs: [Int], in folder: Folder, batch: Int = 3, shift: Int = 0
    ) -> (widths: [Int?], headers: [Int]) {
        var headers: [Int] = []
        var found: [Int?] = []
        for first in stride(from: 0, to: inputs.count, by: batch) {
            let part = Array(inputs[first..<min(first + batch, inputs.count)])
            let kept = widths.lookUp(part.map(folder.input))
            for index in part {
                let size = widths.size(of: folder.input(index), in: kept) { _ in
                    headers.append(index)
                    return (100 + index + shift, 50 + index)
                }
                #expect(size == nil || size?.height == 50 + index)
                found.append(size?.width)
            }
        }
        return (found, headers)
    }

    static func kept(_ records: OutputRecords) throws -> [String: Int] {
        Dictionary(uniqueKeysWithValues: try records.sizesPage(after: nil, limit: 1000).map { ($0.input, $0.width) })
    }

    @Test func widthsAreReadOnceKeptByTheRunAndForgottenWithTheirInputs() throws {
        let folder = try Folder(count: 10)
        defer { try? FileManager.default.removeItem(atPath: folder.root) }
        let records = try OutputRecords(folder: folder.state)

        // The first plan reads every header; all but the last two widths wait in the plan's file.
        let first = InputSizes(folder: folder.state, spill: SpillFile(in: [folder.root]), held: 4)
        let asked = Self.ask(first, Array(0..<10), in: folder)
        #expect(asked.widths == (0..<10).map { 100 + $0 } && asked.headers == Array(0..<10))
        #expect(first.waiting == (2, 8))
        #expect(try Self.kept(records).isEmpty, "planning wrote widths")
        try first.save(into: records, forgetting: true)
        #expect(try Self.kept(records) == Dictionary(uniqueKeysWithValues: (0..<10).map { (folder.input($0), 100 + $0) }))

        // The next plan reads the header of the input rewritten alone, and the run forgets the
        // widths of the three inputs no longer planned.
        try Data("rewritten, longer".utf8).write(to: URL(fileURLWithPath: folder.input(4)))
        let second = InputSizes(folder: folder.state, spill: SpillFile(in: [folder.root]), held: 4)
        let again = Self.ask(second, Array(0..<7), in: folder, batch: 2, shift: 1000)
        #expect(again.headers == [4])
        #expect(again.widths == [100, 101, 102, 103, 1104, 105, 106])
        try second.save(into: records, forgetting: true)
        var expected = Dictionary(uniqueKeysWithValues: (0..<7).map { (folder.input($0), 100 + $0) })
        expected[folder.input(4)] = 1104
        #expect(try Self.kept(records) == expected)

        // A shard's save keeps what it read and forgets nothing (it plans a part of the job).
        let shardRecords = try OutputRecords(folder: folder.root + "/shard")
        try shardRecords.keepSizes { nil }
        let shard = InputSizes(folder: folder.state)
        try Data("rewritten again".utf8).write(to: URL(fileURLWithPath: folder.input(0)))
        #expect(Self.ask(shard, [0, 1], in: folder, shift: 2000).headers == [0])
        try shard.save(into: shardRecords, forgetting: false)
        #expect(try Self.kept(shardRecords) == [folder.input(0): 2100])
        var other = [[KeptSize(input: "/elsewhere.png", stamp: try #require(FileStamp.of(folder.input(1))), width: 7, height: 7)]]
        try shardRecords.keepSizes { other.popLast() }
        try shard.save(into: shardRecords, forgetting: false)
        #expect(try Self.kept(shardRecords).count == 2, "a shard's save forgot a width")
    }

    /// What `slurm submit`'s plan read is kept in the job's records unless a run holds the
    /// job's lock, so that its tasks read no header again; it forgets nothing.
    @Test func sizesReadBySubmitAreKeptUnlessARunHoldsTheLock() throws {
        let folder = try Folder(count: 4)
        defer { try? FileManager.default.removeItem(atPath: folder.root) }
        let job = JobStateFolder(path: folder.state)
        let records = try OutputRecords(folder: folder.state)
        var kept = [[KeptSize(input: folder.input(3), stamp: try #require(FileStamp.of(folder.input(3))), width: 103, height: 53)]]
        try records.keepSizes { kept.popLast() }
        let submit = InputSizes(folder: folder.state)
        #expect(Self.ask(submit, [0, 1], in: folder).headers == [0, 1])
        do {
            guard case .acquired(let lock) = try JobLock.acquire(job.lockPath, wait: false) else {
                Issue.record("the lock is held")
                return
            }
            let keptUnderLock = try withExtendedLifetime(lock) { try submit.keepUnlessLocked(in: job) }
            #expect(!keptUnderLock)
            #expect(try Self.kept(records) == [folder.input(3): 103], "kept under a run's lock")
        }
        #expect(try submit.keepUnlessLocked(in: job))
        #expect(try Self.kept(records) == [folder.input(0): 100, folder.input(1): 101, folder.input(3): 103])
        #expect(Self.ask(InputSizes(folder: folder.state), [0, 1, 2, 3], in: folder).headers == [2])
    }

    /// A run that asks what is kept writes nothing: the index's log does not grow; one that
    /// asks nothing forgets nothing.
    @Test func aRunThatReadsNoHeaderWritesNothing() throws {
        let folder = try Folder(count: 5)
        defer { try? FileManager.default.removeItem(atPath: folder.root) }
        let records = try OutputRecords(folder: folder.state)
        let first = InputSizes(folder: folder.state)
        _ = Self.ask(first, Array(0..<5), in: folder)
        try first.save(into: records, forgetting: true)
        let log = folder.state + "/" + OutputRecords.fileName + "-wal"
        let size = try FileManager.default.attributesOfItem(atPath: log)[.size] as? Int
        let next = InputSizes(folder: folder.state)
        #expect(Self.ask(next, Array(0..<5), in: folder).headers.isEmpty)
        try next.save(into: records, forgetting: true)
        #expect(try FileManager.default.attributesOfItem(atPath: log)[.size] as? Int == size)
        #expect(try Self.kept(records).count == 5)
        // A plan that needs no size (no `sizes`, no split) asks of no input: it forgets none.
        try InputSizes(folder: folder.state).save(into: records, forgetting: true)
        #expect(try Self.kept(records).count == 5, "a run that needed no size forgot them")
    }

    /// The widths' file earlier versions kept is not read (the headers are); the job's run
    /// removes it, even when it has nothing to keep, and a shard's leaves it.
    @Test func theWidthsFileOfEarlierVersionsIsRemovedByTheJobsRun() throws {
        let folder = try Folder(count: 3)
        defer { try? FileManager.default.removeItem(atPath: folder.root) }
        try FileManager.default.createDirectory(atPath: folder.state, withIntermediateDirectories: true)
        let file = folder.state + "/" + InputSizes.legacyFileName
        try Data("{}".utf8).write(to: URL(fileURLWithPath: file))

        let shard = InputSizes(folder: folder.state)
        #expect(Self.ask(shard, [0, 1, 2], in: folder).headers == [0, 1, 2])
        try shard.save(into: try OutputRecords(folder: folder.root + "/shard"), forgetting: false)
        #expect(FileManager.default.fileExists(atPath: file), "a shard removed the job's file")

        let records = try OutputRecords(folder: folder.state)
        let first = InputSizes(folder: folder.state)
        _ = Self.ask(first, [0, 1, 2], in: folder)
        try first.save(into: records, forgetting: true)
        #expect(!FileManager.default.fileExists(atPath: file))
        #expect(try Self.kept(records) == [folder.input(0): 100, folder.input(1): 101, folder.input(2): 102])
        // Put back beside widths all kept: the next run has nothing to keep, and removes it.
        try Data("{}".utf8).write(to: URL(fileURLWithPath: file))
        let next = InputSizes(folder: folder.state)
        #expect(Self.ask(next, [0, 1, 2], in: folder).headers.isEmpty)
        try next.save(into: records, forgetting: true)
        #expect(!FileManager.default.fileExists(atPath: file))
    }

    /// The merge lays a shard's widths over the job's: the shard's replace the job's, the
    /// job's others stay, in pages of any size.
    @Test func aShardsWidthsAreLaidOverTheJobsByTheMerge() throws {
        let folder = try Folder(count: 1)
        defer { try? FileManager.default.removeItem(atPath: folder.root) }
        let stamp = try #require(FileStamp.of(folder.input(0)))
        let job = JobStateFolder(path: folder.state)
        let records = try OutputRecords(folder: job.path)
        let count = OutputRecords.sizesPage + 3
        var jobs = [[KeptSize(input: "/a/0", stamp: stamp, width: 1, height: 1), KeptSize(input: "/job", stamp: stamp, width: 2, height: 2)]]
        try records.keepSizes { jobs.popLast() }
        let shard = try OutputRecords(folder: job.shard(try #require(JobShard(index: 0, count: 2))).path)
        var batches = [(0..<count).map { KeptSize(input: "/a/\($0)", stamp: stamp, width: 10 + $0, height: 1) }]
        try shard.keepSizes { batches.popLast() }
        try ShardRecords.merge(job, into: records)
        let merged = try records.sizesPage(after: nil, limit: 2 * count)
        #expect(merged.count == count + 1)
        #expect(merged.first { $0.input == "/job" }?.width == 2)
        #expect(merged.filter { $0.input.hasPrefix("/a/") }.allSatisfy { $0.width == 10 + Int($0.input.dropFirst(3))! })
    }
}
