import BlurfarmState
import BlurfarmSystem
import Foundation

/// The outputs of a run as its report holds them, in plan order: those the run did something
/// to (written, failed, stopped or cancelled once started, or failed earlier) listed, those up
/// to date and those not started counted (docs/report.md: a cron run that changed one photo of
/// 100,000 listed the other 299,999 outputs, a 100 MB report; a first run of a million photos
/// stopped 16 s in listed its 2,970,000 outputs not started, 1.3 GB). Listed as values,
/// or (a job the farm runs with records, ``Spilling``) mostly on disk.
package enum ReportedOutputs: Sendable, Equatable {
    case held(listed: [OutputReport], unlisted: [OutputReport.Status: Int])
    case spilled(Spilled)

    /// Whether `output` is listed: not up to date, and started.
    static func listed(_ output: OutputReport) -> Bool { output.status != .skipped && !output.notStarted }

    /// `outputs` as a report holds them: those up to date or not started counted, the others listed.
    static func of(_ outputs: [OutputReport]) -> ReportedOutputs {
        var unlisted: [OutputReport.Status: Int] = [:]
        for output in outputs where !listed(output) { unlisted[output.status, default: 0] += 1 }
        return .held(listed: outputs.filter(listed), unlisted: unlisted)
    }

    /// The outputs listed, as values: those on disk read back as a report file gives them
    /// (``OutputReport/init(from:)``: a failure as `reported`, no sizes or created folders).
    var all: [OutputReport] {
        var outputs: [OutputReport] = []
        outputs.reserveCapacity(count)
        forEach { outputs.append($0) }
        return outputs
    }

    /// Hands `body` each output listed in order, as ``all`` gives them, one at a time.
    package func forEach(_ body: (OutputReport) -> Void) {
        switch self {
        case .held(let outputs, _): outputs.forEach(body)
        case .spilled(let spilled): spilled.forEachOutput(body)
        }
    }

    /// How many are listed.
    var count: Int {
        switch self {
        case .held(let outputs, _): outputs.count
        case .spilled(let spilled): spilled.places.count
        }
    }

    /// How many have `status`: counted, never filtered into a copy.
    func count(of status: OutputReport.Status) -> Int {
        switch self {
        case .held(let outputs, let unlisted): outputs.count { $0.status == status } + unlisted[status, default: 0]
        case .spilled(let spilled): spilled.counts[status, default: 0]
        }
    }

    /// The inputs the run decoded (``RunReport/decoded``).
    var decoded: Int {
        switch self {
        case .held(let outputs, _): Self.decodedInputs(of: outputs)
        case .spilled(let spilled): spilled.decoded
        }
    }

    /// Hands each output listed to `body` in order, as the JSON `encoder` makes of it (the
    /// report's text of it: ``ReportedText/showingBytes(in:)``); those on disk as they were written.
    func forEachEncoded(_ encoder: JSONEncoder, _ body: (Data) throws -> Void) throws {
        func encoded(_ output: OutputReport) throws -> Data { ReportedText.showingBytes(in: try encoder.encode(output)) }
        switch self {
        case .held(let outputs, _):
            for output in outputs { try body(try encoded(output)) }
        case .spilled(let spilled):
            try spilled.forEach { item in
                switch item {
                case .encoded(let piece): try body(piece)
                case .held(let output): try body(try encoded(output))
                }
            }
        }
    }

    package static func == (a: ReportedOutputs, b: ReportedOutputs) -> Bool {
        a.all == b.all && [.skipped, .stopped, .cancelled].allSatisfy { a.count(of: $0) == b.count(of: $0) }
    }

    /// How many inputs of `outputs` were decoded: those with an output written, or failed after
    /// the input was decoded (an input that is not an image, corrupt or missing was not).
    static func decodedInputs(of outputs: some Sequence<OutputReport>) -> Int {
        Set(outputs.lazy.filter { output in
            switch (output.status, output.failure) {
            case (.written, _): true
            case (.failed, .decode?), (.failed, .reported(kind: "decode", _, _)?): false
            case (.failed, _): true
            default: false
            }
        }.map { RealPath.Identity.Bytes($0.input) }).count
    }

    /// Outputs listed on disk and in memory, in order (``Spilling``).
    package final class Spilled: Sendable {
        /// The encoded outputs, each as its length (4 bytes, little-endian) then its JSON: the
        /// first `fileLength` bytes of the unnamed file `file` (none for a small report), then
        /// `tail` (those not written).
        private let file: SpillFile?
        private let fileLength: Int
        private let tail: [UInt8]
        /// For each output listed in order, where it is.
        let places: [Place]
        /// The outputs held as values, in order, in pieces.
        private let held: [ArraySlice<OutputReport>]
        /// How many outputs have each status, those up to date too.
        let counts: [OutputReport.Status: Int]
        /// The inputs decoded (``RunReport/decoded``).
        let decoded: Int

        fileprivate init(
            file: SpillFile?, fileLength: Int, tail: [UInt8], places: [Place], held: [ArraySlice<OutputReport>],
            counts: [OutputReport.Status: Int], decoded: Int
        ) {
            (self.file, self.fileLength, self.tail) = (file, fileLength, tail)
            (self.places, self.held, self.counts, self.decoded) = (places, held, counts, decoded)
        }

        /// Whether some of the outputs are in the state folder's file.
        var isOnDisk: Bool { file != nil }

        enum Item {
            case encoded(Data)
            case held(OutputReport)
        }

        /// Where an output listed is: encoded as JSON, in the file or its tail; or held as a
        /// value (failed earlier).
        enum Place: UInt8 {
            case encoded, held
        }

        /// Hands each output to `body` in order.
        /// - Throws: ``SystemCallError`` when the file cannot be read back, or what `body` throws.
        func forEach(_ body: (Item) throws -> Void) throws {
            var reader = Reader(file: file, fileLength: fileLength, tail: tail)
            var outputs = held.lazy.joined().makeIterator()
            for place in places {
                switch place {
                case .encoded: try body(.encoded(try reader.next()))
                case .held: if let output = outputs.next() { try body(.held(output)) }
                }
            }
        }

        /// Hands `body` each output in order, as a report file gives it.
        func forEachOutput(_ body: (OutputReport) -> Void) {
            // Read back as written: this fails only with the disk, and then those after are left out.
            try? forEach { item in
                switch item {
                case .encoded(let piece): body(try RunReport.decode(OutputReport.self, from: piece))
                case .held(let output): body(output)
                }
            }
        }

        /// The pieces one after another: the file's, read 64 KB at a time, then the tail's.
        private struct Reader {
            let file: SpillFile?
            let fileLength: Int
            let tail: [UInt8]
            var buffer: [UInt8] = []
            var start = 0
            var offset = 0
            var tailRead = false

            init(file: SpillFile?, fileLength: Int, tail: [UInt8]) { (self.file, self.fileLength, self.tail) = (file, fileLength, tail) }

            mutating func next() throws(SystemCallError) -> Data {
                let length = try take(4).enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
                return Data(try take(length))
            }

            private mutating func take(_ count: Int) throws(SystemCallError) -> ArraySlice<UInt8> {
                while buffer.count - start < count {
                    buffer.removeSubrange(..<start)
                    start = 0
                    guard let file, offset < fileLength else {
                        guard !tailRead else { throw SystemCallError(call: "pread", errno: EIO) }
                        buffer += tail
                        tailRead = true
                        continue
                    }
                    let chunk = try file.bytes(min(max(1 << 16, count), fileLength - offset), at: offset)
                    offset += chunk.count
                    buffer += chunk
                }
                defer { start += count }
                return buffer[start..<start + count]
            }
        }
    }

    /// A run's outputs gathered batch by batch, in plan order: each output the run tried
    /// (written, failed, cancelled, stopped) encoded at once, those failed earlier as values,
    /// those up to date or not started counted. The encoded outputs are held until they
    /// pass ``heldBytes``, then go to an unnamed file of the state folder: a first run of
    /// 100,000 inputs held what rendering told of its 300,000 outputs, 49 MB of its heap; a
    /// served job of a million outputs cancelled (or failed) held 280 MB of them; and a series
    /// of jobs, each keeping its report to the end, holds a file only for each large one.
    /// Where the file cannot be made or written, they stay in memory. Read back, an output is
    /// what a report file gives (``OutputReport/init(from:)``).
    package final class Spilling {
        /// The encoded outputs held before they go to the file: 1 MiB, about 2,000 outputs.
        package static let heldBytes = 1 << 20
        private let state: String
        private let heldBytes: Int
        /// The file, once something is in it.
        private var file: SpillFile?
        private var fileLength = 0
        /// Whether the encoded outputs may still go to the file.
        private var spilling = true
        private var places: [Spilled.Place] = []
        private var held: [ArraySlice<OutputReport>] = []
        private var counts: [OutputReport.Status: Int] = [:]
        private var decoded = 0
        /// Encoded outputs not written: written about 64 KB at a time once the file is made.
        private var buffer: [UInt8] = []
        private let encoder = RunReport.encoder()

        /// The outputs of a run whose state folder is `state`, held until their entries pass `heldBytes`.
        package init(state: String, heldBytes: Int = Spilling.heldBytes) { (self.state, self.heldBytes) = (state, heldBytes) }

        /// Adds `batch`, the outputs of a batch of whole inputs in plan order.
        package func add(_ batch: ArraySlice<OutputReport>) { add(batch.map { ($0, nil) }) }

        /// Adds `batch`, the outputs of a batch of whole inputs in plan order, each with its
        /// text where a report file gave it (as the encoder makes it alone: `slurm finish`'s,
        /// ``ReportedText/unindented(_:)``), put in as it is, where `output` gives its names and
        /// status alone; the others encoded; those up to date or not started counted.
        package func add(_ batch: [(output: OutputReport, text: Data?)]) {
            var held: [OutputReport] = []
            for (output, text) in batch {
                counts[output.status, default: 0] += 1
                if !ReportedOutputs.listed(output) { continue }
                if output.status != .failedEarlier, let piece = text ?? (try? ReportedText.showingBytes(in: encoder.encode(output))) {
                    add(piece, as: .encoded)
                } else {
                    places.append(.held)
                    held.append(output)
                }
            }
            if !held.isEmpty { self.held.append(held[...]) }
            decoded += ReportedOutputs.decodedInputs(of: batch.map(\.output))
        }

        /// Adds one output's `piece`, its length first.
        private func add(_ piece: some Collection<UInt8>, as place: Spilled.Place) {
            withUnsafeBytes(of: UInt32(piece.count).littleEndian) { buffer += $0 }
            buffer += piece
            places.append(place)
            if buffer.count >= (file == nil ? heldBytes : 1 << 16) { flush() }
        }

        /// Counts `count` outputs not started (`status`: stopped or cancelled), of a batch the
        /// run did not begin because its job had ended.
        package func addNotStarted(_ count: Int, _ status: OutputReport.Status) { counts[status, default: 0] += count }

        /// The outputs added, in order.
        package func finish() -> ReportedOutputs {
            if file != nil { flush() }
            return .spilled(Spilled(
                file: file, fileLength: fileLength, tail: buffer, places: places, held: held, counts: counts, decoded: decoded))
        }

        /// Writes what is held to the file, made the first time; what it cannot take stays held.
        private func flush() {
            guard spilling, !buffer.isEmpty else { return }
            let file = self.file ?? SpillFile(stateFolder: state)
            guard file.append(buffer) != nil else {
                spilling = false
                return
            }
            self.file = file
            fileLength += buffer.count
            buffer.removeAll(keepingCapacity: true)
        }
    }
}
