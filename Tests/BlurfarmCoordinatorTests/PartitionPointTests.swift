import BlurfarmTestSupport
import Testing

@testable import BlurfarmCoordinator

/// The plan's binary search (``RandomAccessCollection/partitionPoint(where:)``): in any sorted
/// list, with repeats, empty or not, and in a slice of one, the first place past a value is
/// the number of elements not past it, as counting them one by one says.
@Suite struct PartitionPointTests {
    @Test func theFirstPlacePastAValueIsTheCountOfThoseNotPastIt() {
        var generator = SplitMix(seed: 47)
        for _ in 0..<2000 {
            let list = (0..<Int.random(in: 0...40, using: &generator)).map { _ in Int.random(in: 0...20, using: &generator) }.sorted()
            let value = Int.random(in: -1...21, using: &generator)
            #expect(list.partitionPoint { $0 > value } == list.filter { $0 <= value }.count, "\(list), \(value)")
            #expect(list.partitionPoint { $0 >= value } == list.filter { $0 < value }.count, "\(list), \(value)")
            let start = Int.random(in: 0...list.count, using: &generator)
            let slice = list[start...]
            #expect(slice.partitionPoint { $0 > value } == start + slice.filter { $0 <= value }.count, "\(slice), \(value)")
        }
    }
}
