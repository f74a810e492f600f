@testable import BlurfarmCoordinator
import BlurfarmState
import BlurfarmManifest
import BlurfarmTestSupport
import Foundation
import Testing

/// The split of a job into shards (`run --shard`): balanced by pixels, whole inputs, the same
/// on every host; and how the shards' records meet the job's (ShardRecords).
@Suite struct JobShardsTests {
    /// A plan of `sizes` inputs (width, height), named `in/NN.jpg`, each with `variants` outputs.
    static func plan(_ sizes: [(Int, Int)], variants: Int = 1) throws -> (JobPlan, [String: (Int, Int)]) {
        let specs = try (0..<variants).map { v in
            VariantSpec(name: "v\(v)", pathTemplate: try PathTemplate("out/v\(v)/{stem}.png"))
        }
        var headers: [String: (Int, Int)] = [:]
        let inputs = sizes.enumerated().map { i, size in
            let name = String(format: "in/%02d.jpg", i)
            headers[name] = size
            return PlannedInput(
                path: "/job/" + name, relativePath: name,
                outputs: specs.map { PlannedOutput(variant: $0, path: "/job/out/\($0.name)/\(i).png") })
        }
        let plan = JobPlan(
            job: JobSpec(name: "mixed", inputs: ["in/*"], outputs: specs), manifestPath: "/job/job.job", folder: "/job",
            inputs: PlannedInputs(inputs), tileSize: 0)
        return (plan, headers)
    }

    static func pixels(_ headers: [String: (Int, Int)]) -> (PlannedInput) -> Int {
        { input in JobShards.weight(of: input, header: headers[input.relativePath].map { ($0.0, $0.1) }) }
    }

    @Test func eightBigImagesAmongFortySmallOnesAreSpreadWithinAQuarterOfTheMean() throws {
        // 8 images of 24 MP (6000 × 4000) and 40 of 1 MP (1000 × 1000), mixed: every fourth of
        // the first 32 is big, so that dealing images in turn (or in runs of 12) would give one
        // shard most of them.
        var sizes: [(Int, Int)] = Array(repeating: (1000, 1000), count: 40)
        for k in 0..<8 { sizes.insert((6000, 4000), at: k * 4) }
        let (plan, headers) = try Self.plan(sizes)
        for count in [2, 3, 4, 5] {
            let shards = plan.shards(count: count, pixels: Self.pixels(headers))
            let loads = shards.map { $0.inputs.reduce(0) { $0 + Self.pixels(headers)($1) } }
            let mean = Double(loads.reduce(0, +)) / Double(count)
            #expect(Double(loads.max()!) <= mean * 1.25, "\(count) shards: \(loads)")
        }
        // Counting images instead would give shard 0 all eight big ones.
        let four = plan.shards(count: 4, pixels: Self.pixels(headers))
        #expect(four.map { $0.inputs.filter { headers[$0.relativePath]! == (6000, 4000) }.count } == [2, 2, 2, 2])
    }

    @Test func everyInputIsInExactlyOneShardWithAllItsOutputsInPlanOrder() throws {
        let sizes = (0..<37).map { i in (i * 7919 % 4990 + 10, i * 104_729 % 4990 + 10) }
        let (plan, headers) = try Self.plan(sizes, variants: 3)
        for count in 1...9 {
            let shards = plan.shards(count: count, pixels: Self.pixels(headers))
            let all = shards.flatMap(\.inputs).map(\.relativePath)
            #expect(all.sorted() == plan.inputs.map(\.relativePath))
            for shard in shards {
                #expect(shard.inputs.allSatisfy { $0.outputs.count == 3 })
                #expect(shard.inputs.map(\.relativePath) == shard.inputs.map(\.relativePath).sorted())
            }
        }
    }

    @Test func theSplitDependsOnTheInputsNotOnTheirOrder() throws {
        let sizes = [(300, 200), (300, 200), (50, 50), (1000, 10), (300, 200), (7, 7), (640, 480)]
        let (plan, headers) = try Self.plan(sizes)
        let reversed = JobPlan(
            job: plan.job, manifestPath: plan.manifestPath, folder: plan.folder, inputs: PlannedInputs(plan.inputs.reversed()),
            tileSize: 0)
        for index in 0..<3 {
            let shard = try #require(JobShard(index: index, count: 3))
            let a = plan.shard(shard, pixels: Self.pixels(headers)).inputs.map(\.relativePath)
            let b = reversed.shard(shard, pixels: Self.pixels(headers)).inputs.map(\.relativePath)
            #expect(a == b.reversed())
        }
    }

