import BlurfarmState
import Synchronization

/// The files a plan writes and reads, by their absolute paths' bytes: what the orphans' rule
/// asks of each recorded output (``holds(_:)``). Each held as its path's hash and its place in
/// the plan (``IdentityIndex``, ``OutputNumbers``): 8 bytes an output and 12 an input, where
/// sets of the paths themselves, with the records read whole to be filtered, took a no-change
/// `run --prune` of 300,000 outputs to 571 MB. A path whose hash matches is compared with the
/// plan's, made absolute again (``IncrementalRun/absolute(_:using:)``), so the answers are the
/// paths' and never a hash's.
struct PlannedPaths: Sendable {
    private let plan: JobPlan
    private let folders: RealPath.Folders
    private let outputs: IdentityIndex
    private let numbers: OutputNumbers
    private let inputs: IdentityIndex

    /// The paths of `plan`'s outputs and inputs, made absolute with `folders` (the job's).
    init(_ plan: JobPlan, folders: RealPath.Folders) {
        (self.plan, self.folders) = (plan, folders)
        var outputs = IdentityIndex(capacity: plan.outputCount)
        var numbers = OutputNumbers()
        var inputs = IdentityIndex(capacity: plan.inputs.count)
        for (index, input) in plan.inputs.enumerated() {
            inputs.add(Self.identity(IncrementalRun.absolute(input.path, using: folders)))
            for output in input.outputs {
                outputs.add(Self.identity(IncrementalRun.absolute(output.path, using: folders)))
                numbers.next(input: index)
            }
        }
        outputs.seal()
        inputs.seal()
        (self.outputs, self.numbers, self.inputs) = (outputs, numbers, inputs)
    }

    private static func identity(_ absolute: String) -> RealPath.Identity { .path(RealPath.Identity.Bytes(absolute)) }

    /// Whether the plan writes the file at the absolute path `path` (an output of one of its
    /// inputs, whichever).
    func writes(_ path: String) -> Bool {
        let bytes = RealPath.Identity.Bytes(path)
        return outputs.first(of: .path(bytes)) { number in
            let place = numbers.place(of: number)
            return bytes == .init(lastAsked.outputs(of: place.input, plan: plan, folders: folders)[place.output])
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
        return inputs.first(of: .path(bytes)) { bytes == .init(IncrementalRun.absolute(plan.inputs[$0].path, using: folders)) } != nil
    }
}
