import BlurfarmState
import BlurfarmImageIO

/// One shard of a job: the `index`th (from 0) of `count`, written `I/N` (`run --shard 2/4`).
/// Every host that runs a shard of a job computes the same split (``JobPlan/shard(_:pixels:)``)
/// without talking to the others.
public struct JobShard: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Which shard, from 0.
    public let index: Int
    /// How many shards the job is split into.
    public let count: Int

    /// Shard `index` of `count`, or nil unless `0 <= index < count`.
    public init?(index: Int, count: Int) {
        guard count > 0, (0..<count).contains(index) else { return nil }
        self.index = index
        self.count = count
    }

    /// `I/N`.
    public var description: String { "\(index)/\(count)" }
}

/// The split of a job's plan into shards: a pure function of the plan and its inputs' pixel
/// counts, so that every host computes the same one.
///
/// An input and all its outputs go to one shard (the input is decoded once). Shards are
/// balanced by pixels, not by images: each input weighs its decoded pixels plus those of each
/// output (``weight(of:header:)``), and inputs are dealt heaviest first (ties in the order of
/// their path relative to the manifest) to the lightest shard so far (ties to the lowest
/// index): the longest-processing-time rule, within a third of the best split and close to it
/// when there are many more inputs than shards.
public enum JobShards {
    /// Which shard each of `weights` goes to (indexes from 0 below `count`), in the order given.
    /// `names` (as many, unique) decide between equal weights, so that the result does not
    /// depend on the order the inputs were listed in.
    ///
    /// Memory and time do not depend on `count`: only the first `min(count, weights.count)`
    /// shards can ever be the lightest (each input takes the lowest-indexed empty shard while
    /// one is left), so the others are never looked at and stay empty; the lightest shard is
    /// found in a heap, in O(log k) per input.
    public static func assign(weights: [Int], names: [String], count: Int) -> [Int] {
        precondition(weights.count == names.count && count > 0)
        let order = weights.indices.sorted {
            weights[$0] != weights[$1] ? weights[$0] > weights[$1] : names[$0] < names[$1]
        }
        var loads = ShardLoads(count: max(1, min(count, weights.count)))
        var shard = [Int](repeating: 0, count: weights.count)
        for item in order {
            shard[item] = loads.addToLightest(max(weights[item], 0))
        }
        return shard
    }

    /// The pixels an input costs: its own (decoded once), plus each output's (the size it is
    /// decoded at for a resize, else the input's). `header` is the input's width and height,
    /// nil when its header cannot be read: such an input weighs 1 (it fails quickly, and every
    /// host that cannot read it either gives it the same weight).
    public static func weight(of input: PlannedInput, header: (width: Int, height: Int)?) -> Int {
        guard let header else { return 1 }
        let own = header.width * header.height
        return own + input.outputs.reduce(0) { sum, output in
            let size = output.decodeResize?.targetSize(width: header.width, height: header.height) ?? header
            return sum + size.width * size.height
        }
    }

    /// An input's width and height from its header (no pixel decoded), opened beneath the
    /// roots of `confinement` when given.
    /// - Throws: ``ImageIOError`` when the header cannot be read.
    public static func headerSize(_ path: String, confinement: RootConfinement? = nil) throws(ImageIOError) -> InputSizes.Size {
        let header = try ImageReader.header(ofFile: path, confinement: confinement)
        return (header.width, header.height)
    }
}

extension JobPlan {
    /// Each input's weight (``JobShards/weight(of:header:)``), in plan order: its size kept in
    /// the job's records while the input is unchanged (``inputSizes``), else read from its
    /// header, the kept ones looked up ``OutputRecords/lookUpChunk`` inputs at a time. Every
    /// host that weighs the same files finds the same weights: a kept size is its header's.
    /// `unreadable` is told of each header that cannot be read (such an input weighs 1).
    public func weights(unreadable: (ImageIOError) -> Void = { _ in }) -> [Int] {
        let sizes = inputSizes ?? InputSizes()
        var weights: [Int] = []
        weights.reserveCapacity(inputs.count)
        for first in stride(from: 0, to: inputs.count, by: OutputRecords.lookUpChunk) {
            let batch = Array(inputs[first..<min(first + OutputRecords.lookUpChunk, inputs.count)])
            let kept = sizes.lookUp(batch.map(\.path))
            for input in batch {
                let size = sizes.size(of: input.path, in: kept) { path -> InputSizes.Size? in
                    do throws(ImageIOError) {
                        return try JobShards.headerSize(path)
                    } catch {
                        unreadable(error)
                        return nil
                    }
                }
                weights.append(JobShards.weight(of: input, header: size))
            }
        }
        sizes.closeIndex()
        return weights
    }