    @Test func aFixedSplitKeepsItsShardsWhenAnInputsPixelsChange() throws {
        let (plan, headers) = try Self.plan([(100, 100), (200, 200), (300, 300), (400, 400)])
        let split = plan.shards(count: 2, pixels: Self.pixels(headers)).map { $0.inputs.flatMap(\.outputs).map(\.path) }
        var changed = headers
        changed["in/00.jpg"] = (5000, 5000)  // a corrupt input fixed: its header reads now
        for index in 0..<2 {
            let shard = try #require(JobShard(index: index, count: 2))
            #expect(plan.shard(shard, split: split).inputs.flatMap(\.outputs).map(\.path) == split[index])
        }
        #expect(plan.shards(count: 2, pixels: Self.pixels(changed)).map { $0.inputs.flatMap(\.outputs).map(\.path) } != split)
    }

    @Test func shardsOutOfRangeDoNotExist() {
        #expect(JobShard(index: 4, count: 4) == nil)
        #expect(JobShard(index: -1, count: 4) == nil)
        #expect(JobShard(index: 0, count: 0) == nil)
        #expect(JobShard(index: 3, count: 4)?.description == "3/4")
    }

    /// The deal written out plainly, one load per shard and a scan for the lightest (the rule
    /// ``JobShards/assign(weights:names:count:)`` keeps in a heap over at most as many shards
    /// as inputs).
    static func referenceAssign(weights: [Int], names: [String], count: Int) -> [Int] {
        let order = weights.indices.sorted { weights[$0] != weights[$1] ? weights[$0] > weights[$1] : names[$0] < names[$1] }
        var load = [Int](repeating: 0, count: count)
        var shard = [Int](repeating: 0, count: weights.count)
        for item in order {
            let lightest = load.indices.min { load[$0] != load[$1] ? load[$0] < load[$1] : $0 < $1 }!
            shard[item] = lightest
            load[lightest] += max(weights[item], 0)
        }
        return shard
    }

