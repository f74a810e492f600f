@testable import BlurfarmBench
import Testing

/// The benchmarks' rows as `blurfarm bench` prints them: values in their columns, aligned.
@Suite struct BenchTableTests {
    @Test func columnsAreAsWideAsTheirWidestCellWithDashesUnderTheHeader() {
        let table = BenchTable(header: ["a", "long header"], rows: [["wide cell", "1"], ["x", "22"]])
        #expect(
            table.text == """
                a          long header
                ---------  -----------
                wide cell  1          
                x          22         
                """)
    }

    @Test func numbersAreMillisecondsMegabytesAndFixedDecimals() {
        #expect(BenchTable.ms(1.2344) == "1234")
        #expect(BenchTable.megabytes(12_600_000) == "13")
        #expect(BenchTable.megabytes(nil) == "-")
        #expect(BenchTable.fixed(0.926) == "0.93")
        #expect(BenchTable.fixed(3.14159, 3) == "3.142")
        #expect(BenchTable.fixed(nil) == "-")
    }

    @Test func aComparisonRowHasItsFigureTimesRatioPeaksAndBaseline() {
        let row = Comparison(
            figure: .codecFloor, label: "sigma 8", blurfarmRuns: [0.5, 0.4, 0.6], baselineRuns: [1, 1, 1],
            baseline: "libvips 8.18.7, 2 processes", blurfarmPeakBytes: 250_000_000)
        let table = Comparison.table([row])
        #expect(table.header.count == table.rows[0].count)
        #expect(table.rows == [["codec-floor", "sigma 8", "500", "1000", "0.50", "250", "-", "libvips 8.18.7, 2 processes"]])
    }

    @Test func theManifestFigureSaysBothMediansInMilliseconds() {
        let bench = ManifestBench(bytes: 100, runs: 3)
        let text = bench.text(.init(bytes: 120, parseSeconds: 0.0123, decodeSeconds: 0.0456), version: "9.9")
        #expect(
            text == "blurfarm 9.9 bench manifest: 120 bytes, median of 3 runs\n"
                + "parse to a located tree: 12.3 ms; parse and check into a job: 45.6 ms")
    }
}
