import BlurfarmCluster
import BlurfarmCoordinator
import BlurfarmCore
import BlurfarmSystem
import Foundation
import PropertyBased
import Testing

/// A run report read back from its JSON is the report written (docs/report.md): what the Slurm
/// finisher merges is what each shard's `run --report` said, names that are not UTF-8 included.
@Suite struct RunReportRoundTripTests {
    /// Texts with what JSON and the report's escaping must carry: quotes, backslashes, slashes,
    /// control characters, combining marks, characters beyond the BMP.
    static let pieces = ["a", "photo", "/", "\\", "\"", " ", "\n", "\u{0}", "é", "e\u{301}", "\u{1F600}", "x\\xE9", "-", "."]

    static func text<R: RandomNumberGenerator>(_ rng: inout R) -> String {
        (0..<Int.random(in: 0...6, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined()
    }

    /// A path, sometimes with bytes that are not UTF-8 (carried as ``PathEncoding`` escapes):
    /// lone bytes 0x80…0xFF between characters, which no decoding can take for UTF-8.
    static func path<R: RandomNumberGenerator>(_ rng: inout R) -> String {
        var bytes: [UInt8] = []
        for _ in 0..<Int.random(in: 0...6, using: &rng) {
            if Int.random(in: 0..<4, using: &rng) == 0 { bytes.append(UInt8.random(in: 0x80...0xFF, using: &rng)) }
            bytes += Array(pieces.randomElement(using: &rng)!.utf8)
        }
        return PathEncoding.decode(bytes).text
    }

    static func seconds<R: RandomNumberGenerator>(_ rng: inout R) -> Double {
        Bool.random(using: &rng) ? Double(Int.random(in: 0...1000, using: &rng)) : Double.random(in: 0...10_000, using: &rng)
    }

    static func output<R: RandomNumberGenerator>(_ rng: inout R) -> OutputReport {
        let statuses: [OutputReport.Status] = [.written, .failed, .stopped, .cancelled, .skipped, .failedEarlier]
        let failure: OutputFailure? =
            Bool.random(using: &rng)
            ? .reported(
                kind: ["decode", "render", "lost", "verification"].randomElement(using: &rng)!,
                code: Bool.random(using: &rng) ? "EIO" : nil, message: text(&rng))
            : nil
        // Stopped or cancelled, it may not have been started: counted, not listed.
        let status = statuses.randomElement(using: &rng)!
        let notStarted = (status == .stopped || status == .cancelled) && Bool.random(using: &rng)
        var output = OutputReport(
            input: path(&rng), output: path(&rng), variant: text(&rng), status: status,
            tiles: Int.random(in: 0...Int.max, using: &rng), pixels: Int.random(in: 0...1 << 40, using: &rng),
            bands: Int.random(in: 0...64, using: &rng), decodeSeconds: seconds(&rng), filterSeconds: seconds(&rng),
            encodeSeconds: seconds(&rng), retries: Int.random(in: 0...5, using: &rng),
            checksum: Bool.random(using: &rng) ? String(UInt64.random(in: 0...UInt64.max, using: &rng), radix: 16) : nil,
            failure: failure)
        output.notStarted = notStarted
        return output
    }

    static let reports = Generator<RunReport, Shrink.None<RunReport>>(run: { rng in
        let started = Date(timeIntervalSince1970: Double(Int.random(in: 0...4_000_000_000, using: &rng)))
        var report = RunReport(
            job: text(&rng), manifest: text(&rng), started: started,
            finished: started.addingTimeInterval(Double(Int.random(in: 0...100_000, using: &rng))),
            settings: RunSettings(
                configuration: Bool.random(using: &rng) ? text(&rng) : nil, workers: Int.random(in: 0...64, using: &rng),
                threads: Int.random(in: 0...64, using: &rng), decodedImages: Int.random(in: 1...8, using: &rng),
                tile: Int.random(in: 0...4096, using: &rng), pixelLimit: Int.random(in: 1...Int.max, using: &rng),
                verify: ["checksum", "decode", "untiled"].randomElement(using: &rng)!),
            outputs: (0..<Int.random(in: 0...5, using: &rng)).map { _ in output(&rng) },
            pruned: (0..<Int.random(in: 0...3, using: &rng)).map { _ in path(&rng) })
        report.notEnlarged = (0..<Int.random(in: 0...3, using: &rng)).map { _ in
            NotEnlargedOutput(
                input: text(&rng), output: text(&rng), variant: text(&rng), width: Int.random(in: 2...10_000, using: &rng),
                sourceWidth: Int.random(in: 1...9_999, using: &rng))
        }
        return report
    })

    @Test func aReportReadBackIsTheReportWritten() async {
        await propertyCheck(count: 500, input: Self.reports) { report in
            let json = try RunReport.json([report])
            let read = try RunReport.decode([RunReport].self, from: json)
            #expect(read == [report])
            // And it writes the same bytes again.
            #expect(try RunReport.json(read) == json)
        }
    }

    /// A report written as it is encoded (each output into the rest of its report, in
    /// pieces: what the state folder and `run --report` get) is byte for byte what encoding
    /// it whole makes, alone and in a list, empty lists included.
    @Test func aReportWrittenInPiecesIsTheReportEncodedWhole() async {
        await propertyCheck(count: 300, input: Self.reports.array(of: 0...3)) { reports in
            var pieces: [[UInt8]] = []
            try RunReport.writeJSON(reports, list: true, to: { pieces.append($0) })
            #expect(Data(pieces.joined()) == (try RunReport.json(reports)))
            for report in reports {
                var alone: [UInt8] = []
                try RunReport.writeJSON([report], list: false, to: { alone += $0 })
                #expect(Data(alone) == (try RunReport.json(report)))
            }
        }
        // Large enough to be written in several pieces.
        let many = RunReport(
            job: "j", manifest: "m.job", started: Date(timeIntervalSince1970: 0), finished: Date(timeIntervalSince1970: 9),
            settings: RunSettings(configuration: nil, workers: 2, threads: 2, decodedImages: 2, tile: 0, pixelLimit: 1, verify: "checksum"),
            outputs: (0..<2000).map { OutputReport(input: "in/\($0).png", output: "out/\($0).jpg", variant: "v", status: .stopped) })
        var pieces: [[UInt8]] = []
        try? RunReport.writeJSON([many], list: false, to: { pieces.append($0) })
        #expect(pieces.count > 1)
        #expect(Data(pieces.joined()) == (try? RunReport.json(many)))
    }

    /// The run folder's list of one report made from the report's file (what `slurm finish`
    /// writes from the state folder's copy) is byte for byte the list encoded whole, the file
    /// read in pieces that cut lines anywhere.
    @Test func aListMadeFromAReportsFileIsTheListEncodedWhole() async throws {
        let folder = try ShardReportsTests.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        func check(_ report: RunReport) throws {
            let (single, list) = (folder + "/single-\(UUID().uuidString).json", folder + "/list-\(UUID().uuidString).json")
            try RunReport.json(report).write(to: URL(fileURLWithPath: single))
            try RunReport.write(listOfReportIn: single, to: list)
            #expect(try Data(contentsOf: URL(fileURLWithPath: list)) == RunReport.json([report]))
        }
        await propertyCheck(count: 200, input: Self.reports) { report in try check(report) }
        try check(RunReport(
            job: "j", manifest: "m.job", started: Date(timeIntervalSince1970: 0), finished: Date(timeIntervalSince1970: 9),
            settings: RunSettings(configuration: nil, workers: 2, threads: 2, decodedImages: 2, tile: 0, pixelLimit: 1, verify: "checksum"),
            outputs: (0..<3000).map { OutputReport(input: "in/\($0).png", output: "out/\($0).jpg", variant: "v", status: .stopped) }))
    }

    /// A report written before outputs up to date were left out (each listed, `skipped`, and
    /// counted) reads back with them counted, not listed; one whose `counts` lack `skipped`
    /// counts those it lists.
    @Test func aReportListingItsOutputsUpToDateReadsBackWithThemCounted() throws {
        let text = """
            {"job": "j", "manifest": "m.job", "started": "2026-11-01T00:00:00Z", "finished": "2026-11-01T00:00:01Z",
             "settings": {"workers": 2, "threads": 2, "decodedImages": 2, "tile": 0, "pixelLimit": 1, "verify": "checksum"},
             "outputs": [
               {"input": "a.png", "output": "a.jpg", "variant": "v", "status": "skipped", "tiles": 0, "pixels": 0,
                "decodeSeconds": 0, "filterSeconds": 0, "encodeSeconds": 0, "retries": 0},
               {"input": "b.png", "output": "b.jpg", "variant": "v", "status": "written", "tiles": 1, "pixels": 4,
                "decodeSeconds": 0, "filterSeconds": 0, "encodeSeconds": 0, "retries": 0, "checksum": "0123456789abcdef"}],
             "pruned": [], "counts": {COUNTS}}
            """
        let old = try RunReport.decode(RunReport.self, from: Data(text.replacing("COUNTS", with: "\"skipped\": 1, \"written\": 1").utf8))
        #expect(old.skipped == 1 && old.written == 1 && old.outputs.map(\.output) == ["b.jpg"])
        let uncounted = try RunReport.decode(RunReport.self, from: Data(text.replacing("COUNTS", with: "\"written\": 1").utf8))
        #expect(uncounted.skipped == 1 && uncounted.outputs.map(\.output) == ["b.jpg"])
    }

    /// A failure of any kind comes back as the report said it: kind, code and message.
    @Test func aFailureComesBackAsReported() throws {
        let failure = OutputFailure.verification("b.png: not as its shard recorded it")
        let written = OutputReport(input: "a.png", output: "b.png", variant: "", status: .failed, failure: failure)
        let report = RunReport(
            job: "j", manifest: "/m.job", started: Date(timeIntervalSince1970: 0), finished: Date(timeIntervalSince1970: 1),
            settings: RunSettings(configuration: nil, workers: 0, threads: 1, decodedImages: 1, tile: 0, pixelLimit: 1, verify: "checksum"),
            outputs: [written])
        let read = try RunReport.decode(RunReport.self, from: RunReport.json(report))
        #expect(read.outputs.first?.failure == .reported(kind: failure.kind, code: failure.code, message: failure.description))
        #expect(read.outputs.first?.error == written.error)
    }

    /// A cancelled or stopped output, which says nothing more, comes back as itself; an error
    /// only like one, as reported.
    @Test func cancelledAndStoppedComeBackAsThemselves() throws {
        let failures: [OutputFailure] = [
            .cancelled, .stopped, .reported(kind: "cancelled", code: "x", message: "cancelled"),
            .reported(kind: "stopped", code: nil, message: "stopped by hand"),
        ]
        let outputs = failures.enumerated().map { index, failure in
            OutputReport(
                input: "a.png", output: "\(index).png", variant: "", status: index == 1 ? .stopped : .cancelled, failure: failure)
        }
        let report = RunReport(
            job: "j", manifest: "/m.job", started: Date(timeIntervalSince1970: 0), finished: Date(timeIntervalSince1970: 1),
            settings: RunSettings(configuration: nil, workers: 0, threads: 1, decodedImages: 1, tile: 0, pixelLimit: 1, verify: "checksum"),
            outputs: outputs)
        let read = try RunReport.decode(RunReport.self, from: RunReport.json(report))
        #expect(read.outputs.map(\.failure) == failures)
    }
}