    /// The heap deals exactly as the plain rule does, over random weights (with ties, zeros and
    /// negatives among them) and counts below, at and above the number of inputs: every host,
    /// whatever its version, computes the same split.
    @Test func theDealIsThePlainLightestShardRuleForEveryCount() {
        var random = SplitMix(seed: 41)
        for _ in 0..<300 {
            let n = Int(random.next() % 40)
            let weights = (0..<n).map { _ in Int(random.next() % 12) - 2 }
            let names = (0..<n).map { String(format: "in/%03d.jpg", $0) }.shuffled(using: &random)
            for count in [1, 2, 3, 7, max(1, n - 1), max(1, n), n + 1, 3 * n + 5] {
                #expect(
                    JobShards.assign(weights: weights, names: names, count: count)
                        == Self.referenceAssign(weights: weights, names: names, count: count), "\(weights) \(count)")
            }
        }
        // A count far beyond the inputs costs nothing: the inputs go to the first shards, heaviest first.
        #expect(JobShards.assign(weights: [5, 9, 7], names: ["a", "b", "c"], count: .max) == [2, 0, 1])
    }

    // MARK: The shards' records

    static func record(_ output: String, input: String, written: TimeInterval, hash: Character = "b") -> OutputRecord {
        let stamp = FileStamp(size: 1, modified: 1, changed: 2, inode: 3, device: 4)
        return OutputRecord(
            output: output, input: input, recipe: "r",
            inputFile: FileFingerprint(stamp: stamp, hash: String(repeating: "a", count: 32)),
            outputFile: FileFingerprint(stamp: stamp, hash: String(repeating: hash, count: 32)),
            written: Date(timeIntervalSince1970: written))
    }

    static func failure(_ input: String, failed: TimeInterval) -> InputFailure {
        let stamp = FileStamp(size: 1, modified: 1, changed: 2, inode: 3, device: 4)
        return InputFailure(
            input: input, inputFile: FileFingerprint(stamp: stamp, hash: String(repeating: "c", count: 32)), reason: "corrupt",
            decoder: "d", failed: Date(timeIntervalSince1970: failed))
    }

    @Test func theJobMergesItsShardsRecordsTheLaterWrittenWinningAndTheirFilesGo() throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("blurfarm-shards-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: state) }
        let job = JobStateFolder(state: state, jobName: "j", manifestPath: "/nowhere/j.job")
        let jobRecords = try OutputRecords(folder: job.path)
        try jobRecords.add(Self.record("/o/1", input: "/i/1", written: 100, hash: "1"))  // older than shard 0's
        try jobRecords.add(Self.record("/o/2", input: "/i/2", written: 300, hash: "2"))  // newer than shard 0's
        try jobRecords.add(Self.failure("/i/3", failed: 100))  // shard 1 wrote /o/3 since
        let shard0 = try #require(JobShard(index: 0, count: 2)), shard1 = try #require(JobShard(index: 1, count: 2))
        do {
            let records = try OutputRecords(folder: job.shard(shard0).path)
            try records.add(Self.record("/o/1", input: "/i/1", written: 200, hash: "9"))
            try records.add(Self.record("/o/2", input: "/i/2", written: 200, hash: "8"))
            let other = try OutputRecords(folder: job.shard(shard1).path)
            try other.add(Self.record("/o/3", input: "/i/3", written: 200))
            try other.add(Self.failure("/i/4", failed: 200))
        }
        // What status reads, changing nothing.
        let read = try ShardRecords.read(job)
        #expect(read.records[.init("/o/1")]?.outputFile.hash.first == "9")
        #expect(read.records[.init("/o/2")]?.outputFile.hash.first == "2")
        #expect(read.records[.init("/o/3")] != nil && read.failures[.init("/i/3")] == nil && read.failures[.init("/i/4")] != nil)
        #expect(FileManager.default.fileExists(atPath: job.shard(shard0).path + "/records.sqlite"))
        // A plain run merges them and removes the shards' files; the same records after reopening.
        let merged = try ShardRecords.openMerging(job)
        #expect(merged.record(for: "/o/1")?.outputFile.hash.first == "9")
        #expect(merged.record(for: "/o/2")?.outputFile.hash.first == "2")
        #expect(merged.record(for: "/o/3") != nil && merged.failure(for: "/i/3") == nil && merged.failure(for: "/i/4") != nil)
        #expect(!FileManager.default.fileExists(atPath: job.shard(shard0).path + "/records.sqlite"))
        #expect(!FileManager.default.fileExists(atPath: job.shard(shard1).path + "/records.sqlite"))
        #expect(try OutputRecords(folder: job.path).all == merged.all)
    }

    /// Twin paths (`é`, and `e` with a combining accent: one string to Swift, two files) are
    /// merged apart: each output's record is the later of its own two, each input's failure
    /// goes or stays by its own outputs.
    @Test func twinPathsAreMergedApart() throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("blurfarm-shards-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: state) }
        let job = JobStateFolder(state: state, jobName: "j", manifestPath: "/nowhere/j.job")
        let (composed, decomposed) = ("\u{E9}", "e\u{301}")
        let jobRecords = try OutputRecords(folder: job.path)
        try jobRecords.add(Self.record("/o/\(composed)", input: "/i/\(composed)", written: 300, hash: "1"))
        try jobRecords.add(Self.record("/o/\(decomposed)", input: "/i/\(decomposed)", written: 100, hash: "2"))
        try jobRecords.add(Self.failure("/i/\(decomposed)", failed: 150))
        do {
            let shard = try OutputRecords(folder: job.shard(try #require(JobShard(index: 0, count: 2))).path)
            try shard.add(Self.record("/o/\(composed)", input: "/i/\(composed)", written: 200, hash: "9"))
            try shard.add(Self.record("/o/\(decomposed)", input: "/i/\(decomposed)", written: 200, hash: "8"))
            try shard.add(Self.failure("/i/\(composed)", failed: 400))
        }
        let read = try ShardRecords.read(job)
        #expect(read.records.count == 2)
        #expect(read.records[.init("/o/\(composed)")]?.outputFile.hash.first == "1")
        #expect(read.records[.init("/o/\(decomposed)")]?.outputFile.hash.first == "8")
        #expect(read.failures.keys.map(\.text) == ["/i/\(composed)"])
        // The same when merged, in the paths' byte order (`e`, 0x65, before `é`, 0xC3 0xA9).
        let merged = try ShardRecords.openMerging(job)
        #expect(merged.all.map { $0.outputFile.hash.first } == ["8", "1"])
        #expect(merged.failures.map { Array($0.input.utf8) } == [Array("/i/\(composed)".utf8)])
    }

    @Test func aRunningShardsRecordsAreLeftForLaterAndAShardStartsFromTheJobs() throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("blurfarm-shards-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: state) }
        let job = JobStateFolder(state: state, jobName: "j", manifestPath: "/nowhere/j.job")
        let shard = try #require(JobShard(index: 1, count: 3))
        let (plan, _) = try Self.plan([(10, 10), (20, 20)])
        let jobRecords = try OutputRecords(folder: job.path)
        try jobRecords.add(Self.record("/job/out/v0/0.png", input: "/job/in/00.jpg", written: 100))
        try jobRecords.add(Self.record("/elsewhere.png", input: "/job/in/99.jpg", written: 100))
        // The shard's records start with the job's of the shard's own outputs only.
        let records = try ShardRecords.open(shard, of: job, plan: plan)
        #expect(records.all.map(\.output) == ["/job/out/v0/0.png"])
        try records.add(Self.record("/job/out/v0/1.png", input: "/job/in/01.jpg", written: 200))
        // While the shard holds its lock, a merge leaves its records alone.
        guard case .acquired(let lock) = try JobLock.acquire(job.shard(shard).lockPath, wait: false) else {
            Issue.record("the shard's lock is taken")
            return
        }
        #expect(try ShardRecords.merge(job, into: jobRecords) == [job.shard(shard).path])
        #expect(jobRecords.record(for: "/job/out/v0/1.png") == nil)
        withExtendedLifetime(lock) {}
    }
}
