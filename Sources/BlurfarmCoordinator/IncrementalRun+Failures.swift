import BlurfarmState
import BlurfarmImageIO
import Foundation

extension IncrementalRun {
    /// Gathers the outputs of `outputs` (this run's, of whole inputs: a batch's) that failed
    /// because their input could not be decoded, one ``FailedInput`` per input in plan order,
    /// naming the variants it cost; and remembers the inputs that failed through their own
    /// fault (corrupt, not an image, over the pixel limit) with every output this run tried,
    /// so that later runs skip them (``OutputState/failedEarlier``) until the file changes. A
    /// failure that is not the input's (a missing or unreadable file, a worker, the disk, a
    /// plugin, a stop) is reported but not remembered. Every failed input is returned, even
    /// when remembering one could not be written (`error`: that input and those after it run
    /// again next time). The inputs of `outputs` are forgotten (``willRead(_:)``): call it once
    /// their every output has ended.
    public func recordFailures(of outputs: [OutputReport]) -> (inputs: [FailedInput], error: StateError?) {
        var failed: [FailedInput] = []
        var problem: StateError?
        for (outputs, decodeFailures, error) in FailedInput.gather(outputs) {
            let read = reading.withLock { table -> Reading? in
                for failure in decodeFailures { if let read = table[.init(failure.output)] { return read } }
                return nil
            }
            let inputFile = read?.fingerprint
            var remember = decodeFailures.count == outputs.count && error.isTheInputsFault && inputFile != nil
            if remember, problem == nil, let read, let inputFile {
                do throws(StateError) {
                    try records.add(InputFailure(
                        input: read.input, inputFile: inputFile, reason: error.message, decoder: decoder,
                        failed: Date()))
                } catch {
                    problem = error
                }
            }
            remember = remember && problem == nil
            failed.append(FailedInput(error: error, variants: decodeFailures.map(\.variant), remembered: remember))
        }
        // The inputs of `outputs` are done with: those that failed are forgotten too.
        reading.withLock { table in for output in outputs { table.removeValue(forKey: .init(output.output)) } }
        return (failed, problem)
    }
}

/// An input that could not be decoded, with the variants it cost: the one line a run prints
/// for it (`in/bad.jpg: <reason> (variants thumb, blur not written)`).
public struct FailedInput: Sendable, CustomStringConvertible {
    /// Why, naming the file.
    public let error: ImageIOError
    /// The variants not written because of it, in plan order.
    public let variants: [String]
    /// Whether the failure was remembered (later runs skip the input until it changes).
    public let remembered: Bool

    package init(error: ImageIOError, variants: [String], remembered: Bool) {
        (self.error, self.variants, self.remembered) = (error, variants, remembered)
    }

    /// The inputs of `outputs` (of one run) that could not be decoded, in plan order: for each,
    /// the outputs this run tried, those the decode failure cost, and the failure.
    package static func gather(_ outputs: [OutputReport]) -> [(outputs: [OutputReport], failures: [OutputReport], error: ImageIOError)] {
        // By the input's bytes: twin names (one string to Swift) are two inputs.
        var order: [RealPath.Identity.Bytes] = []
        var byInput: [RealPath.Identity.Bytes: [OutputReport]] = [:]
        for output in outputs where output.status != .skipped && output.status != .failedEarlier {
            let input = RealPath.Identity.Bytes(output.input)
            if byInput[input] == nil { order.append(input) }
            byInput[input, default: []].append(output)
        }
        return order.compactMap { input in
            let outputs = byInput[input] ?? []
            let failures = outputs.filter { $0.decodeError != nil }
            return failures.first?.decodeError.map { (outputs, failures, $0) }
        }
    }

    public var description: String {
        let names = variants.joined(separator: ", ")
        return "\(error) (\(variants.count == 1 ? "variant" : "variants") \(names) not written)"
    }
}
