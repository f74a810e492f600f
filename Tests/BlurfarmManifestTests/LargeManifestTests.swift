import BlurfarmCore
import BlurfarmManifest
import Testing

/// A manifest of the largest size allowed parses into the job it describes. How fast is a
/// benchmark figure (`blurfarm bench --manifest`, docs/performance.md), not a timed assertion.
@Suite struct LargeManifestTests {
    static func largeManifest(bytes limit: Int) -> String { SyntheticManifest.make(bytes: limit) }

    @Test func aOneMebibyteManifestParsesIntoItsJob() throws {
        let text = Self.largeManifest(bytes: ManifestLimits.maximumBytes)
        let bytes = Array(text.utf8)
        #expect(bytes.count > ManifestLimits.maximumBytes - 1024 && bytes.count <= ManifestLimits.maximumBytes)

        let job = try JobDecoder.decode(bytes, file: "big.job", filters: TestCatalogue.all).get()
        #expect(job.outputs.count > 2500)
        #expect(job.outputs.last?.resize?.width == job.outputs.count)
    }
}