    /// The part of this plan that shard `shard` runs: the inputs ``JobShards/assign(weights:names:count:)``
    /// gives it, each with all its outputs, in plan order, the inputs weighed by ``weights(unreadable:)``
    /// (or by `pixels`). Shard 0 keeps the plan's refused lines and unmatched globs (they are
    /// reported once, not by every shard). Only this shard's part is made, whatever the
    /// count: a shard beyond the inputs is empty.
    public func shard(_ shard: JobShard, pixels: ((PlannedInput) -> Int)? = nil) -> JobPlan {
        let assigned = shardAssignment(count: shard.count, weights: pixels.map { inputs.map($0) } ?? weights())
        return part(shard.index, inputs: zip(inputs, assigned).filter { $0.1 == shard.index }.map(\.0))
    }

    /// The shard of each input, in plan order, when this plan is split in `count`, the
    /// inputs weighed by `weights` (in plan order): what ``shard(_:pixels:)`` gives each shard
    /// (`slurm submit` writes it as the run's split, ``ShardSplit``, without making the parts).
    public func shardAssignment(count: Int, weights: [Int]) -> [Int] {
        JobShards.assign(weights: weights, names: inputs.map(\.relativePath), count: count)
    }

    /// Shard `index`'s plan with `inputs`: shard 0 keeps the refused lines, the unmatched globs
    /// and the inputs whose regions failed.
    private func part(_ index: Int, inputs: [PlannedInput]) -> JobPlan {
        var part = JobPlan(
            job: job, manifestPath: manifestPath, folder: folder, inputs: PlannedInputs(inputs), tileSize: tileSize,
            refused: index == 0 ? refused : [], unmatchedGlobs: index == 0 ? unmatchedGlobs : [],
            unredacted: unredacted.isEmpty ? [] : unredacted.filter(Set(inputs.flatMap { $0.outputs.map(\.path) }).contains),
            regionFailed: index == 0 ? regionFailed : [])
        // The sizes read for the whole plan, for the shard's run to keep in its records.
        part.inputSizes = inputSizes
        return part
    }

    /// The part of this plan that shard `shard` runs under a split fixed earlier (`slurm
    /// submit` records one, so that a shard run again runs the same outputs even when an input's
    /// header changed, a corrupt input fixed): the inputs with an output the split gives the
    /// shard (``shards(listedBy:)``), each with all its outputs, in plan order. An input of none
    /// of the split's shards (new since) is in none. Shard 0 keeps the refused lines and
    /// unmatched globs.
    package func shard<Failure: Error>(
        _ shard: JobShard, listedBy listing: (_ outputs: [String]) throws(Failure) -> [RealPath.Identity.Bytes: [Int]]
    ) throws(Failure) -> JobPlan {
        let shards = try shards(listedBy: listing)
        return part(shard.index, inputs: zip(inputs, shards).filter { $0.1.contains(shard.index) }.map(\.0))
    }

    /// The shards that run each input under a split, in plan order: those that list one of its
    /// outputs (one for each input of the split, none for an input new since, two for an
    /// output a split written by hand gives two). `listing` answers, for a batch of outputs'
    /// absolute paths (``IncrementalRun/absolute(_:using:)``, each folder resolved once), the
    /// shards that list each: the plan walked once, ``lookupBatch`` inputs a batch. (Cut into
    /// each shard's part, each folder resolved for each output in each shard's walk, the four
    /// parts of a 300,000-output plan took `slurm finish` 12 s, and held its inputs whole.)
    package func shards<Failure: Error>(
        listedBy listing: (_ outputs: [String]) throws(Failure) -> [RealPath.Identity.Bytes: [Int]]
    ) throws(Failure) -> [[Int]] {
        let folders = RealPath.Folders()
        var shards: [[Int]] = []
        shards.reserveCapacity(inputs.count)
        for first in stride(from: 0, to: inputs.count, by: IncrementalRun.lookupBatch) {
            let batch = inputs[first..<min(first + IncrementalRun.lookupBatch, inputs.count)]
            let outputs = batch.map { $0.outputs.map { IncrementalRun.absolute($0.path, using: folders) } }
            let listed = try listing(outputs.flatMap { $0 })
            for paths in outputs { shards.append(Set(paths.flatMap { listed[.init($0)] ?? [] }).sorted()) }
        }
        return shards
    }
}
