/// The pixels dealt so far to each of `count` shards, as a binary min-heap ordered by load and
/// then by index, so that ``addToLightest(_:)`` picks the shard the longest-processing-time rule
/// of ``JobShards/assign(weights:names:count:)`` picks (the lightest, the lowest index among
/// equals) in O(log count).
package struct ShardLoads {
    /// The heap: each shard's load and index; the root is the lightest.
    private var heap: [(load: Int, index: Int)]

    /// `count` empty shards (at least 1).
    package init(count: Int) {
        precondition(count > 0)
        // Empty shards in index order already satisfy the heap's order.
        heap = (0..<count).map { (0, $0) }
    }

    /// Adds `weight` (not negative) to the lightest shard (the lowest index among equals) and
    /// returns that shard's index.
    package mutating func addToLightest(_ weight: Int) -> Int {
        let index = heap[0].index
        heap[0].load = heap[0].load.addingReportingOverflow(weight).overflow ? .max : heap[0].load + weight
        siftDown(from: 0)
        return index
    }

    /// Whether the entry at `a` comes before the one at `b`: lighter, or as light and lower.
    private func before(_ a: Int, _ b: Int) -> Bool {
        heap[a].load != heap[b].load ? heap[a].load < heap[b].load : heap[a].index < heap[b].index
    }

    /// Restores the heap's order below `position` after its load grew.
    private mutating func siftDown(from position: Int) {
        var parent = position
        while true {
            let left = 2 * parent + 1, right = left + 1
            var first = parent
            if left < heap.count, before(left, first) { first = left }
            if right < heap.count, before(right, first) { first = right }
            if first == parent { return }
            heap.swapAt(parent, first)
            parent = first
        }
    }
}
