@testable import BlurfarmCluster
import BlurfarmCoordinator
import BlurfarmState
import Foundation
import PropertyBased
import Testing

/// The shards' reports as `slurm finish` and `slurm status` read them: a file an output at a
/// time (``RunReport/read(streaming:output:)``), into a temporary index whose lookups give the
/// rule the merged report was made by when every report was decoded whole.
@Suite struct ShardReportsTests {
    /// A report file read an output at a time gives what decoding it whole gives: each output's
    /// text decodes to the output, in order, and each report without its outputs is the report
    /// with none. Names with quotes, backslashes, brackets and bytes that are not UTF-8 included.
    @Test func aReportFileReadAnOutputAtATimeIsTheFileDecodedWhole() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let bracketed = OutputReport(input: "[{\"", output: "}]\\\"],", variant: "{", status: .written, checksum: "ab")
        await propertyCheck(count: 300, input: RunReportRoundTripTests.reports.array(of: 0...3)) { reports in
            // A file each: the property's cases run at once.
            let path = folder + "/reports-\(UUID().uuidString).json"
            var reports = reports
            if var first = reports.first {
                first.outputs += [bracketed]
                reports[0] = first
            }
            try RunReport.write(reports, to: path)
            var outputs: [[OutputReport]] = reports.map { _ in [] }
            var texts: [Data] = [], keys: [String] = []
            let heads = try RunReport.read(streaming: path) { report, text in
                outputs[report].append(try RunReport.decode(OutputReport.self, from: text))
                texts.append(text)
                let key = try RunReport.decode(OutputReport.PathAndStatus.self, from: text)
                keys.append("\(key.output) \(key.status)")
            }
            let whole = try RunReport.decode([RunReport].self, from: Data(contentsOf: URL(fileURLWithPath: path)))
            #expect(outputs == whole.map(\.outputs))
            // Each output's text, its file's indentation taken out, is byte for byte the
            // encoder's text of it alone (what `slurm finish` puts in its report as it is), and
            // its path and status are the output's.
            let all = whole.flatMap(\.outputs)
            #expect(texts.map(ReportedText.unindented) == (try all.map { Optional(try RunReport.json($0)) }))
            #expect(keys == all.map { "\($0.output) \($0.status)" })
            let withoutOutputs = { (report: RunReport) in
                var head = report
                head.outputs = []
                return head
            }
            #expect(heads.map(withoutOutputs) == whole.map(withoutOutputs))
            // Those up to date, counted and not listed, counted in the heads too.
            #expect(heads.map(\.skipped) == whole.map(\.skipped) && heads.map(\.skipped) == reports.map(\.skipped))
        }
        // Several chunks of the file: 2,000 outputs, 700 KB.
        let path = folder + "/reports.json"
        let many = Self.report(started: 0, (0..<2000).map { OutputReport(input: "in/\($0).png", output: "out/\($0).jpg", variant: "v", status: .stopped) })
        try RunReport.write([many], to: path)
        var count = 0
        let heads = try RunReport.read(streaming: path) { _, text in
            let output = try RunReport.decode(OutputReport.self, from: text)
            #expect(output.output == "out/\(count).jpg")
            count += 1
        }
        #expect(count == 2000)
        #expect(heads.map(\.started) == [many.started])
    }

    /// An output's text laid out otherwise than the report's writer lays it out (by another
    /// tool) is not taken for the encoder's: it is nil, and `slurm finish` encodes the output again.
    @Test func textLaidOutOtherwiseIsNotUnindented() throws {
        let alone = try RunReport.json(Self.output(1, .written, report: 0))
        #expect(ReportedText.unindented(alone) == alone)
        let deeper = Data(String(decoding: alone, as: UTF8.self).replacingOccurrences(of: "\n", with: "\n    ").utf8)
        #expect(ReportedText.unindented(deeper) == alone)
        for other in ["{\"output\":\"a\"}", "{\n\t\"output\" : \"a\"\n}", "{\n \"output\" : \"a\"\n}", "{\n    \"a\" : 1,\n  \"b\" : 2\n}", "[]", ""] {
            #expect(ReportedText.unindented(Data(other.utf8)) == nil, "\(other)")
        }
    }

    /// A file cut short, or not a list of reports, is refused, whatever was handed over before.
    @Test func aFileThatIsNotAListOfReportsIsRefused() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/reports.json"
        let whole = try RunReport.json([Self.report(started: 0, (0..<50).map { Self.output($0 % 7, .written, report: 0) })])
        for cut in stride(from: 0, to: whole.count - 2, by: 97) {
            try whole.prefix(cut).write(to: URL(fileURLWithPath: path))
            #expect(throws: (any Error).self, "cut at \(cut)") { try RunReport.read(streaming: path) { _, _ in } }
        }
        for text in ["{}", "[1]", "[{\"outputs\": [1]}]", "[]]", "[{}]", "[] x"] {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            #expect(throws: (any Error).self, "\(text)") { try RunReport.read(streaming: path) { _, _ in } }
        }
        try Data("[]".utf8).write(to: URL(fileURLWithPath: path))
        #expect(try RunReport.read(streaming: path) { _, _ in }.isEmpty)
    }

    /// The merged report's rule, looked up in the index a batch at a time, is the rule laid
    /// over reports decoded whole: of each output, the latest report (by start, then by Slurm
    /// job id, then by file name) that wrote it, else the latest that names it; a file that cannot be read says
    /// nothing. Random reports of 3 shards over 12 outputs, starts that tie, corrupt files.
    @Test func eachOutputIsWhatTheLatestReportThatWroteItSaysElseTheLatestThatNamesIt() async throws {
        let statuses: [OutputReport.Status] = [.written, .failed, .stopped, .cancelled, .skipped, .failedEarlier]
        // A file holds one report or two (a run of several jobs), or is cut short (nil).
        let files = Generator<[(shard: Int, job: Int, reports: [RunReport]?)], Shrink.None<[(shard: Int, job: Int, reports: [RunReport]?)]>>(run: { rng in
            (0..<Int.random(in: 0...8, using: &rng)).map { number in
                let reports = (0..<Int.random(in: 1...2, using: &rng)).map { part in
                    Self.report(
                        started: Double(Int.random(in: 0...3, using: &rng)),
                        (0..<Int.random(in: 0...14, using: &rng)).map { _ in
                            Self.output(Int.random(in: 0..<12, using: &rng), statuses.randomElement(using: &rng)!, report: number * 2 + part)
                        })
                }
                return (Int.random(in: 0..<3, using: &rng), number * 7 % 11, Int.random(in: 0..<6, using: &rng) == 0 ? nil : reports)
            }
        })
        await propertyCheck(count: 200, input: files) { files in
            let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
            var read: [(job: Int, name: String, position: Int, report: RunReport)] = []
            for (shard, job, reports) in files {
                let name = "shard-\(shard)-\(job).json"
                let path = folder + "/" + name
                guard !FileManager.default.fileExists(atPath: path) else { continue }
                if let reports {
                    try RunReport.write(reports, to: path)
                    let decoded = try RunReport.decode([RunReport].self, from: Data(contentsOf: URL(fileURLWithPath: path)))
                    read += decoded.enumerated().map { (job, name, $0, $1) }
                } else {
                    try Data(RunReport.json([Self.report(started: 9, [Self.output(0, .written, report: -1)])]).dropLast(9)).write(to: URL(fileURLWithPath: path))
                }
            }
            // The rule, as it was: every report decoded whole, laid over each other in order
            // (a file's reports in their order).
            var model: [String: OutputReport] = [:]
            for (_, _, _, report) in read.sorted(by: {
                ($0.report.started, $0.job, $0.name, $0.position) < ($1.report.started, $1.job, $1.name, $1.position)
            }) {
                for output in report.outputs where output.status == .written || model[output.output]?.status != .written {
                    model[output.output] = output
                }
            }
            let reports = try ShardReports.of(folder: folder)
            let found = try reports.outputs((0..<12).map { "out/\($0).jpg" } + ["out/none.jpg"])
            #expect(Dictionary(uniqueKeysWithValues: found.map { ($0.key.text, $0.value.status) }) == model.mapValues(\.status))
            for (output, reported) in found where [.written, .failed, .failedEarlier].contains(reported.status) {
                #expect(reported.output == model[output.text])
            }
            for (output, reported) in found where ![.written, .failed, .failedEarlier].contains(reported.status) {
                #expect(reported.output == nil, "\(output)")
            }
        }
    }

    /// A new folder of its own.
    /// A report cut short says nothing, though what it said before the cut went to the index
    /// (past a batch of 4,096 outputs): a later report that wrote every output, cut short,
    /// leaves what the earlier one said.
    @Test func aReportCutShortPastABatchSaysNothing() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try RunReport.write([Self.report(started: 0, (0..<12).map { Self.output($0, .stopped, report: 0) })], to: folder + "/shard-0-1.json")
        let cut = try RunReport.json([Self.report(started: 5, (0..<5000).map { Self.output($0 % 12, .written, report: 1) })])
        try Data(cut.dropLast(40)).write(to: URL(fileURLWithPath: folder + "/shard-0-2.json"))
        let found = try ShardReports.of(folder: folder).outputs((0..<12).map { "out/\($0).jpg" })
        #expect(found.count == 12)
        #expect(found.values.allSatisfy { $0.status == .stopped })
    }

    /// Whether a shard wrote a report is known by the file's name (`shard-<I>-<Slurm job id>.json`),
    /// and how it ended by its latest report's counts: stopped (or cancelled) when it counts
    /// outputs it did not start, listed or not.
    @Test func howAShardEndedIsKnownByItsLatestReport() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try RunReport.write([Self.report(started: 0, [Self.output(0, .written, report: 0)])], to: folder + "/shard-2-17.json")
        try RunReport.write([Self.report(started: 0, [])], to: folder + "/shard-3-18.json")
        try Data("{".utf8).write(to: URL(fileURLWithPath: folder + "/shard-4-19.json"))
        // Shard 5 stopped (its outputs not started counted, none listed), then ran again to
        // its end; shard 6 ran, then was cancelled; shard 7 stopped with an output cut short.
        try RunReport.write([Self.report(started: 0, [Self.notStarted(1, .stopped)])], to: folder + "/shard-5-20.json")
        try RunReport.write([Self.report(started: 9, [Self.output(1, .written, report: 1)])], to: folder + "/shard-5-21.json")
        try RunReport.write([Self.report(started: 0, [Self.output(2, .written, report: 2)])], to: folder + "/shard-6-22.json")
        try RunReport.write([Self.report(started: 9, [Self.notStarted(2, .cancelled)])], to: folder + "/shard-6-23.json")
        try RunReport.write([Self.report(started: 0, [Self.output(3, .stopped, report: 3)])], to: folder + "/shard-7-24.json")
        let reports = try ShardReports.of(folder: folder)
        #expect((1...8).map(reports.end(of:)) == [.unreported, .finished, .finished, .unreported, .finished, .stopped, .stopped, .unreported])
    }

    /// What the merged report says of an output: up to date now, counted (or written, as the
    /// report that wrote it says); not up to date, failed, and why: its shard wrote no report
    /// (lost), or was stopped before it (lost), or wrote one not naming it, so it found it up to
    /// date and it changed since.
    @Test func anOutputNotUpToDateIsLostOnlyWhenItsShardWroteNoReportOrStopped() throws {
        let written = ShardReports.Reported(status: .written, text: try RunReport.json(Self.output(0, .written, report: 1)))
        func merged(_ state: OutputState, _ reported: ShardReports.Reported?, _ ended: ShardReports.ShardEnd) -> OutputReport {
            let status = OutputStatus(input: "in/0.png", output: "out/0.jpg", variant: "v", state: state)
            return SlurmRunContext.merged(status, shard: 2, reported: reported, shardEnded: ended).output
        }
        #expect(merged(.upToDate, nil, .finished).status == .skipped)
        #expect(merged(.upToDate, written, .finished).status == .written)
        #expect(merged(.upToDate, nil, .stopped).status == .skipped)
        let lost = merged(.missing, nil, .unreported)
        #expect(lost.status == .failed && lost.failure?.kind == "lost")
        #expect(lost.error == "out/0.jpg: not written: shard 2 did not report it (lost, cancelled or out of time)")
        let notStarted = merged(.missing, nil, .stopped)
        #expect(notStarted.status == .failed && notStarted.failure?.kind == "lost")
        #expect(notStarted.error == "out/0.jpg: not written: shard 2 was stopped")
        let changed = merged(.outputChanged, nil, .finished)
        #expect(changed.status == .failed && changed.failure?.kind == "verification")
        #expect(changed.error == "out/0.jpg: stale (output changed) after shard 2 ran")
        #expect(merged(.missing, written, .finished).error == "out/0.jpg: missing after shard 2 ran")
        #expect(merged(.missing, written, .stopped).error == "out/0.jpg: missing after shard 2 ran")
    }

    static func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("blurfarm-reports-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func report(started: Double, _ outputs: [OutputReport]) -> RunReport {
        RunReport(
            job: "j", manifest: "/m.job", started: Date(timeIntervalSince1970: started), finished: Date(timeIntervalSince1970: started + 1),
            settings: RunSettings(configuration: nil, workers: 2, threads: 2, decodedImages: 2, tile: 0, pixelLimit: 1, verify: "checksum"),
            outputs: outputs)
    }

    /// Output `index`, not started: its run ended first (`status`, stopped or cancelled).
    static func notStarted(_ index: Int, _ status: OutputReport.Status) -> OutputReport {
        var output = OutputReport(
            input: "in/\(index).png", output: "out/\(index).jpg", variant: "v", status: status,
            failure: status == .cancelled ? .cancelled : .stopped)
        output.notStarted = true
        return output
    }

    /// Output `index`, with `status`, its checksum naming `report`: which report gave it.
    static func output(_ index: Int, _ status: OutputReport.Status, report: Int) -> OutputReport {
        OutputReport(
            input: "in/\(index).png", output: "out/\(index).jpg", variant: "v", status: status, checksum: "\(report)",
            failure: status == .failed ? .reported(kind: "render", code: nil, message: "failed in \(report)") : nil)
    }
}
