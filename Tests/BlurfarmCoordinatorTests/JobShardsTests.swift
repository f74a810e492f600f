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

    /// Each shard's inputs, in plan order, when `plan` is split in `count`
    /// (``JobPlan/shardAssignment(count:weights:)``).
    static func parts(_ plan: JobPlan, count: Int, weights: [Int]) -> [[PlannedInput]] {
        let assigned = plan.shardAssignment(count: count, weights: weights)
        return (0..<count).map { index in zip(plan.inputs, assigned).filter { $0.1 == index }.map(\.0) }
    }

    @Test func eightBigImagesAmongFortySmallOnesAreSpreadWithinAQuarterOfTheMean() throws {
        // 8 images of 24 MP (6000 × 4000) and 40 of 1 MP (1000 × 1000), mixed: every fourth of
        // the first 32 is big, so that dealing images in turn (or in runs of 12) would give one
        // shard most of them.
        var sizes: [(Int, Int)] = Array(repeating: (1000, 1000), count: 40)
        for k in 0..<8 { sizes.insert((6000, 4000), at: k * 4) }
        let (plan, headers) = try Self.plan(sizes)
        for count in [2, 3, 4, 5] {
            let shards = Self.parts(plan, count: count, weights: plan.inputs.map(Self.pixels(headers)))
            let loads = shards.map { $0.reduce(0) { $0 + Self.pixels(headers)($1) } }
            let mean = Double(loads.reduce(0, +)) / Double(count)
            #expect(Double(loads.max()!) <= mean * 1.25, "\(count) shards: \(loads)")
        }
        // Counting images instead would give shard 0 all eight big ones.
        let four = Self.parts(plan, count: 4, weights: plan.inputs.map(Self.pixels(headers)))
        #expect(four.map { $0.filter { headers[$0.relativePath]! == (6000, 4000) }.count } == [2, 2, 2, 2])
    }

    @Test func everyInputIsInExactlyOneShardWithAllItsOutputsInPlanOrder() throws {
        let sizes = (0..<37).map { i in (i * 7919 % 4990 + 10, i * 104_729 % 4990 + 10) }
        let (plan, headers) = try Self.plan(sizes, variants: 3)
        for count in 1...9 {
            let shards = Self.parts(plan, count: count, weights: plan.inputs.map(Self.pixels(headers)))
            let all = shards.flatMap { $0 }.map(\.relativePath)
            #expect(all.sorted() == plan.inputs.map(\.relativePath))
            for (index, shard) in shards.enumerated() {
                #expect(shard.allSatisfy { $0.outputs.count == 3 })
                #expect(shard.map(\.relativePath) == shard.map(\.relativePath).sorted())
                // The assignment is what each shard's own run takes.
                let part = plan.shard(try #require(JobShard(index: index, count: count)), pixels: Self.pixels(headers))
                #expect(part.inputs.map(\.relativePath) == shard.map(\.relativePath))
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
        let split = Self.parts(plan, count: 2, weights: plan.inputs.map(Self.pixels(headers))).map { $0.flatMap(\.outputs).map(\.path) }
        var changed = headers
        changed["in/00.jpg"] = (5000, 5000)  // a corrupt input fixed: its header reads now
        for index in 0..<2 {
            let shard = try #require(JobShard(index: index, count: 2))
            #expect(plan.shard(shard, listedBy: SplitListing.of( split)).inputs.flatMap(\.outputs).map(\.path) == split[index])
        }
        #expect(Self.parts(plan, count: 2, weights: plan.inputs.map(Self.pixels(changed))).map { $0.flatMap(\.outputs).map(\.path) } != split)
    }

    /// Under a split, an input is run by each shard that lists one of its outputs, the
    /// outputs compared as the files they name: one shard for each input of the split, none
    /// for one new since, two for an output a split written by hand lists twice. Every shard's
    /// listing, made in one walk, is what each shard's own part takes.
    @Test func aSplitGivesEachInputTheShardsThatListItsOutputs() throws {
        let (plan, _) = try Self.plan([(1, 1), (1, 1), (1, 1), (1, 1), (1, 1)], variants: 2)
        let split = [
            ["/job/out/v0/0.png", "/job/out/v1/0.png", "/job/out/v1/../v0/3.png"],
            ["/job/out/v0/1.png", "/job/out/v1/1.png", "/job/out/v1/3.png", "/job/out/v1/0.png"],
            ["/job/out/v0/2.png", "/job/out/v1/2.png"],
        ]
        let listing = plan.shards(listedBy: SplitListing.of( split))
        #expect(listing == [[0, 1], [1], [2], [0, 1], []])
        for index in 0..<3 {
            let shard = try #require(JobShard(index: index, count: 3))
            #expect(plan.shard(shard, listedBy: SplitListing.of( split)).inputs.map(\.relativePath)
                == zip(plan.inputs, listing).filter { $0.1.contains(index) }.map(\.0.relativePath))
            #expect(plan.shards(listedBy: SplitListing.of( split, only: index)) == listing.map { $0.filter { $0 == index } })
        }
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

    /// A state folder of its own (to be removed) and the folder of job `j` in it.
    static func temporaryJob() -> (state: String, job: JobStateFolder) {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("blurfarm-shards-\(UUID().uuidString)").path
        return (state, JobStateFolder(state: state, jobName: "j", manifestPath: "/nowhere/j.job"))
    }

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
        let (state, job) = Self.temporaryJob()
        defer { try? FileManager.default.removeItem(atPath: state) }
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
        let read = Self.contents(try ShardRecords.overlaid(job))
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
        let (state, job) = Self.temporaryJob()
        defer { try? FileManager.default.removeItem(atPath: state) }
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
        let read = Self.contents(try ShardRecords.overlaid(job))
        #expect(read.records.count == 2)
        #expect(read.records[.init("/o/\(composed)")]?.outputFile.hash.first == "1")
        #expect(read.records[.init("/o/\(decomposed)")]?.outputFile.hash.first == "8")
        #expect(read.failures.keys.map(\.text) == ["/i/\(composed)"])
        // The same when merged, in the paths' byte order (`e`, 0x65, before `é`, 0xC3 0xA9).
        let merged = try ShardRecords.openMerging(job)
        #expect(merged.all.map { $0.outputFile.hash.first } == ["8", "1"])
        #expect(merged.failures.map { Array($0.input.utf8) } == [Array("/i/\(composed)".utf8)])
    }

    /// The rule as a model, whole and in memory: `other`'s records, failures and folders laid
    /// over `mine`, each path by its bytes. A record `takes` allows is taken when `mine` has
    /// none of its output or one written earlier; a failure of one of `inputs` (nil: any) when
    /// `mine` has none of its input or one remembered earlier; a failure of `mine` of one of
    /// `inputs` is forgotten when `other` wrote an output of its input after it failed, unless
    /// `other`'s failure of it was taken; a folder when `mine` has none at its path.
    static func laidOver(
        _ other: OutputRecords.Contents, over mine: OutputRecords.Contents, takes: (OutputRecord) -> Bool = { _ in true },
        inputs: Set<RealPath.Identity.Bytes>? = nil
    ) -> OutputRecords.Contents {
        var result = mine
        for record in other.records.values where takes(record) {
            if let kept = mine.records[.init(record.output)], kept.written >= record.written { continue }
            result.records[.init(record.output)] = record
        }
        var brought: Set<RealPath.Identity.Bytes> = []
        for failure in other.failures.values where inputs?.contains(.init(failure.input)) ?? true {
            if let kept = mine.failures[.init(failure.input)], kept.failed >= failure.failed { continue }
            result.failures[.init(failure.input)] = failure
            brought.insert(.init(failure.input))
        }
        for (input, failure) in mine.failures where (inputs?.contains(input) ?? true) && !brought.contains(input) {
            if other.records.values.contains(where: { RealPath.Identity.Bytes($0.input) == input && $0.written > failure.failed }) {
                result.failures[input] = nil
            }
        }
        for (path, folder) in other.folders where mine.folders[path] == nil { result.folders[path] = folder }
        return result
    }

    /// The path `k` in `folder`: `/folder/é0` for 0, `/folder/é0` with `e` and a combining accent
    /// for 1 (its twin), `/folder/2` … `/folder/6`, `/folder/é1` for 7, and so on.
    static func path(_ folder: String, _ k: Int) -> String {
        "/\(folder)/" + (k % 7 == 0 ? "\u{E9}\(k / 7)" : k % 7 == 1 ? "e\u{301}\(k / 7)" : "\(k)")
    }

    /// Random records of outputs `/o/0…` (some twins: `é`, and `e` with a combining accent) of
    /// inputs `/i/0…`, written at random times, failures of random inputs, and folders.
    static func randomContents(_ count: Int, using random: inout SplitMix) -> OutputRecords.Contents {
        let records = (0..<count).map { _ in
            record(
                Self.path("o", Int.random(in: 0..<30, using: &random)), input: Self.path("i", Int.random(in: 0..<12, using: &random)),
                written: Double(Int.random(in: 0..<6, using: &random)) * 100, hash: "0123456789".randomElement(using: &random)!)
        }
        let failures = (0..<Int.random(in: 0..<5, using: &random)).map { _ in
            failure(Self.path("i", Int.random(in: 0..<12, using: &random)), failed: Double(Int.random(in: 0..<6, using: &random)) * 100 + 50)
        }
        let folders = (0..<Int.random(in: 0..<3, using: &random)).map { _ in
            CreatedFolder(path: Self.path("o", Int.random(in: 0..<4, using: &random)), device: 1, inode: random.next() >> 1)
        }
        return OutputRecords.Contents(records: records, folders: folders, failures: failures)
    }

    /// Records `contents` in `folder`'s index.
    static func add(_ contents: OutputRecords.Contents, in folder: String) throws {
        let records = try OutputRecords(folder: folder)
        for record in contents.records.values { try records.add(record) }
        for failure in contents.failures.values { try records.add(failure) }
        for folder in contents.folders.values { try records.add(folder) }
    }

    /// What `records` keep, by path.
    static func contents(_ records: OutputRecords) -> OutputRecords.Contents {
        OutputRecords.Contents(records: records.all, folders: records.folders, failures: records.failures)
    }

    /// Shards' records merged a page at a time into the job's (``ShardRecords/merge(_:into:page:)``),
    /// and laid over them in a temporary index to be read (``ShardRecords/overlaid(_:)``, what
    /// `slurm status` reads), are what the rule's model gives (``laidOver(_:over:takes:inputs:)``),
    /// whatever the pages: for random records, twins among them.
    @Test func aMergeAPageAtATimeIsTheRuleLaidOverWhole() throws {
        for seed in UInt64(1)...12 {
            var random = SplitMix(seed: seed)
            let (state, job) = Self.temporaryJob()
            defer { try? FileManager.default.removeItem(atPath: state) }
            var whole = Self.randomContents(Int.random(in: 0..<25, using: &random), using: &random)
            try Self.add(whole, in: job.path)
            for index in 0..<2 {
                let shard = try #require(JobShard(index: index, count: 2))
                let records = Self.randomContents(Int.random(in: 1..<25, using: &random), using: &random)
                try Self.add(records, in: job.shard(shard).path)
                whole = Self.laidOver(records, over: whole)
            }
            let page = Int.random(in: 1...6, using: &random)
            // Read alone, as `slurm status` reads them, then merged.
            for (what, contents) in [
                ("overlaid", Self.contents(try ShardRecords.overlaid(job, page: page))),
                ("merged", try { () throws -> OutputRecords.Contents in
                    let records = try OutputRecords(folder: job.path)
                    #expect(try ShardRecords.merge(job, into: records, page: page).isEmpty)
                    return Self.contents(records)
                }()),
            ] {
                #expect(contents.records == whole.records, "seed \(seed), \(what)")
                #expect(contents.failures == whole.failures, "seed \(seed), \(what)")
                #expect(contents.folders == whole.folders, "seed \(seed), \(what)")
            }
            #expect(!ShardRecords.waiting(job))
        }
    }

    /// A shard's records brought up to date with the job's a batch of its inputs at a time
    /// (``ShardRecords/open(_:of:plan:batch:)``) are the rule's answer for its plan's outputs
    /// and inputs (``laidOver(_:over:takes:inputs:)``): the job's records of other inputs, and of outputs
    /// the shard does not write, are not taken. An output's record under an input that does not
    /// plan it now is not taken either (the run would not take it as that output's).
    @Test func aShardStartsFromTheJobsRecordsOfItsPlanABatchAtATime() throws {
        for seed in UInt64(1)...12 {
            var random = SplitMix(seed: seed)
            let (state, job) = Self.temporaryJob()
            defer { try? FileManager.default.removeItem(atPath: state) }
            let shard = try #require(JobShard(index: 0, count: 2))
            // The shard's plan: some inputs, each planning the outputs of its own number.
            let numbers = (0..<12).filter { _ in Bool.random(using: &random) }
            let inputs = numbers.map { k in
                let name = Self.path("i", k)
                let outputs = (0..<30).filter { $0 % 12 == k }.map { o in
                    PlannedOutput(variant: VariantSpec(name: "v", pathTemplate: try! PathTemplate("o/{stem}.png")), path: Self.path("o", o))
                }
                return PlannedInput(path: name, relativePath: String(name.dropFirst()), outputs: outputs)
            }
            let plan = JobPlan(
                job: JobSpec(name: "j", inputs: ["i/*"], outputs: []), manifestPath: "/nowhere/j.job", folder: "/",
                inputs: PlannedInputs(inputs), tileSize: 0)
            let jobs = Self.randomContents(Int.random(in: 0..<40, using: &random), using: &random)
            let mine = Self.randomContents(Int.random(in: 0..<20, using: &random), using: &random)
            try Self.add(jobs, in: job.path)
            try Self.add(mine, in: job.shard(shard).path)
            // The rule, whole: the job's records of each planned output under its planned input
            // (by the paths' bytes), and the failures of the planned inputs, forgotten by any
            // output their input wrote later.
            let pairs = Set(inputs.flatMap { input in input.outputs.map { [Array(input.path.utf8), Array($0.path.utf8)] } })
            let expected = Self.laidOver(
                jobs, over: mine, takes: { pairs.contains([Array($0.input.utf8), Array($0.output.utf8)]) },
                inputs: Set(inputs.map { RealPath.Identity.Bytes($0.path) }))
            let opened = Self.contents(try ShardRecords.open(shard, of: job, plan: plan, batch: Int.random(in: 1...4, using: &random)))
            #expect(opened.records == expected.records, "seed \(seed)")
            #expect(opened.failures == expected.failures, "seed \(seed)")
            #expect(opened.folders == expected.folders, "seed \(seed)")
        }
    }

    /// A shard whose records cannot be read part way through a merge leaves the job's records
    /// as they were (the merge is one transaction) and its own records where they are.
    @Test func aShardThatCannotBeReadIsNotMergedAtAll() throws {
        let (state, job) = Self.temporaryJob()
        defer { try? FileManager.default.removeItem(atPath: state) }
        try Self.add(OutputRecords.Contents(records: [Self.record("/o/kept", input: "/i/kept", written: 100)]), in: job.path)
        let shard = job.shard(try #require(JobShard(index: 0, count: 2)))
        let index = shard.path + "/" + OutputRecords.fileName
        do {
            let records = try OutputRecords(folder: shard.path)
            // Long paths: the rows fill pages, and the later pages hold the later inputs' rows.
            for k in 0..<400 {
                try records.add(Self.record("/o/\(k)-" + String(repeating: "x", count: 200), input: String(format: "/i/%04d", k), written: 200))
            }
        }
        // Every page of the second half of the file made garbage: the first pages read, then one fails.
        let size = try #require(FileManager.default.attributesOfItem(atPath: index)[.size] as? Int)
        let handle = try #require(FileHandle(forWritingAtPath: index))
        try handle.seek(toOffset: UInt64(size / 2 / 4096 * 4096))
        try handle.write(contentsOf: Data(repeating: 0xA5, count: size - size / 2 / 4096 * 4096))
        try handle.close()
        let records = try OutputRecords(folder: job.path)
        #expect {
            try ShardRecords.merge(job, into: records, page: 16)
        } throws: { error in
            (error as? StateError)?.path == index
        }
        #expect(records.all.map(\.output) == ["/o/kept"])
        #expect(FileManager.default.fileExists(atPath: index))
    }

    @Test func aRunningShardsRecordsAreLeftForLaterAndAShardStartsFromTheJobs() throws {
        let (state, job) = Self.temporaryJob()
        defer { try? FileManager.default.removeItem(atPath: state) }
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
