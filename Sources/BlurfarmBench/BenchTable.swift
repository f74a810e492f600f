import BlurfarmCore
import Foundation

/// A benchmark's typed rows as text: a header and rows of cells, which ``text`` aligns in
/// columns, as `blurfarm bench` prints them.
public struct BenchTable: Sendable, Hashable {
    /// The columns' names.
    public var header: [String]
    /// Each row's cells, one per column of ``header``.
    public var rows: [[String]]

    public init(header: [String], rows: [[String]]) {
        self.header = header
        self.rows = rows
    }

    /// The header, a line of dashes under each column, then the rows: each column as wide as its
    /// widest cell, two spaces between columns; lines separated by newlines, none after the last.
    public var text: String {
        let all = [header] + rows
        let widths = header.indices.map { c in all.map { $0[c].count }.max()! }
        var lines = all.map { row in
            row.enumerated().map { c, v in v.padding(toLength: widths[c], withPad: " ", startingAt: 0) }
                .joined(separator: "  ")
        }
        lines.insert(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  "), at: 1)
        return lines.joined(separator: "\n")
    }

    /// Seconds as whole milliseconds: "1234".
    public static func ms(_ seconds: Double) -> String { String(format: "%.0f", seconds * 1000) }

    /// Bytes as whole megabytes (10⁶), or "-" when not measured.
    public static func megabytes(_ bytes: Int?) -> String { bytes.map { String(format: "%.0f", Double($0) / 1e6) } ?? "-" }

    /// `value` with `digits` decimals, or "-" when absent: "0.93".
    public static func fixed(_ value: Double?, _ digits: Int = 2) -> String {
        value.map { String(format: "%.\(digits)f", $0) } ?? "-"
    }
}

extension Comparison {
    /// Rows of the comparison beside libvips 8.18 as `blurfarm bench all` prints them.
    public static func table(_ rows: [Comparison]) -> BenchTable {
        BenchTable(
            header: ["figure", "case", "blurfarm ms", "baseline ms", "ratio", "blurfarm MB", "baseline MB", "baseline"],
            rows: rows.map {
                [
                    $0.figure.rawValue, $0.label, BenchTable.ms($0.blurfarmSeconds), BenchTable.ms($0.baselineSeconds),
                    BenchTable.fixed($0.ratio), BenchTable.megabytes($0.blurfarmPeakBytes),
                    BenchTable.megabytes($0.baselinePeakBytes), $0.baseline,
                ]
            })
    }
}

extension LibvipsComparison {
    /// The lines above the figures: blurfarm's `version` beside the lanes' libvips, the machine,
    /// and how the figures are measured (then an empty line).
    public func heading(version: String) throws(BenchError) -> String {
        """
        blurfarm \(version) bench beside libvips \(try libvipsVersion()) warm in-process
        machine: \(Machine.summary); blurfarm links libvips \(EngineBench.linkedLibvips)
        median of \(settings.runs) runs each, blurfarm and libvips alternating; \
        ratio = blurfarm / baseline (below 1: blurfarm is faster)

        """
    }

    /// `rows` measured from `started` on, with what they ran on: the report of `--json`.
    public func report(_ rows: [Comparison], version: String, started: Date) throws(BenchError) -> ComparisonReport {
        ComparisonReport(
            blurfarmVersion: version, libvipsVersion: try libvipsVersion(), linkedLibvipsVersion: EngineBench.linkedLibvips,
            machine: Machine.summary, date: ISO8601DateFormatter().string(from: started), runs: settings.runs, rows: rows)
    }
}

extension EngineBench {
    /// `rows` (this benchmark's) as `blurfarm bench engine` prints them, under a heading naming
    /// blurfarm's `version`.
    public func text(_ rows: [Row], version: String) -> String {
        """
        blurfarm \(version) bench engine: \(image), single thread
        machine: \(Machine.summary); libvips \(Self.linkedLibvips)
        median of \(runs) runs; ratio = libvips time / blurfarm time (above 1: blurfarm is faster)

        """ + "\n" + BenchTable(
            header: ["filter", "bands", "blurfarm ms", "MP/s", "libvips", "precision", "ms", "ratio"],
            rows: rows.map {
                [
                    $0.filter, String($0.bands), BenchTable.ms($0.blurfarmSeconds), BenchTable.fixed($0.megapixelsPerSecond, 0),
                    $0.libvipsOperation, $0.precision, BenchTable.ms($0.libvipsSeconds), BenchTable.fixed($0.ratio),
                ]
            }
        ).text
    }
}

extension FileDepthBench {
    /// `result` (this benchmark's) as `blurfarm bench file-depth` prints it, under a heading
    /// naming blurfarm's `version`.
    public func text(_ result: Result, version: String) -> String {
        """
        blurfarm \(version) bench file-depth: \(image), single thread, median of \(runs) runs
        machine: \(Machine.summary); libvips \(EngineBench.linkedLibvips); OpenCV \(result.opencvVersion ?? "-")

        """ + (result.note.map { $0 + "\n" } ?? "") + "\n" + BenchTable(
            header: ["sigma", "bands", "blurfarm CPU ms", "OpenCV CPU ms", "ratio", "libvips ms", "ratio"],
            rows: result.rows.map {
                [
                    String(describing: ParameterValue.number($0.sigma)), String($0.bands), BenchTable.ms($0.blurfarmSeconds),
                    $0.opencvSeconds.map(BenchTable.ms) ?? "-", BenchTable.fixed($0.opencvRatio),
                    BenchTable.ms($0.libvipsSeconds), BenchTable.fixed($0.libvipsRatio),
                ]
            }
        ).text
    }
}

extension ManifestBench {
    /// `result` (this benchmark's) as `blurfarm bench manifest` prints it, naming blurfarm's
    /// `version`.
    public func text(_ result: Result, version: String) -> String {
        "blurfarm \(version) bench manifest: \(result.bytes) bytes, median of \(runs) runs\n"
            + String(
                format: "parse to a located tree: %.1f ms; parse and check into a job: %.1f ms", result.parseSeconds * 1000,
                result.decodeSeconds * 1000)
    }
}

extension FarmBench {
    /// `result` (this benchmark's) as `blurfarm bench farm` prints it, under a heading naming
    /// blurfarm's `version`.
    public func text(_ result: Result, version: String) -> String {
        """
        blurfarm \(version) bench farm: \(result.images) images (\(BenchTable.fixed(result.megapixels, 1)) MP), \(result.work)
        machine: \(Machine.summary); libvips \(EngineBench.linkedLibvips)
        median of \(runs) runs, each run timing every row once, in turn; ratio = vips time / blurfarm time

        """ + "\n" + BenchTable(
            header: [
                "command", "s", "images/s", "MP/s", "filter s", "coordinator peak MB", "worker peak MB",
                "together peak MB (PSS)", "ratio", "rerun s",
            ],
            rows: result.rows.map {
                [
                    $0.command, BenchTable.fixed($0.seconds), BenchTable.fixed($0.imagesPerSecond, 1),
                    BenchTable.fixed($0.megapixelsPerSecond, 1), BenchTable.fixed($0.filterSeconds, 3),
                    BenchTable.megabytes($0.coordinatorPeak), BenchTable.megabytes($0.workerPeak),
                    BenchTable.megabytes($0.togetherPeak), BenchTable.fixed($0.ratio), BenchTable.fixed($0.rerunSeconds),
                ]
            }
        ).text
    }
}
