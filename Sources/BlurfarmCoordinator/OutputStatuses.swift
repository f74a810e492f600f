import BlurfarmState

/// What `check --status` says of each output of a job, in order
/// (``IncrementalRun/status(of:records:versions:plugins:pixelLimit:)``): each planned output's
/// state, then its input's sizes not made, input after input, then the recorded outputs
/// `--prune` would remove. Held as a byte a planned output beside the plan, each status made
/// again from the plan as it is read: the statuses themselves, with their paths' strings,
/// took `check --status` of 300,000 outputs to 195 MB. Counted by state as they are made.
public struct OutputStatuses: Sequence, Sendable {
    fileprivate enum Storage: Sendable {
        case listed([OutputStatus])
        case planned(Planned)
    }

    /// The statuses of a plan's outputs, as bytes.
    struct Planned: Sendable {
        let plan: JobPlan
        /// Input after input, each planned output's state (its place in ``OutputState/allCases``),
        /// then each of its sizes not made: ``notEnlarged`` or ``hidden``.
        var states: [UInt8] = []
        /// Why each input whose outputs failed earlier failed, by its place in the plan.
        var failures: [Int: String] = [:]
        /// The recorded outputs `--prune` would remove.
        var orphans: [OutputStatus] = []

        /// A size not made whose recorded file is there: listed among the orphans instead.
        static let hidden = UInt8.max
        static let notEnlarged = code(.notEnlarged)

        static func code(_ state: OutputState) -> UInt8 { UInt8(OutputState.allCases.firstIndex(of: state)!) }
    }

    private let storage: Storage
    /// How many outputs are in each state, by the state's raw value (absent: none).
    public let counts: [String: Int]

    /// `statuses`, as listed.
    public init(_ statuses: [OutputStatus]) {
        storage = .listed(statuses)
        counts = Dictionary(statuses.map { ($0.state.rawValue, 1) }, uniquingKeysWith: +)
    }

    init(_ planned: Planned) {
        storage = .planned(planned)
        var counts: [String: Int] = [:]
        for code in planned.states where code != Planned.hidden { counts[OutputState.allCases[Int(code)].rawValue, default: 0] += 1 }
        if !planned.orphans.isEmpty { counts[OutputState.wouldBePruned.rawValue, default: 0] += planned.orphans.count }
        self.counts = counts
    }

    public func makeIterator() -> Iterator { Iterator(storage) }

    public struct Iterator: IteratorProtocol {
        private let storage: Storage
        private var listed = 0
        // Where a plan's statuses are read: the input (made whole from the plan once), its
        // output or size not made, the state's byte, the orphan.
        private var current: (index: Int, input: PlannedInput)?
        private var nextInput = 0, output = 0, skipped = 0, state = 0, orphan = 0

        fileprivate init(_ storage: Storage) { self.storage = storage }

        public mutating func next() -> OutputStatus? {
            switch storage {
            case .listed(let statuses):
                guard listed < statuses.count else { return nil }
                defer { listed += 1 }
                return statuses[listed]
            case .planned(let planned):
                return next(of: planned)
            }
        }

        private mutating func next(of planned: Planned) -> OutputStatus? {
            while true {
                if current == nil {
                    guard nextInput < planned.plan.inputs.count else { break }
                    (current, output, skipped) = ((nextInput, planned.plan.inputs[nextInput]), 0, 0)
                    nextInput += 1
                }
                let (index, input) = current!
                if output < input.outputs.count {
                    let (made, code) = (input.outputs[output], planned.states[state])
                    (output, state) = (output + 1, state + 1)
                    let outputState = OutputState.allCases[Int(code)]
                    return OutputStatus(
                        input: input.relativePath, output: made.path, variant: made.variant.name, state: outputState,
                        reason: outputState == .failedEarlier ? planned.failures[index] : nil)
                }
                while skipped < input.notEnlarged.count {
                    let (size, code) = (input.notEnlarged[skipped], planned.states[state])
                    (skipped, state) = (skipped + 1, state + 1)
                    if code == Planned.hidden { continue }
                    return OutputStatus(
                        input: input.relativePath, output: size.output, variant: size.variant, state: .notEnlarged, reason: size.reason)
                }
                current = nil
            }
            guard orphan < planned.orphans.count else { return nil }
            defer { orphan += 1 }
            return planned.orphans[orphan]
        }
    }
}

extension OutputStatuses: Encodable {
    /// As a list of the statuses (docs/json.md).
    public func encode(to encoder: any Encoder) throws {
        var list = encoder.unkeyedContainer()
        for status in self { try list.encode(status) }
    }
}
