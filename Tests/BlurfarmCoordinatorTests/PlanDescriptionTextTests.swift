@testable import BlurfarmCoordinator
import BlurfarmState
import Testing

/// What `check` and `check --status` print, from the descriptions' values.
@Suite struct PlanDescriptionTextTests {
    typealias Output = PlanDescription.Output

    static let plan = PlanDescription(
        job: "web", manifest: "jobs/web.job", tile: 512, refused: [],
        inputs: [
            .init(
                input: "in/a.jpg", width: 640, height: 480, overPixelLimit: false, overMemoryLimit: true,
                outputs: [
                    Output(
                        variant: "blur", output: "out/a.jpg", width: 640, height: 480, filters: ["gaussian sigma=8"],
                        reach: .init(x: 24, y: 24), edge: "clamp", colour: "gamma", tiles: 2),
                    Output(variant: "bad", output: "out/a-bad.jpg", error: "out of bounds"),
                    Output(variant: "big", output: "out/a-2000.jpg", notMade: "larger than the source"),
                ]),
            .init(input: "in/b\nc.jpg", error: "in/b: not an image", outputs: [Output(variant: "blur", output: "out/b.jpg")]),
        ])

    /// The job's line, then each input's (``PlanDescription/text(of:configuration:registry:_:)``
    /// prints them as they are described).
    @Test func thePlanIsTheJobLineThenEachInputAndItsOutputs() {
        #expect(
            PlanDescription.headline(manifest: "jobs/web.job", job: "web", inputs: 2, outputs: 3, tile: 512)
                == "jobs/web.job: job 'web': 2 inputs, 3 outputs, tiles of 512 px")
        #expect(
            Self.plan.inputs.flatMap(\.lines) == [
                "  in/a.jpg  640x480 (over the memory limit)",
                "    blur -> out/a.jpg  gaussian sigma=8; reach 24 px; edge clamp, colour gamma; 2 tiles",
                "    bad -> out/a-bad.jpg  cannot be rendered",
                "    big -> out/a-2000.jpg  not made: larger than the source",
                "  in/b\\nc.jpg: cannot be read",
            ])
    }

    @Test func itsErrorsAreTheUnreadableInputsAndTheOutputsThatCannotRender() {
        #expect(Self.plan.inputs.flatMap(\.errors) == ["in/a.jpg: bad: out of bounds", "in/b: not an image"])
    }

    @Test func anEmptyPlanSaysNoFileMatches() {
        #expect(
            PlanDescription.headline(manifest: "j.job", job: "j", inputs: 0, outputs: 0, tile: 0)
                == "j.job: job 'j': 0 inputs, 0 outputs, one tile per image\n  no file matches the inputs")
    }

    /// Every path as the working folder sees it: a planned output's input joined to the
    /// manifest's folder (`jobs/in/a.jpg`), paths outside the working folder absolute, `..`
    /// taken out. The outputs up to date are counted, not listed, nor aligned to.
    @Test func theStatusCountsPlannedOutputsByStateWithTheStatesAligned() {
        let status = StatusDescription(
            job: "web", manifest: "jobs/../jobs/web.job",
            outputs: OutputStatuses([
                OutputStatus(input: "in/a.jpg", output: "out/./a.jpg", variant: "blur", state: .upToDate),
                OutputStatus(input: "in/b.jpg", output: "out/b.jpg", variant: "blur", state: .failedEarlier, reason: "corrupt"),
                OutputStatus(input: "in/b.jpg", output: "out/b.png", variant: "png", state: .missing),
                OutputStatus(input: "/x/c.jpg", output: "/x/out/c.jpg", variant: nil, state: .wouldBePruned),
            ]))
        #expect(
            Self.text(of: status) == """
                jobs/web.job: job 'web': 3 outputs: 1 up to date, 1 missing, 1 would be pruned, 1 failed earlier
                  failed earlier   out/b.jpg (blur of jobs/in/b.jpg): corrupt
                  missing          out/b.png (png of jobs/in/b.jpg)
                  would be pruned  /x/out/c.jpg (of /x/c.jpg)
                """)
        let upToDate = StatusDescription(
            job: "web", manifest: "/jobs/web.job",
            outputs: OutputStatuses([
                OutputStatus(input: "in/a.jpg", output: "/out/a.jpg", variant: "blur", state: .upToDate),
                OutputStatus(input: "in/b.jpg", output: "/out/b.jpg", variant: "blur", state: .missing),
                OutputStatus(input: "in/c.jpg", output: "/out/c.jpg", variant: "blur", state: .upToDate),
            ]))
        #expect(
            Self.text(of: upToDate) == """
                /jobs/web.job: job 'web': 3 outputs: 2 up to date, 1 missing
                  missing  /out/b.jpg (blur of /jobs/in/b.jpg)
                """)
        let allUpToDate = StatusDescription(
            job: "web", manifest: "/jobs/web.job",
            outputs: OutputStatuses([OutputStatus(input: "in/a.jpg", output: "/out/a.jpg", variant: "blur", state: .upToDate)]))
        #expect(Self.text(of: allUpToDate) == "/jobs/web.job: job 'web': 1 output: 1 up to date")
    }

    /// `check --status` prints the status a part at a time, never its text whole: parts of
    /// ``StatusDescription/partLines`` lines, the last of what is left, together the text.
    @Test func theStatusIsHandedOnInPartsOfItsLines() {
        let outputs = (0..<5000).map { OutputStatus(input: "in/\($0).jpg", output: "out/\($0).jpg", variant: "v", state: .missing) }
        let status = StatusDescription(job: "j", manifest: "/j.job", outputs: OutputStatuses(outputs))
        var parts: [String] = []
        status.forEachPart { parts.append($0) }
        #expect(parts.map { $0.split(separator: "\n").count } == [StatusDescription.partLines, 5001 - StatusDescription.partLines])
        #expect(parts.joined(separator: "\n").split(separator: "\n").count == 5001)
    }

    /// `check --status --json` prints the statuses a part at a time, each made as it is
    /// encoded: the list of them encoded whole.
    @Test func theStatusAsJSONIsHandedOnInPartsOfTheWholeEncoding() throws {
        let outputs = (0..<9000).map {
            OutputStatus(
                input: "in/\($0).jpg", output: "out/\($0).jpg", variant: $0 % 7 == 0 ? nil : "v",
                state: $0 % 3 == 0 ? .failedEarlier : .missing, reason: $0 % 3 == 0 ? "corrupt" : nil)
        }
        let statuses = [
            StatusDescription(job: "j", manifest: "/j.job", outputs: OutputStatuses(outputs)),
            StatusDescription(job: "empty", manifest: "/e.job", outputs: OutputStatuses([])),
        ]
        var parts: [[UInt8]] = []
        try StatusDescription.json(of: statuses) { parts.append($0) }
        #expect(parts.count > 2)
        #expect(Array(parts.joined()) == Array(try RunReport.json(statuses)) + Array("\n".utf8))
    }

    /// What `check --status` prints of `status`: its parts, one after the other.
    static func text(of status: StatusDescription) -> String {
        var parts: [String] = []
        status.forEachPart { parts.append($0) }
        return parts.joined(separator: "\n")
    }
}
