import BlurfarmCore
import BlurfarmState
import BlurfarmSystem
import Synchronization

/// A plan's inputs (``JobPlan/inputs``), in plan order, each made whole (a ``PlannedInput``
/// with its outputs) when it is read. The planner's are held packed, a part of the plan in one
/// buffer of bytes (``Packed``): held as values, the 100,000 inputs of a plan and their 300,000
/// outputs took 33 MB of a no-change run's 53 MB heap peak (the output lists 20, the inputs
/// and their paths 13). A part's full chunks go, as they fill, to the plan's unnamed file
/// where it has one (``SpillFile``: the loader's, in the state folder), and are read back a
/// chunk at a time: the plan of 100,000 inputs, 9 MB packed, holds its parts' last chunks.
/// Inputs given as a list (a batch's work, a test's plan) are held as they are.
public struct PlannedInputs: RandomAccessCollection, ExpressibleByArrayLiteral, Sendable {
    private let parts: [Part]
    /// Each part's first input, then the number of inputs.
    private let starts: [Int]
    /// The outputs of every input, counted as the parts were made.
    public let outputCount: Int

    /// Inputs held together: listed, or packed.
    enum Part: Sendable {
        case listed([PlannedInput])
        case packed(Packed)

        var count: Int {
            switch self {
            case .listed(let inputs): inputs.count
            case .packed(let packed): packed.count
            }
        }

        var outputCount: Int {
            switch self {
            case .listed(let inputs): inputs.reduce(0) { $0 + $1.outputs.count }
            case .packed(let packed): packed.outputCount
            }
        }
    }

    public init(_ inputs: [PlannedInput]) { self.init(parts: [.listed(inputs)]) }

    public init(arrayLiteral inputs: PlannedInput...) { self.init(inputs) }

    /// The inputs of `pieces`, one after another (none copied).
    init(joining pieces: [PlannedInputs]) { self.init(parts: pieces.flatMap(\.parts)) }

