import BlurfarmCore
import BlurfarmKernels
import BlurfarmManifest
import BlurfarmState
import Foundation
import Synchronization
import Testing

@testable import BlurfarmCoordinator

/// The versions a recipe names are asked only when a decision needs them, once per run: a
/// first run hands its work out before they are known (they come from a worker process, or
/// libvips mapped: tens of milliseconds) and asks them when it records its first output.
@Suite struct RecipeVersionsTests {
    /// A job in a new temporary folder (returned, for the caller to remove): `photos`, each a
    /// `.jpg` holding its name's bytes in `job/photos`, the manifest `text` as `job/job.job`,
    /// its plan, and records in `state`.
    static func plannedJob(photos: [String], _ text: String) throws -> (String, JobPlan, OutputRecords) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("recipes-\(UUID().uuidString)").path
        for folder in ["job/photos", "job/out"] {
            try FileManager.default.createDirectory(atPath: "\(root)/\(folder)", withIntermediateDirectories: true)
        }
        for name in photos {
            _ = FileManager.default.createFile(atPath: "\(root)/job/photos/\(name).jpg", contents: Data(name.utf8))
        }
        let manifest = "\(root)/job/job.job"
        try text.write(toFile: manifest, atomically: true, encoding: .utf8)
        return (root, try plan(manifestAt: manifest).get(), try OutputRecords(folder: "\(root)/state"))
    }

    /// The plan of the manifest at `path` as `run` makes it (tiles of 512), or why there is
    /// none. Throws when the manifest does not decode.
    static func plan(manifestAt path: String) throws -> Result<JobPlan, Diagnostics> {
        let spec = try JobDecoder.decode(fileAtPath: path, filters: FilterRegistry.builtIn.descriptors).get()
        return JobPlanner.plan(spec, manifestPath: path, defaultTile: 512)
    }

    @Test func aFirstRunAsksTheVersionsOnlyToRecordAndARerunToCompare() throws {
        let (root, plan, records) = try Self.plannedJob(
            photos: ["p", "q"], "job: versions\ninputs: [photos/*.jpg]\noutputs:\n  - name: copy\n    path: out/{stem}.png\n")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let asked = Mutex(0)
        func run(_ versions: String, _ plan: JobPlan) -> IncrementalRun {
            IncrementalRun(
                plan: plan, records: records, versions: { asked.withLock { $0 += 1 }; return versions }, pixelLimit: 1 << 20,
                force: false)
        }

        let first = run("blurfarm 1; libvips 8", plan)
        #expect(asked.withLock { $0 } == 0, "nothing recorded: nothing to compare")
        #expect(first.plan.outputCount == 2)
        for input in first.plan.inputs {
            first.willRead(input)
            for output in input.outputs {
                _ = FileManager.default.createFile(atPath: output.path, contents: Data("made".utf8))
                try first.recordWritten(OutputReport(input: "photos", output: output.path, variant: "copy", status: .written))
            }
        }
        #expect(asked.withLock { $0 } == 1, "asked once, for the first record")

        asked.withLock { $0 = 0 }
        // Planned again, as each run plans: a plan is checked as its files were when it was made.
        let replanned = try Self.plan(manifestAt: root + "/job/job.job").get()
        let again = run("blurfarm 1; libvips 8", replanned)
        #expect(again.plan.outputCount == 0 && again.takenOut.count == 2, "up to date")
        #expect(asked.withLock { $0 } == 1, "asked once, to compare")
        let upgraded = run("blurfarm 1; libvips 9", replanned)
        #expect(upgraded.plan.outputCount == 2, "a new libvips: every output again")
    }
}

