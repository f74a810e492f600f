import BlurfarmTestSupport
import Foundation
import Testing

/// `blurfarm bench --farm`: the figures it prints are read from the processes it ran.
@Suite struct FarmBenchTests {
    /// The row of `blurfarm run`: the coordinator's and a worker's resident peaks and the peak
    /// of their proportional set sizes together, each in MB and above zero; together they hold
    /// no more than the two peaks added (a page shared by both counts once in the proportional
    /// sum, twice in the two resident sizes).
    @Test func theFarmRowHasTheCoordinatorTheWorkerAndTheirProportionalPeakTogether() throws {
        let result = try Blurfarm.run([
            "bench", "--farm", Corpus.path("special/bench-3840x2160.jpg"), "--workers", "1", "--runs", "1", "--skip-vips",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        func columns(_ line: String) -> [String] {
            line.components(separatedBy: "  ").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        let header = try #require(lines.first { $0.hasPrefix("command") }.map(columns))
        let row = try #require(lines.first { $0.hasPrefix("blurfarm run --workers 1") }.map(columns))
        #expect(row.count == header.count, "\(header) \(row)")
        func megabytes(_ name: String) throws -> Double {
            let index = try #require(header.firstIndex(of: name), "\(header)")
            return try #require(Double(row[index]), "\(name): \(row[index])")
        }
        let coordinator = try megabytes("coordinator peak MB")
        let worker = try megabytes("worker peak MB")
        let together = try megabytes("together peak MB (PSS)")
        #expect(coordinator > 0 && worker > 0 && together > 0)
        #expect(together <= coordinator + worker + 1, "\(together) MB together, \(coordinator) + \(worker) MB apart")
    }
}
