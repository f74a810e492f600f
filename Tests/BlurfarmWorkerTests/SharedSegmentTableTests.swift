import BlurfarmCore
import BlurfarmSharedMemory
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A worker's table of segments, with this process as the coordinator.
@Suite struct SharedSegmentTableTests {
    @Test func aMappingSeesTheCreatorsWritesAndIsKeptForTheSameFile() throws {
        let segment = try SharedSegment.create(byteCount: 64)
        let table = SharedSegmentTable(ownerPID: getpid())
        let mapped = try table.segment(segment.id)
        #expect(mapped.byteCount == 64)
        segment.storage.withUnsafeFloats { $0[3] = 2.5 }
        #expect(mapped.storage.withUnsafeFloats { $0[3] } == 2.5)
        mapped.storage.withUnsafeFloats { $0[5] = -1 }
        #expect(segment.storage.withUnsafeFloats { $0[5] } == -1)
        let again = try table.segment(segment.id)
        #expect(again.storage === mapped.storage && table.mappedCount == 1)
    }

    /// The creator closes a segment and its descriptor number comes back for a new one: the
    /// table maps the new file, not the old mapping.
    @Test func aReusedDescriptorNumberMapsTheNewSegment() throws {
        let table = SharedSegmentTable(ownerPID: getpid())
        var first: SharedSegment? = try SharedSegment.create(byteCount: 64)
        let id = first!.id
        first!.storage.withUnsafeFloats { $0[0] = 1 }
        let old = try table.segment(id)
        first = nil  // unmapped and closed: the number is free
        // The lowest free number is taken next; other tests open files too, so try a few times.
        var held: [SharedSegment] = []
        var second: SharedSegment?
        for _ in 0..<64 {
            let candidate = try SharedSegment.create(byteCount: 128)
            if candidate.id == id {
                second = candidate
                break
            }
            held.append(candidate)
        }
        let reused = try #require(second, "descriptor \(id) was not reused")
        reused.storage.withUnsafeFloats { $0[0] = 2 }
        let new = try table.segment(id)
        #expect(new.byteCount == 128 && new.storage.withUnsafeFloats { $0[0] } == 2)
        #expect(old.storage.withUnsafeFloats { $0[0] } == 1, "the old mapping still holds the old file")
    }

    @Test func aMissingSegmentIsAnErrorNamingOpen() {
        let table = SharedSegmentTable(ownerPID: getpid())
        #expect(throws: SharedMemoryError(call: "open", errno: ENOENT, subject: "/proc/\(getpid())/fd/999998")) {
            try table.segment(999_998)
        }
    }
}