/// Which inputs go whole to one worker: those of the job's full rounds (the last round's
/// inputs, fewer than the workers, are spread), and those whose every output is at most half
/// the input's width (a thumbnail: its decode is the work).
@Suite struct WholeImageRuleTests {
    @Test func theInputsOfTheLastRoundShorterThanTheWorkersAreSpreadAndNoOthers() {
        for workers in 1...5 {
            for inputs in 1...17 {
                // The inputs in the order they are handed out; `waiting` counts this one.
                let whole = (0..<inputs).map { JobRunner.inFullRound(waiting: inputs - $0, inputs: inputs, workers: workers) }
                let rounds = inputs / workers
                #expect(
                    whole == (0..<inputs).map { $0 < rounds * workers },
                    "\(inputs) inputs, \(workers) workers: \(whole)")
            }
        }
        // Written out: which of the inputs, in the order handed out, go whole.
        let table: [(inputs: Int, workers: Int, whole: [Bool])] = [
            (8, 4, Array(repeating: true, count: 8)),
            (7, 4, [true, true, true, true, false, false, false]),
            (3, 2, [true, true, false]),
            (2, 1, [true, true]),
            (1, 1, [true]),
            (2, 3, [false, false]),
            (4, 0, [true, true, true, true]),  // no workers: a round of one (never asked: no pool)
        ]
        for row in table {
            let whole = (0..<row.inputs).map {
                JobRunner.inFullRound(waiting: row.inputs - $0, inputs: row.inputs, workers: row.workers)
            }
            #expect(whole == row.whole, "\(row.inputs) inputs, \(row.workers) workers")
        }
        // A batch that fills its rounds goes whole to its last image; a lone image is spread.
        #expect(JobRunner.inFullRound(waiting: 1, inputs: 48, workers: 2))
        #expect(!JobRunner.inFullRound(waiting: 1, inputs: 1, workers: 2))
        #expect(!JobRunner.inFullRound(waiting: 1, inputs: 5, workers: 2) && JobRunner.inFullRound(waiting: 2, inputs: 5, workers: 2))
        #expect(!JobRunner.inFullRound(waiting: 3, inputs: 3, workers: 4), "fewer inputs than workers: all spread")
    }

    @Test func aThumbnailIsAtMostHalfTheInputsWidth() {
        let image = Rect(width: 1920, height: 1080)
        #expect(!JobRunner.shrinksByHalf(nil, image), "full size")
        #expect(JobRunner.shrinksByHalf(ResizeSpec(width: 640, height: nil), image))
        #expect(JobRunner.shrinksByHalf(ResizeSpec(width: 960, height: nil), image))
        #expect(!JobRunner.shrinksByHalf(ResizeSpec(width: 961, height: nil), image))
        #expect(!JobRunner.shrinksByHalf(ResizeSpec(width: 1600, height: nil), image), "a light reduce")
        #expect(JobRunner.shrinksByHalf(ResizeSpec(width: nil, height: 540), image))
        #expect(!JobRunner.shrinksByHalf(ResizeSpec(width: nil, height: 800), image))
    }
}

/// A recipe names an output's format as `NSString.pathExtension` reads its path, whichever
/// way ``OutputRecipe/format(of:)`` reads it; a run makes each distinct recipe once
/// (``OutputRecipe/Made``) and hands every output the one ``OutputRecipe/of(_:versions:plugins:)`` makes.
@Suite struct RecipeFormatTests {
    static let pieces = ["a", "B", ".", "/", "jpg", "PNG", "..", " ", "é", "\u{1F600}", "x.y", ""]

    @Test func theFormatIsThePathsExtensionAsFoundationReadsIt() {
        var rng = SystemRandomNumberGenerator()
        let fixed = ["a.jpg", "out/a.JPG", ".jpg", "a.", "a", "a/b", "a/", "a.b/c", "a.b/c.d", "/x/.y.z", "a..b", ".", "..", "/"]
        let random = (0..<5000).map { _ in
            (0..<Int.random(in: 0...6, using: &rng)).map { _ in Self.pieces.randomElement(using: &rng)! }.joined()
        }
        // Planned paths are normalised (no empty folder name): Foundation itself traps on
        // some paths holding `//` (`"//é"`), which no output has.
        for path in fixed + random where !path.contains("//") {
            #expect(OutputRecipe.format(of: path) == (path as NSString).pathExtension.lowercased(), "\(path)")
        }
    }

