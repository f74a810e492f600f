import BlurfarmCoordinator
import BlurfarmState
import BlurfarmSystem
import Foundation

/// Each shard's outputs, fixed when a run was submitted (`run --split`, a Slurm run's
/// `split.json`): a shard run again runs the same outputs, even when a corrupt input was fixed
/// since (its pixels changed). A JSON list of each shard's list of output paths.
public enum ShardSplit {
    /// A split read into a temporary index (``PathIndex``: each output's absolute path and its
    /// shard), to be asked a batch of outputs at a time which shards list them
    /// (``JobPlan/shards(listedBy:)``). Decoded whole, with each output's absolute path in a
    /// dictionary, the split of 300,000 outputs held 80 MB of `slurm finish`'s 139 MB.
    public final class Index: Sendable {
        private let index: PathIndex

        fileprivate init(_ index: PathIndex) { self.index = index }

        /// The shards that list each of `outputs` (absolute paths) that one lists, by its bytes.
        /// - Throws: ``ClusterError/state(_:)`` when the index cannot be read.
        package func shards(listing outputs: [String]) throws(ClusterError) -> [RealPath.Identity.Bytes: [Int]] {
            do throws(StateError) {
                return try index.entries(of: outputs).mapValues { $0.map(\.number) }
            } catch {
                throw .state(error)
            }
        }
    }

    /// The split in the file at `path`, which must hold `shards` shards, read a batch of paths
    /// at a time into an index: of every shard, or of shard `only` alone (a shard's run).
    /// - Throws: ``ClusterError/unreadableSplit(path:)`` or ``ClusterError/splitMismatch(path:shards:expected:)``
    ///   (also when `shards` is nil: a split needs `--shard I/N`); ``ClusterError/state(_:)``
    ///   when the index cannot be made or written.
    public static func read(_ path: String, shards: Int?, only: Int? = nil) throws(ClusterError) -> Index {
        let count: Int
        let index: PathIndex
        do {
            index = try PathIndex(name: "(a temporary index of the split)")
            let folders = RealPath.Folders()
            count = try forEachBatch(path) { shard, paths in
                guard only == nil || only == shard else { return }
                try index.add(paths.map { (RealPath.resolveFolder(of: $0, using: folders), "", nil) }, number: shard)
            }
        } catch let error as StateError {
            throw .state(error)
        } catch {
            throw .unreadableSplit(path: path)
        }
        guard let shards, count == shards else { throw .splitMismatch(path: path, shards: count, expected: shards) }
        return Index(index)
    }

    /// Hands `body` each shard's paths in the file at `path`, in order, 4,096 at a time, read
    /// 64 KB at a time (``JSONNesting``; each batch's strings decoded by JSONDecoder); the
    /// number of shards.
    /// - Throws: ``SystemCallError`` when the file cannot be read, `DecodingError` when it is not
    ///   a list of lists of strings, or what `body` throws.
    static func forEachBatch(_ path: String, _ body: (_ shard: Int, _ paths: [String]) throws -> Void) throws -> Int {
        let corrupt = DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "not a list of lists of paths"))
        var nesting = JSONNesting()
        var (shard, ended) = (0, false)
        // Each string's text as in the file, quotes included, gathered into a JSON list.
        var list: [UInt8] = [UInt8(ascii: "[")]
        var strings = 0
        func flush() throws {
            guard strings > 0 else { return }
            list[list.count - 1] = UInt8(ascii: "]")
            try body(shard, try JSONDecoder().decode([String].self, from: Data(list)))
            (list, strings) = ([UInt8(ascii: "[")], 0)
        }
        try Syscalls.forEachChunk(of: path) { chunk in
            for byte in chunk {
                let depth = nesting.depth
                switch nesting.follow(byte) {
                case .stringOpened:
                    guard depth == 2 else { throw corrupt }
                    list.append(byte)
                case .inString: list.append(byte)
                case .stringClosed:
                    list += [byte, UInt8(ascii: ",")]
                    strings += 1
                    if strings == 4096 { try flush() }
                default:
                    if JSONNesting.isSpace(byte) { continue }
                    guard !ended else { throw corrupt }
                    switch (depth, byte) {
                    case (0, UInt8(ascii: "[")), (1, UInt8(ascii: "[")), (1, UInt8(ascii: ",")), (2, UInt8(ascii: ",")): break
                    case (1, UInt8(ascii: "]")): ended = true
                    case (2, UInt8(ascii: "]")):
                        try flush()
                        shard += 1
                    default: throw corrupt
                    }
                }
            }
        }
        guard ended else { throw corrupt }
        return shard
    }

    /// Writes the split of `plan` in `shards` shards, each input's outputs in the shard
    /// `assigned` gives it (in plan order), to `path` atomically, each name's bytes kept: the
    /// bytes of the list of each shard's list of output paths encoded whole, made a batch of
    /// paths at a time (``RunReport/writeExact(listsOf:to:strings:)``). (Gathered and encoded
    /// whole, the split of 300,000 outputs was most of `slurm submit`'s 144 MB.)
    /// - Throws: ``ClusterError/cannotWrite(path:underlying:)``.
    public static func write(_ plan: JobPlan, assigned: [Int], shards: Int, to path: String) throws(ClusterError) {
        precondition(
            assigned.count == plan.inputs.count && assigned.allSatisfy((0..<shards).contains), "one of the shards for each input")
        // Each shard's inputs by their place in the plan: the plan walked once in all, not once
        // a shard (a shard an input, at 100,000 inputs, would be 10¹⁰ steps).
        var inputsOf = [[Int]](repeating: [], count: shards)
        for (index, shard) in assigned.enumerated() { inputsOf[shard].append(index) }
        do {
            try RunReport.writeExact(listsOf: shards, to: path) { shard, add in
                var batch: [String] = []
                for index in inputsOf[shard] {
                    for output in plan.inputs[plan.inputs.startIndex + index].outputs {
                        batch.append(output.path)
                        if batch.count == Self.writeBatch {
                            try add(batch)
                            batch.removeAll(keepingCapacity: true)
                        }
                    }
                }
                try add(batch)
            }
        } catch {
            throw .cannotWrite(path: path, underlying: error)
        }
    }

    /// Paths encoded at a time as a split is written.
    static let writeBatch = 4096
}
