import BlurfarmState
import Foundation

extension IncrementalRun {
    /// Inputs of the plan made, recorded and reported together (``batches(of:)``): what a run
    /// holds of its outputs' reports before they go to disk (``ReportedOutputs/Spilling``),
    /// about 3,000 outputs' at the bench's three variants. Enough that the renderer's lanes
    /// rarely wait at a batch's end: the last images of one batch finish while the lanes have
    /// nothing else, for about one image's time on each lane in a batch of a thousand.
    public static let reportBatch = 1024

    /// A batch of the full plan's inputs, in plan order (``batches(of:)``).
    public struct Batch: Sendable {
        /// Its inputs with outputs to make (of ``plan``), as ``plan`` has them.
        public let work: JobPlan
        /// The inputs of ``plan`` before and after this batch's.
        public let around: (before: Int, after: Int)
        /// Its outputs the check took out (``takenOut``), as reports, in plan order.
        let skipped: ArraySlice<OutputReport>
        /// Its output paths in plan order (none for a batch without work).
        let paths: [String]
        /// The place of its first output among the full plan's.
        let firstOutput: Int
        /// The places among the full plan's of ``skipped``'s outputs.
        let skippedPlaces: [Int]

        /// Adds to `published` the places of its outputs `ran` wrote or found up to date (those
        /// of ``work``'s, any order) and of those the check found up to date: what the output
        /// map lists.
        public func publish(_ ran: [OutputReport], into published: inout PublishedOutputs) {
            for (report, place) in zip(skipped, skippedPlaces) where report.status == .skipped { published.insert(place) }
            let made = ran.filter { $0.status == .written || $0.status == .skipped }
            guard !made.isEmpty else { return }
            var places: [RealPath.Identity.Bytes: Int] = [:]
            for (offset, path) in paths.enumerated() where places[.init(path)] == nil { places[.init(path)] = firstOutput + offset }
            for report in made { if let place = places[.init(report.output)] { published.insert(place) } }
        }

        /// The batch's outputs in plan order: `ran` (those of ``work``, in any order) with those
        /// the check took out (without work, those themselves, not a copy); any the plan does
        /// not name last.
        public func merged(_ ran: [OutputReport]) -> ArraySlice<OutputReport> {
            if ran.isEmpty { return skipped }
            var byPath = Dictionary(grouping: ran.indices, by: { ran[$0].output })
            var all: [OutputReport] = []
            all.reserveCapacity(ran.count + skipped.count)
            var next = skipped.startIndex
            for path in paths {
                if let indices = byPath.removeValue(forKey: path) { all += indices.map { ran[$0] } }
                if next < skipped.endIndex, skipped[next].output == path {
                    all.append(skipped[next])
                    next += 1
                }
            }
            all += skipped[next...]
            all += ran.indices.filter { byPath[ran[$0].output] != nil }.map { ran[$0] }
            return all[...]
        }
    }

    /// The full plan in batches of `size` inputs, in plan order, each with its work and the
    /// outputs the check took out of it: a run makes, records and reports one after another,
    /// so that it holds a batch's reports, not the job's.
    public func batches(of size: Int) -> Batches { Batches(run: self, size: max(1, size)) }

    /// ``batches(of:)``.
    public struct Batches: Sequence, IteratorProtocol {
        let run: IncrementalRun
        let size: Int
        /// The next batch's first input in the full plan and in the work, and its first output
        /// in the full plan.
        var first = 0, work = 0, outputs = 0

        public mutating func next() -> Batch? {
            let (full, plan) = (run.full, run.plan)
            guard first < full.inputs.count || work < plan.inputs.count else { return nil }
            // Each input made whole once (``PlannedInputs``).
            let start = first
            let inputs = Array(full.inputs[first..<Swift.min(first + size, full.inputs.count)])
            first += inputs.count
            let last = first == full.inputs.count
            var batchWork: [PlannedInput] = []
            let workBefore = work
            for input in inputs {
                // The same input, by its name's bytes (a plan names each input once).
                guard work < plan.inputs.count else { break }
                let next = plan.inputs[work]
                if next.relativePath.utf8.elementsEqual(input.relativePath.utf8) {
                    batchWork.append(next)
                    work += 1
                }
            }
            // The last batch takes whatever is left, so that nothing of the plan is lost.
            if last {
                batchWork += plan.inputs[work...]
                work = plan.inputs.count
            }
            // Its outputs' paths, for its work's reports to be put in order: none without work.
            let paths = batchWork.isEmpty ? [] : inputs.flatMap { $0.outputs.map(\.path) }
            // Those taken out are in plan order too: the batch's, made for it.
            var reports: [OutputReport] = []
            var places: [Int] = []
            let firstOutput = outputs
            for (offset, input) in inputs.enumerated() {
                for index in input.outputs.indices {
                    if let failedEarlier = run.takenOut.failedEarlier(at: outputs + index) {
                        let taken = TakenOut(input: UInt32(start + offset), output: UInt32(index), failedEarlier: failedEarlier)
                        reports.append(run.report(of: taken, in: input))
                        places.append(outputs + index)
                    }
                }
                outputs += input.outputs.count
            }
            return Batch(
                work: JobPlan(
                    job: plan.job, manifestPath: plan.manifestPath, folder: plan.folder, inputs: PlannedInputs(batchWork),
                    tileSize: plan.tileSize, refused: plan.refused),
                around: (workBefore, plan.inputs.count - work), skipped: reports[...], paths: paths, firstOutput: firstOutput,
                skippedPlaces: places)
        }
    }
}

/// The outputs of a run's full plan that it wrote or found up to date, by their places among
/// the plan's outputs (``IncrementalRun/Batch/publish(_:into:)``): a bit an output, where the
/// set of their paths held 300,000 strings through a run with an output map.
public struct PublishedOutputs: Sendable {
    private var words: [UInt64] = []

    public init() {}

    mutating func insert(_ place: Int) {
        if place / 64 >= words.count { words += repeatElement(0, count: place / 64 + 1 - words.count) }
        words[place / 64] |= 1 << UInt64(place % 64)
    }

    func contains(_ place: Int) -> Bool {
        place / 64 < words.count && words[place / 64] & (1 << UInt64(place % 64)) != 0
    }
}