    @Test func eachOutputGetsTheRecipeMadeForItAlone() throws {
        let spec = try JobDecoder.decode(
            "job: r\ninputs: [in/*.png]\noutputs:\n  - name: a\n    path: out/{size}/{stem}.{ext}\n"
                + "    resize:\n      sizes: [10, 20]\n    formats: [jpg, webp]\n",
            file: "r.job", filters: FilterRegistry.builtIn.descriptors
        ).get()
        let made = OutputRecipe.Made(plugins: ["gaussian": "h"])
        var outputs: [PlannedOutput] = []
        for variant in spec.outputs {
            let shared = variant.eachSize().flatMap { size, largest, sized in
                sized.eachFormat().map { (size, largest, PlannedVariant($0)) }
            }
            for name in ["p.png", "q.PNG", "r.Png.png", ".png"] {
                for (size, largest, variant) in shared {
                    outputs.append(PlannedOutput(shared: variant, path: "out/\(size ?? 0)/\(name)", largestSize: largest, size: size))
                    outputs.append(PlannedOutput(shared: variant, path: "out/\(size ?? 0)/\(name)", largestSize: nil, size: size))
                }
            }
        }
        for versions in ["v1", "v2"] {
            for output in outputs + outputs.reversed() {
                #expect(made.of(output, versions: versions) == OutputRecipe.of(output, versions: versions, plugins: ["gaussian": "h"]))
            }
        }
    }
}

/// A job stopped or cancelled while its outputs are checked stops checking them between two
/// batches of inputs: the inputs not checked stay in the plan, unchecked (nothing hashed for
/// them), for the runner to report as ended (a served job of a million outputs answered its
/// cancel 8.6 s late, the time its check took).
@Suite struct StoppedCheckTests {
    @Test func theCheckStopsBetweenBatchesAndLeavesTheRestUnchecked() throws {
        let count = IncrementalRun.lookupBatch + 44
        let (root, plan, records) = try RecipeVersionsTests.plannedJob(
            photos: (0..<count).map(String.init),
            "job: stopped\ninputs: [photos/*.jpg]\noutputs:\n  - name: a\n    path: out/a/{stem}.png\n  - name: b\n    path: out/b/{stem}.png\n")
        defer { try? FileManager.default.removeItem(atPath: root) }
        // Every output made and recorded once: a checked output is up to date.
        let first = IncrementalRun(plan: plan, records: records, versions: { "v" }, pixelLimit: 1 << 30, force: false)
        for folder in ["a", "b"] { try FileManager.default.createDirectory(atPath: "\(root)/job/out/\(folder)", withIntermediateDirectories: true) }
        for input in first.plan.inputs {
            first.willRead(input)
            for output in input.outputs {
                _ = FileManager.default.createFile(atPath: output.path, contents: Data("made".utf8))
                try first.recordWritten(OutputReport(input: input.relativePath, output: output.path, variant: "a", status: .written))
            }
        }
        // Planned again, as each run plans: a plan is checked as its files were when it was made.
        let replanned = try RecipeVersionsTests.plan(manifestAt: root + "/job/job.job").get()
        for stopAt in [0, 1, Int.max] {
            let asked = Mutex(0)
            let run = IncrementalRun(
                plan: replanned, records: records, versions: { "v" }, pixelLimit: 1 << 30, force: false,
                stopped: { asked.withLock { asked in defer { asked += 1 }; return asked >= stopAt } })
            // The checked inputs' outputs are up to date; the others are still to be made,
            // unchecked, in the plan's order.
            let checked = stopAt > count ? count : min(stopAt * IncrementalRun.lookupBatch, count)
            #expect(run.takenOut.count == checked * 2, "stopped at batch \(stopAt)")
            #expect(run.plan.inputs.map(\.path) == Array(plan.inputs.map(\.path)[checked...]), "stopped at batch \(stopAt)")
        }
    }
}
