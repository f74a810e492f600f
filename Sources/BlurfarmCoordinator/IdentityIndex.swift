import BlurfarmState

/// Files by identity (``RealPath/Identity``), as a plan checks them: each held as its
/// identity's hash (32 bits of it) and a position (where the caller keeps the file), sorted
/// once all are in. 16 bytes an output and 16 an input, where the dictionaries from identity
/// to writer and to input held 63 and 17 MB of the 125 MB heap peak of a 100,000-input plan
/// (with the whole hash, an output took 24). Of 300,000 outputs, about 10 pairs share 32 bits
/// by chance, and are asked again as any others that share a hash.
///
/// A hash tells files apart but cannot say two are one: ``first(of:where:)`` and
/// ``sharedHashes(across:)`` give the positions whose hashes match, and the
/// caller compares their identities, asked again of those few files alone (a plan's outputs
/// that are one file, an output that is an input: none in a plan that passes).
struct IdentityIndex<Position: Comparable> {
    private var entries: [(hash: UInt32, position: Position)] = []
    private var isSorted = true

    init(capacity: Int = 0) { entries.reserveCapacity(capacity) }

    /// Adds the file of `identity` at `position`.
    mutating func add(_ identity: RealPath.Identity, at position: Position) {
        entries.append((Self.hash(of: identity), position))
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
    func first(of identity: RealPath.Identity, where matches: (Position) -> Bool) -> Position? {
        for index in range(of: identity) where matches(entries[index].position) { return entries[index].position }
        return nil
    }

    /// Where the entries of `identity`'s hash are (after ``seal()``).
    private func range(of identity: RealPath.Identity) -> Range<Int> {
        precondition(isSorted, "an index is sealed before it is asked")
        let hash = Self.hash(of: identity)
        var low = 0, high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].hash < hash { low = middle + 1 } else { high = middle }
        }
        var end = low
        while end < entries.count, entries[end].hash == hash { end += 1 }
        return low..<end
    }

    /// Every run of two or more positions of one hash in `indexes` (each sealed), as if they
    /// were one index, without making them one: the files that may be one, each run's
    /// positions by their index's place, then in order. A plan's parts each index their
    /// outputs; put together, the parts' indexes were held twice at once.
    static func sharedHashes(across indexes: [IdentityIndex]) -> [[(index: Int, position: Position)]] {
        precondition(indexes.allSatisfy(\.isSorted), "an index is sealed before it is asked")
        let lists = indexes.map(\.entries)
        var starts = Array(repeating: 0, count: lists.count), ends = starts
        var runs: [[(index: Int, position: Position)]] = []
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
                runs.append(lists.indices.flatMap { index in lists[index][starts[index]..<ends[index]].map { (index, $0.position) } })
            }
            for index in lists.indices { starts[index] = ends[index] }
        }
    }
}

extension IdentityIndex: Sendable where Position: Sendable {}
