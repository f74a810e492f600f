import BlurfarmCoordinator
import BlurfarmImageIO

/// The weights a job is split by when it is submitted: each input's pixels from its header
/// (``JobShards/weight(of:header:)``), fixed for every task by the split written then.
public struct ShardWeights {
    /// Each input's weight, by path.
    public let byPath: [String: Int]
    /// The inputs whose header cannot be read, with why: their outputs will fail.
    public let unreadable: [ImageIOError]

    /// Reads the header of every input of `plan`.
    public init(of plan: JobPlan) {
        var weights: [String: Int] = [:]
        var unreadable: [ImageIOError] = []
        for input in plan.inputs {
            let header: ImageHeader?
            do {
                header = try ImageReader.header(ofFile: input.path)
            } catch {
                unreadable.append(error)
                header = nil
            }
            weights[input.path] = JobShards.weight(of: input, header: header.map { ($0.width, $0.height) })
        }
        byPath = weights
        self.unreadable = unreadable
    }

    /// The weight of `input` (1 for an input not weighed).
    public func weight(of input: PlannedInput) -> Int { byPath[input.path] ?? 1 }
}
