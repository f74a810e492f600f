@testable import BlurfarmCommandSupport
import BlurfarmCoordinator
@testable import BlurfarmFarm
import Foundation
import Testing

/// What `run` says of the farm's events (BlurfarmFarm's `RunNarrator`), by value: which lines,
/// on which stream, in which order.
@Suite struct RunNarratorTests {
    static let id = FarmJobID(1)
    static let settings = RunSettings(
        configuration: nil, workers: 2, threads: 1, decodedImages: 2, tile: 512, pixelLimit: 1 << 30, verify: "checksum")

    static func outcome(_ outputs: [OutputReport]) -> JobOutcome {
        JobOutcome(
            report: RunReport(
                job: "web", manifest: "web.job", started: Date(timeIntervalSince1970: 0),
                finished: Date(timeIntervalSince1970: 1.5), settings: settings, outputs: outputs),
            failures: 0, inputs: 1, pruneAsked: false)
    }

    static let written = OutputReport(input: "a.jpg", output: "out/a.jpg", variant: "blur", status: .written, tiles: 3)

    @Test func verboseSaysEachOutputWrittenThenTheSummary() {
        var narrator = RunNarrator(quiet: false, verbose: true, alwaysSummary: false, showsProgress: false)
        #expect(narrator.lines(for: .jobAccepted(Self.id, job: "web", outputs: 1, upToDate: 0, inputs: 1)).isEmpty)
        guard case .output(let line) = narrator.lines(for: .outputFinished(Self.id, Self.written)).first else {
            Issue.record("no line for the output written")
            return
        }
        #expect(line == "out/a.jpg: blur of a.jpg, 3 tiles")
        let summary = "web: 1 written, 0 failed, 1 input, in 1.50 s; 0 up to date, 1 decoded"
        #expect(RunNarrator.summary(Self.outcome([Self.written]), keepsRecords: true) == summary)
        let end = narrator.lines(for: .jobFinished(Self.id, Self.outcome([Self.written])))
        guard end.count == 2, case .output(let shown) = end[0], case .log(let logged) = end[1] else {
            Issue.record("\(end)")
            return
        }
        #expect(shown == summary && logged == summary)
    }

    @Test func onATerminalTheProgressLineIsClearedBeforeALineAndDrawnAfter() {
        var narrator = RunNarrator(quiet: false, verbose: true, alwaysSummary: false, showsProgress: true)
        _ = narrator.lines(for: .jobAccepted(Self.id, job: "web", outputs: 2, upToDate: 0, inputs: 1))
        let lines = narrator.lines(for: .outputFinished(Self.id, Self.written))
        guard lines.count == 3, case .clearProgress = lines[0], case .output = lines[1], case .progress(let text) = lines[2] else {
            Issue.record("\(lines)")
            return
        }
        #expect(text.hasPrefix("web: 1/1 images, 1/2 outputs, 3 tiles, "))
    }

    /// The progress line is drawn at the first output, then at most once an interval (here
    /// an hour: never by the clock), again after a line printed (which cleared it), and at
    /// the last output; between those, an output finished says nothing.
    @Test func theProgressLineIsDrawnOnceAnIntervalAfterALineAndAtTheEnd() {
        var narrator = RunNarrator(quiet: false, verbose: false, alwaysSummary: false, showsProgress: true, progressInterval: .seconds(3600))
        _ = narrator.lines(for: .jobAccepted(Self.id, job: "web", outputs: 6, upToDate: 0, inputs: 6))
        let failed = OutputReport(
            input: "c.jpg", output: "out/c.jpg", variant: "blur", status: .failed, failure: .verification("out/c.jpg: not as rendered"))
        let outputs = [Self.written, Self.written, Self.written, failed, Self.written, Self.written]
        let drawn = outputs.map { output in
            narrator.lines(for: .outputFinished(Self.id, output)).map { line -> String in
                switch line {
                case .clearProgress: "clear"
                case .failure: "failure"
                case .progress(let text): String(text.split(separator: ", ")[1])
                default: "\(line)"
                }
            }
        }
        #expect(drawn == [
            ["clear", "1/6 outputs"], [], [], ["clear", "failure", "4/6 outputs"], [], ["clear", "6/6 outputs"],
        ])
    }

    @Test func aQuietRunLogsTheSummaryOnly() {
        var narrator = RunNarrator(quiet: true, verbose: false, alwaysSummary: false, showsProgress: true)
        _ = narrator.lines(for: .jobAccepted(Self.id, job: "web", outputs: 1, upToDate: 0, inputs: 1))
        let lines = narrator.lines(for: .jobFinished(Self.id, Self.outcome([Self.written])))
        guard lines.count == 1, case .log = lines[0] else {
            Issue.record("\(lines)")
            return
        }
    }

    /// The progress line counts each input once however many of its outputs finish, in any
    /// order within a batch, and holds no path of a batch the farm finished.
    @Test func theImagesDoneAreCountedWithABatchsPathsHeldAtMost() {
        var narrator = RunNarrator(quiet: false, verbose: false, alwaysSummary: false, showsProgress: true)
        _ = narrator.lines(for: .jobAccepted(Self.id, job: "web", outputs: 18, upToDate: 0, inputs: 6))
        var shown = ""
        for batch in [["a", "b"], ["c", "d", "e"], ["f"]] {
            // Each input's three outputs, the batch's inputs interleaved.
            for variant in ["x", "y", "z"] {
                for input in batch {
                    let output = OutputReport(
                        input: "\(input).png", output: "out/\(variant)/\(input).png", variant: variant, status: .written, tiles: 1)
                    if case .progress(let line)? = narrator.lines(for: .outputFinished(Self.id, output)).last { shown = line }
                }
            }
            #expect(narrator.progress?.inputs.count == batch.count)
            #expect(narrator.lines(for: .batchFinished(Self.id)).isEmpty)
            #expect(narrator.progress?.inputs.isEmpty == true)
        }
        #expect(shown.hasPrefix("web: 6/6 images, 18/18 outputs, 18 tiles, "), "\(shown)")
    }

    @Test func theServiceLineHasNoImages() {
        #expect(
            JobProgress.line(job: "j", images: nil, outputs: 1, of: 4, tiles: 9, megapixelsPerSecond: 2.25, secondsLeft: 3.4, failed: 1)
                == "j: 1/4 outputs, 9 tiles, 2.2 MP/s, ETA 3 s, 1 failed")
    }
}
