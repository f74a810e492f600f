extension RandomAccessCollection where Index == Int {
    /// The first place whose element `isPast` takes, in a collection ordered so that it takes
    /// every element after one it takes (in a sorted one, the first past a value): `endIndex`
    /// when it takes none. A binary search, log₂ of the count questions: the plan's one way to
    /// find a hash among its files', an input's part and chunk, an output number's input.
    func partitionPoint(where isPast: (Element) -> Bool) -> Int {
        var (low, high) = (startIndex, endIndex)
        while low < high {
            let middle = low + (high - low) / 2
            if isPast(self[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
