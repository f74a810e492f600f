import BlurfarmState

/// Files by identity (``RealPath/Identity``), as a plan checks them: each held as its
/// identity's hash (32 bits of it) and its position, its place in the order the files were
/// added (where the caller keeps the file: an input's place in the plan, an output's number,
/// ``OutputNumbers``), sorted once all are in. 8 bytes a file, where the dictionaries from
/// identity to writer and to input held 63 and 17 MB of the 125 MB heap peak of a
/// 100,000-input plan (with the whole hash, an output took 24; with its input's and its own
/// place and the diagnostics before it beside the hash, 16: a million-input plan's writers
/// and the sort's buffer were 60 of its 127 MB heap peak). Of 300,000 outputs, about 10 pairs
/// share 32 bits by chance, and are asked again as any others that share a hash.
///
/// A hash tells files apart but cannot say two are one: ``first(of:where:)`` and
/// ``sharedHashes(across:)`` give the positions whose hashes match, and the
/// caller compares their identities, asked again of those few files alone (a plan's outputs
/// that are one file, an output that is an input: none in a plan that passes).
struct IdentityIndex: Sendable {
    private var entries: [(hash: UInt32, position: UInt32)] = []
    private var isSorted = true

    init(capacity: Int = 0) { entries.reserveCapacity(capacity) }

    /// Adds the file of `identity`, at the next position (the number of files added before it).
    mutating func add(_ identity: RealPath.Identity) {
        entries.append((Self.hash(of: identity), UInt32(entries.count)))
        isSorted = false
    }

    /// The part of `identity`'s hash the index keeps.
    private static func hash(of identity: RealPath.Identity) -> UInt32 { UInt32(truncatingIfNeeded: identity.hashValue) }

    /// Sorts the files, for the lookups: by hash, then position.
    mutating func seal() {
        entries.sort { ($0.hash, $0.position) < ($1.hash, $1.position) }
        isSorted = true
    }

    /// The first position, in order, of the files that may be `identity` that `matches`
    /// takes: a lookup that allocates nothing, as a plan makes one for each output.
    func first(of identity: RealPath.Identity, where matches: (Int) -> Bool) -> Int? {
        for index in range(of: identity) where matches(Int(entries[index].position)) { return Int(entries[index].position) }
        return nil
    }

    /// Where the entries of `identity`'s hash are (after ``seal()``).
    private func range(of identity: RealPath.Identity) -> Range<Int> {
        precondition(isSorted, "an index is sealed before it is asked")
        let hash = Self.hash(of: identity)
        let low = entries.partitionPoint { $0.hash >= hash }
        var end = low
        while end < entries.count, entries[end].hash == hash { end += 1 }
        return low..<end
    }

    /// Every run of two or more positions of one hash in `indexes` (each sealed), as if they
    /// were one index, without making them one: the files that may be one, each run's
    /// positions by their index's place, then in order. A plan's parts each index their
    /// outputs; put together, the parts' indexes were held twice at once.
    static func sharedHashes(across indexes: [IdentityIndex]) -> [[(index: Int, position: Int)]] {
        precondition(indexes.allSatisfy(\.isSorted), "an index is sealed before it is asked")
        let lists = indexes.map(\.entries)
        var starts = Array(repeating: 0, count: lists.count), ends = starts
        var runs: [[(index: Int, position: Int)]] = []
        while true {
            // The smallest hash not gone through, and where each list's entries of it end.
            var smallest: UInt32?
            for (list, start) in zip(lists, starts) where start < list.count {
                smallest = min(smallest ?? list[start].hash, list[start].hash)
            }
            guard let hash = smallest else { return runs }
            var count = 0
            for index in lists.indices {
                var end = starts[index]
                while end < lists[index].count, lists[index][end].hash == hash { end += 1 }
                (ends[index], count) = (end, count + end - starts[index])
            }
            if count > 1 {
                runs.append(lists.indices.flatMap { index in lists[index][starts[index]..<ends[index]].map { (index, Int($0.position)) } })
            }
            for index in lists.indices { starts[index] = ends[index] }
        }
    }
}

/// A plan's outputs numbered in order, each input's one after another, and each number's
/// output found again: the positions of an index of outputs (``IdentityIndex``). 4 bytes an
/// input and a few a diagnostic, where each output held its input's and its own place (8
/// bytes) and, while planned, the number of diagnostics before it (4 more).
struct OutputNumbers: Sendable {
    /// The number of each input's first output, by the input's place, up to the last input
    /// with an output (an input without one has the next's).
    private var firsts: [UInt32] = []
    /// Where the count of diagnostics before an output changed: from the output numbered
    /// `output` on, it is `count`.
    private var diagnosticSteps: [(output: UInt32, count: UInt32)] = []
    /// The outputs numbered.
    private(set) var count = 0

    /// Numbers the next output: of the input at `input` (no earlier than the last output's),
    /// with `diagnosticsBefore` diagnostics told before it (as many as before the last, or
    /// more).
    @discardableResult
    mutating func next(input: Int, diagnosticsBefore: Int = 0) -> Int {
        precondition(input + 1 >= firsts.count, "an input's outputs are numbered in the inputs' order")
        while firsts.count <= input { firsts.append(UInt32(count)) }
        if diagnosticsBefore != Int(diagnosticSteps.last?.count ?? 0) {
            diagnosticSteps.append((UInt32(count), UInt32(diagnosticsBefore)))
        }
        defer { count += 1 }
        return count
    }

    /// The output numbered `number`: its input's place, its own among the input's outputs,
    /// and the diagnostics told before it.
    func place(of number: Int) -> (input: Int, output: Int, diagnosticsBefore: Int) {
        precondition(number < count, "a number given")
        // The last input whose first output is at or before the number, and the last step so.
        let input = firsts.partitionPoint { Int($0) > number } - 1
        let step = diagnosticSteps.partitionPoint { Int($0.output) > number } - 1
        return (input, number - Int(firsts[input]), step < 0 ? 0 : Int(diagnosticSteps[step].count))
    }
}