    init(parts: [Part]) {
        self.parts = parts.filter { $0.count > 0 }
        var starts = [0]
        for part in self.parts { starts.append(starts[starts.count - 1] + part.count) }
        self.starts = starts
        outputCount = self.parts.reduce(0) { $0 + $1.outputCount }
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { starts[starts.count - 1] }

    public subscript(position: Int) -> PlannedInput {
        precondition(position >= 0 && position < endIndex, "PlannedInputs: index \(position) out of range")
        let (part, offset) = locate(position)
        switch parts[part] {
        case .listed(let inputs): return inputs[offset]
        case .packed(let packed): return packed.input(at: offset)
        }
    }

    /// The part holding input `position` (the last whose first input is not after it), and
    /// the input's place in it.
    private func locate(_ position: Int) -> (part: Int, offset: Int) {
        let part = starts.partitionPoint { $0 > position } - 1
        return (part, position - starts[part])
    }

    /// The number of the sizes not made because their input is narrower
    /// (``PlannedInput/notEnlarged``), counted as the parts were made.
    package var notEnlargedCount: Int {
        parts.reduce(0) { count, part in
            switch part {
            case .listed(let inputs): count + inputs.reduce(0) { $0 + $1.notEnlarged.count }
            case .packed(let packed): count + packed.notEnlargedCount
            }
        }
    }

    /// Each prefix of the outputs' paths (``PlannedOutput/prefix``), at least once: a packed
    /// part's from its table, without reading its inputs back (every input of a million's plan
    /// read back from its file was 0.5 s of its first run before the first output).
    func forEachOutputPrefix(_ body: (PathPrefix) -> Void) {
        for part in parts {
            switch part {
            case .listed(let inputs): for input in inputs { for output in input.outputs { body(output.prefix) } }
            case .packed(let packed): packed.outputPrefixes.forEach(body)
            }
        }
    }

    /// Each of those sizes in plan order, read back with its input (from the plan's file, where
    /// its chunk is) and let go: only the inputs that have some are read.
    package func forEachNotEnlarged(_ body: (NotEnlargedOutput) throws -> Void) rethrows {
        for part in parts {
            switch part {
            case .listed(let inputs):
                for input in inputs { try input.notEnlarged.forEach(body) }
            case .packed(let packed):
                for index in packed.notEnlargedInputs { try packed.input(at: Int(index)).notEnlarged.forEach(body) }
            }
        }
    }
}

extension PlannedInputs {
    /// Inputs planned together, in one buffer: for each input the index of its path's prefix,
    /// its relative path, what the plan saw of it, the number of its outputs, then each output
    /// as its variant's and its folder's indexes in the part's tables, its name (after the name
    /// before it), its widths and what the plan saw, then the number of its sizes not made and
    /// each as its path, variant and widths; numbers as LEB128, what was seen as 8 bytes. An output of
    /// `bench scale`'s job takes 17 bytes where its value took 67 (with its list's share), an
    /// input 35 where its value and its path's string took 128: the plan of 100,000 inputs
    /// 9 MB, where it took 33. The sizes not made were held as values beside the bytes: with a
    /// size not made an input, a no-change run at 10,000 inputs peaked 4.5 MB higher.
    final class Packed: Sendable {
        /// The bytes, in chunks of about ``Packer/chunkBytes``: each full one in the plan's
        /// file where it has one (``SpillFile``), the last held.
        let chunks: [Chunk]
        /// The plan's file, where its full chunks are.
        let spill: SpillFile?
        /// The chunk read from the file last: inputs are mostly read in order, a chunk's few
        /// hundred to few thousand one after another.
        private let lastRead = Mutex<(index: Int, bytes: [UInt8])?>(nil)
        /// Each input's first byte in its chunk (4 bytes an input, where its chunk and place as
        /// one number took 8: 4 MB of a million inputs' plan).
        let offsets: [UInt32]
        /// Each chunk's first input.
        let chunkStarts: [Int]
        let prefixes: [PathPrefix]
        /// Those of the outputs, each once.
        let outputPrefixes: [PathPrefix]
        let variants: [PlannedVariant]
        /// The inputs with sizes not made, in order, and the number of those sizes.
        let notEnlargedInputs: [UInt32]
        let notEnlargedCount: Int
        /// The number of every input's outputs.
        let outputCount: Int

        /// A chunk's bytes: held, or where the plan's file has them.
        enum Chunk: Sendable {
            case held([UInt8])
            case spilled(offset: Int, count: Int)
        }

        fileprivate init(_ packer: Packer) {
            chunks = packer.chunks + (packer.chunk.isEmpty ? [] : [.held(packer.chunk)])
            spill = packer.spill
            (offsets, chunkStarts, prefixes, variants) = (packer.offsets, packer.chunkStarts, packer.prefixes, packer.variants)
            outputPrefixes = zip(packer.prefixes, packer.ofOutputs).filter(\.1).map(\.0)
            (notEnlargedInputs, notEnlargedCount, outputCount) = (packer.notEnlargedInputs, packer.notEnlargedCount, packer.outputCount)
        }

        var count: Int { offsets.count }

        /// Input `index`, made whole.
        func input(at index: Int) -> PlannedInput {
            var reader = Reader(bytes: bytes(ofChunk: chunk(of: index)), at: Int(offsets[index]))
            let prefix = prefixes[reader.number()]
            let relativePath = reader.text()
            let seen = SeenStamp(packed: reader.word())
            let count = reader.number()
            var outputs: [PlannedOutput] = []
            outputs.reserveCapacity(count)
            var name = Array(PathName.lastName(of: relativePath).utf8)
            for _ in 0..<count {
                let variant = variants[reader.number()]
                let folder = prefixes[reader.number()]
                reader.name(after: &name)
                let (largest, size) = (reader.number() - 1, reader.number() - 1)
                outputs.append(PlannedOutput(
                    shared: variant, prefix: folder, name: String(decoding: name, as: UTF8.self), largestSize: largest < 0 ? nil : largest,
                    size: size < 0 ? nil : size, seen: SeenStamp(packed: reader.word())))
            }
            let notEnlarged = (0..<reader.number()).map { _ in
                NotEnlargedOutput(
                    input: relativePath, output: reader.text(), variant: reader.text(), width: reader.number(),
                    sourceWidth: reader.number())
            }
            return PlannedInput(prefix: prefix, relativePath: relativePath, outputs: outputs, notEnlarged: notEnlarged, seen: seen)
        }

