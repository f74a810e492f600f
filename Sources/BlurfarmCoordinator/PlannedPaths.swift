import BlurfarmState
import Synchronization

/// The files a plan writes and reads, by their absolute paths' bytes: what the orphans' rule
/// asks of each recorded output (``holds(_:)``). Each held as its path's hash and its place in
/// the plan (``IdentityIndex``): 12 bytes an output and 8 an input, where sets of the paths
/// themselves, with the records read whole to be filtered, took a no-change `run --prune` of
/// 300,000 outputs to 571 MB. A path whose hash matches is compared with the plan's, made
/// absolute again (``IncrementalRun/absolute(_:using:)``), so the answers are the paths' and
/// never a hash's.
struct PlannedPaths: Sendable {
    private let plan: JobPlan
    private let folders: RealPath.Folders
    private let outputs: IdentityIndex<Place>
    private let inputs: IdentityIndex<UInt32>

    /// An output's place: its input's in the plan, its own in the input's.
    struct Place: Comparable, Sendable {
        let input: UInt32, output: UInt32

        static func < (a: Place, b: Place) -> Bool { (a.input, a.output) < (b.input, b.output) }
    }

    /// The paths of `plan`'s outputs and inputs, made absolute with `folders` (the job's).
    init(_ plan: JobPlan, folders: RealPath.Folders) {
        (self.plan, self.folders) = (plan, folders)
        var outputs = IdentityIndex<Place>(capacity: plan.outputCount)
        var inputs = IdentityIndex<UInt32>(capacity: plan.inputs.count)
        for (index, input) in plan.inputs.enumerated() {
            inputs.add(Self.identity(IncrementalRun.absolute(input.path, using: folders)), at: UInt32(index))
            for (place, output) in input.outputs.enumerated() {
                outputs.add(
                    Self.identity(IncrementalRun.absolute(output.path, using: folders)),
                    at: Place(input: UInt32(index), output: UInt32(place)))
            }
        }
        outputs.seal()
        inputs.seal()
        (self.outputs, self.inputs) = (outputs, inputs)
    }

    private static func identity(_ absolute: String) -> RealPath.Identity { .path(RealPath.Identity.Bytes(absolute)) }

    /// Whether the plan writes the file at the absolute path `path` (an output of one of its
    /// inputs, whichever).
    func writes(_ path: String) -> Bool {
        let bytes = RealPath.Identity.Bytes(path)
        return outputs.first(of: .path(bytes)) { place in
            bytes == .init(lastAsked.outputs(of: Int(place.input), plan: plan, folders: folders)[Int(place.output)])
        } != nil
    }

    /// The input whose outputs' absolute paths were made last, and those: the records are
    /// asked in their inputs' order, an input's outputs one after another, and each input is
    /// made whole from the plan's bytes once for them (once an output, it was half of the
    /// orphans' time).
    private let lastAsked = LastInput()

    private final class LastInput: Sendable {
        private let last = Mutex<(input: Int, outputs: [String])?>(nil)

        func outputs(of input: Int, plan: JobPlan, folders: RealPath.Folders) -> [String] {
            last.withLock { last in
                if let last, last.input == input { return last.outputs }
                let outputs = plan.inputs[input].outputs.map { IncrementalRun.absolute($0.path, using: folders) }
                last = (input, outputs)
                return outputs
            }
        }
    }

    /// Whether the plan writes the file at the absolute path `path` or reads it: a recorded
    /// output it does neither of is an orphan.
    func holds(_ path: String) -> Bool { writes(path) || reads(path) }

    /// Whether the file at the absolute path `path` is one of the plan's inputs.
    func reads(_ path: String) -> Bool {
        let bytes = RealPath.Identity.Bytes(path)
        return inputs.first(of: .path(bytes)) { bytes == .init(IncrementalRun.absolute(plan.inputs[Int($0)].path, using: folders)) } != nil
    }
}