        /// The chunk input `index` is in: the last that starts at or before it.
        private func chunk(of index: Int) -> Int { chunkStarts.partitionPoint { $0 > index } - 1 }

        /// The bytes of chunk `index`, read back from the plan's file when they are there. A
        /// file this process wrote and holds open that cannot be read back is a failed disk,
        /// as a swap device that fails: the process ends, saying so.
        private func bytes(ofChunk index: Int) -> [UInt8] {
            switch chunks[index] {
            case .held(let bytes): return bytes
            case .spilled(let offset, let count):
                return lastRead.withLock { last in
                    if let last, last.index == index { return last.bytes }
                    do throws(SystemCallError) {
                        let bytes = try spill!.bytes(count, at: offset)
                        last = (index, bytes)
                        return bytes
                    } catch {
                        fatalError("blurfarm: the plan's inputs cannot be read back from its unnamed file: \(error)")
                    }
                }
            }
        }
    }

    /// Makes a ``Packed`` part, input after input.
    struct Packer {
        /// The chunks filled, and the one being filled.
        fileprivate var chunks: [Packed.Chunk] = []
        fileprivate var chunk: [UInt8] = []
        /// The input being packed, before it goes into a chunk.
        private var bytes: [UInt8] = []
        fileprivate var offsets: [UInt32] = []
        fileprivate var chunkStarts: [Int] = []
        fileprivate var prefixes: [PathPrefix] = []
        /// Whether each of ``prefixes`` is an output's (an input's may be none of them).
        fileprivate var ofOutputs: [Bool] = []
        fileprivate var variants: [PlannedVariant] = []
        fileprivate var notEnlargedInputs: [UInt32] = []
        fileprivate var notEnlargedCount = 0
        fileprivate var outputCount = 0
        /// The tables' entries by object: each prefix and variant held once.
        private var prefixIndex: [ObjectIdentifier: Int] = [:]
        /// The name the next output's is written after (``putName(_:)``).
        private var previous: [UInt8] = []
        private var variantIndex: [ObjectIdentifier: Int] = [:]

        /// Where full chunks go: nil, or a file that cannot be made or written, held.
        fileprivate let spill: SpillFile?

        /// A packer of about `capacity` inputs, whose full chunks go to `spill`.
        init(capacity: Int, spill: SpillFile? = nil) {
            offsets.reserveCapacity(capacity)
            self.spill = spill
        }

        /// The inputs packed so far.
        var count: Int { offsets.count }

        /// Packs the input `relativePath`, read at `prefix` followed by it.
        mutating func append(
            prefix: PathPrefix, relativePath: String, outputs: [PlannedOutput], notEnlarged: [NotEnlargedOutput], seen: SeenStamp
        ) {
            if !notEnlarged.isEmpty {
                notEnlargedInputs.append(UInt32(offsets.count))
                notEnlargedCount += notEnlarged.count
            }
            bytes.removeAll(keepingCapacity: true)
            outputCount += outputs.count
            put(index(of: prefix))
            put(relativePath)
            put(seen.packed)
            put(outputs.count)
            previous.removeAll(keepingCapacity: true)
            previous += PathName.lastName(of: relativePath).utf8
            for output in outputs {
                put(index(of: output.shared))
                let prefix = index(of: output.prefix)
                ofOutputs[prefix] = true
                put(prefix)
                putName(output.name)
                put((output.largestSize ?? -1) + 1)
                put((output.size ?? -1) + 1)
                put(output.seen.packed)
            }
            put(notEnlarged.count)
            for size in notEnlarged {
                put(size.output)
                put(size.variant)
                put(size.width)
                put(size.sourceWidth)
            }
            if chunk.count + bytes.count > chunk.capacity {
                if !chunk.isEmpty {
                    chunks.append(spill?.append(chunk).map { .spilled(offset: $0, count: chunk.count) } ?? .held(chunk))
                }
                chunk = []
                chunk.reserveCapacity(Swift.max(Self.chunkBytes, bytes.count))
            }
            if chunk.isEmpty { chunkStarts.append(offsets.count) }
            offsets.append(UInt32(chunk.count))
            chunk += bytes
        }

        /// The bytes of a chunk: a few hundred to a few thousand inputs'.
        static let chunkBytes = 1 << 18

        /// The part packed.
        func packed() -> PlannedInputs { PlannedInputs(parts: [.packed(Packed(self))]) }

        private mutating func index(of prefix: PathPrefix) -> Int {
            if let index = prefixIndex[ObjectIdentifier(prefix)] { return index }
            prefixes.append(prefix)
            ofOutputs.append(false)
            prefixIndex[ObjectIdentifier(prefix)] = prefixes.count - 1
            return prefixes.count - 1
        }

        private mutating func index(of variant: PlannedVariant) -> Int {
            if let index = variantIndex[ObjectIdentifier(variant)] { return index }
            variants.append(variant)
            variantIndex[ObjectIdentifier(variant)] = variants.count - 1
            return variants.count - 1
        }

        /// An output's name after the name before it (the input's own, for its first output):
        /// the number of first bytes they share, then the rest as a text. The outputs of an
        /// input mostly share its stem: `i0000001.png`'s three took 40 bytes, now 13.
        private mutating func putName(_ name: String) {
            var shared = 0
            for (before, byte) in zip(previous, name.utf8) {
                guard before == byte else { break }
                shared += 1
            }
            put(shared)
            put(name.utf8.count - shared)
            bytes += name.utf8.dropFirst(shared)
            previous.removeSubrange(shared...)
            previous += name.utf8.dropFirst(shared)
        }

        /// A number of 0 or more, 7 bits a byte, low first.
        private mutating func put(_ number: Int) {
            var rest = UInt(number)
            while rest >= 0x80 {
                bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
                rest >>= 7
            }
            bytes.append(UInt8(rest))
        }

        /// A text: the number of its UTF-8 bytes, then them.
        private mutating func put(_ text: String) {
            put(text.utf8.count)
            bytes.append(contentsOf: text.utf8)
        }

        /// 8 bytes, low first.
        private mutating func put(_ word: UInt64) {
            for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
        }
    }

    /// Reads what a ``Packer`` put, in its order.
    private struct Reader {
        let bytes: [UInt8]
        var at: Int

        mutating func number() -> Int {
            var (number, shift) = (UInt(0), UInt(0))
            while true {
                let byte = bytes[at]
                at += 1
                number |= UInt(byte & 0x7f) << shift
                if byte < 0x80 { return Int(number) }
                shift += 7
            }
        }

        /// The name written after `name` (``Packer/putName(_:)``), in its place.
        mutating func name(after name: inout [UInt8]) {
            let shared = number()
            let count = number()
            name.removeSubrange(shared...)
            name += bytes[at..<at + count]
            at += count
        }

        mutating func text() -> String {
            let count = number()
            defer { at += count }
            return String(decoding: bytes[at..<at + count], as: UTF8.self)
        }

        mutating func word() -> UInt64 {
            var word = UInt64(0)
            for shift in stride(from: 0, to: 64, by: 8) {
                word |= UInt64(bytes[at]) << UInt64(shift)
                at += 1
            }
            return word
        }
    }
}
