import BlurfarmState
import BlurfarmSystem
import Foundation

/// The outputs of a run as its report holds them, in plan order: as values, or (a job the farm
/// runs with records, ``Spilling``) mostly on disk.
package enum ReportedOutputs: Sendable, Equatable {
    case held([OutputReport])
    case spilled(Spilled)

    /// Every output, as values: those on disk read back as a report file gives them
    /// (``OutputReport/init(from:)``: a failure as `reported`, no sizes or created folders).
    var all: [OutputReport] {
        var outputs: [OutputReport] = []
        outputs.reserveCapacity(count)
        forEach { outputs.append($0) }
        return outputs
    }

    /// Hands `body` each output in order, as ``all`` gives them, one at a time.
    package func forEach(_ body: (OutputReport) -> Void) {
        switch self {
        case .held(let outputs): outputs.forEach(body)
        case .spilled(let spilled): spilled.forEachOutput(body)
        }
    }

    var count: Int {
        switch self {
        case .held(let outputs): outputs.count
        case .spilled(let spilled): spilled.places.count
        }
    }

    /// How many have `status`: counted, never filtered into a copy.
    func count(of status: OutputReport.Status) -> Int {
        switch self {
        case .held(let outputs): outputs.count { $0.status == status }
        case .spilled(let spilled): spilled.counts[status, default: 0]
        }
    }

    /// The inputs the run decoded (``RunReport/decoded``).
    var decoded: Int {
        switch self {
        case .held(let outputs): Self.decodedInputs(of: outputs)
        case .spilled(let spilled): spilled.decoded
        }
    }

    /// Hands each output to `body` in order, as the JSON `encoder` makes of it (the report's
    /// text of it: ``ReportedText/showingBytes(in:)``); those on disk as they were written.
    /// Those up to date and nothing else (most of a cron run's) are put in the encoder's text
    /// of one such output (``UpToDateText``), not encoded one by one.
    func forEachEncoded(_ encoder: JSONEncoder, _ body: (Data) throws -> Void) throws {
        let upToDate = UpToDateText(encoder)
        func encoded(_ output: OutputReport) throws -> Data {
            try upToDate?.text(of: output) ?? ReportedText.showingBytes(in: try encoder.encode(output))
        }
        switch self {
        case .held(let outputs):
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

    package static func == (a: ReportedOutputs, b: ReportedOutputs) -> Bool { a.all == b.all }

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

    /// Outputs on disk and in memory, in order (``Spilling``).
    package final class Spilled: Sendable {
        /// The encoded outputs, each as its length (4 bytes, little-endian) then its JSON, or
        /// for one up to date its names (``Place/named``): the first `fileLength` bytes of the
        /// unnamed file `file` (none for a small report), then `tail` (those not written).
        private let file: SpillFile?
        private let fileLength: Int
        private let tail: [UInt8]
        /// For each output in order, where it is.
        let places: [Place]
        /// The outputs held as values, in order, in pieces.
        private let held: [ArraySlice<OutputReport>]
        /// How many outputs have each status.
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

        /// Where an output is: encoded as JSON, or its names alone (up to date, and nothing
        /// else told of it: ``OutputReport/isUpToDateAlone``), in the file or its tail; or held
        /// as a value (failed earlier).
        enum Place: UInt8 {
            case encoded, named, held
        }

        /// An output up to date, as ``Place/named`` keeps it: its input, output and variant,
        /// each as its length (4 bytes, little-endian) then its UTF-8.
        static func names(of output: OutputReport) -> [UInt8] {
            var bytes: [UInt8] = []
            for text in [output.input, output.output, output.variant] {
                withUnsafeBytes(of: UInt32(text.utf8.count).littleEndian) { bytes += $0 }
                bytes += text.utf8
            }
            return bytes
        }

        /// The output up to date whose names are `bytes` (``names(of:)``).
        static func output(named bytes: Data) -> OutputReport {
            var texts: [String] = []
            var at = bytes.startIndex
            for _ in 0..<3 {
                let length = bytes[at..<at + 4].enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
                texts.append(String(decoding: bytes[at + 4..<at + 4 + length], as: UTF8.self))
                at += 4 + length
            }
            return OutputReport(input: texts[0], output: texts[1], variant: texts[2], status: .skipped)
        }

        /// Hands each output to `body` in order.
        /// - Throws: ``SystemCallError`` when the file cannot be read back, or what `body` throws.
        func forEach(_ body: (Item) throws -> Void) throws {
            var reader = Reader(file: file, fileLength: fileLength, tail: tail)
            var outputs = held.lazy.joined().makeIterator()
            for place in places {
                switch place {
                case .encoded: try body(.encoded(try reader.next()))
                case .named: try body(.held(Self.output(named: try reader.next())))
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
    /// (written, failed, cancelled, stopped) encoded at once, those up to date by their names
    /// (held as values, a no-change run of 300,000 outputs kept 19 MB of them to its end),
    /// those failed earlier as values. The encoded outputs are held until they
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
        /// status alone; the others encoded.
        package func add(_ batch: [(output: OutputReport, text: Data?)]) {
            var held: [OutputReport] = []
            for (output, text) in batch {
                counts[output.status, default: 0] += 1
                if output.status == .skipped, output.isUpToDateAlone {
                    add(Spilled.names(of: output), as: .named)
                } else if output.status != .skipped, output.status != .failedEarlier,
                    let piece = text ?? (try? ReportedText.showingBytes(in: encoder.encode(output)))
                {
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

/// The text a report's encoder makes of an output up to date and nothing else told of it
/// (``OutputReport/isUpToDateAlone``), made without the encoder: the encoder's own text of one
/// such output, cut at its three names, with each output's names put in, escaped as the encoder
/// escapes a string (`"` and `\` after a backslash; U+0000…U+001F as `\b`, `\t`, `\n`, `\f`,
/// `\r` or `\u00xx`; every other character as it is: `RunBatchesTests`). A name that is
/// not UTF-8 (``PathEncoding``) adds keys to the text, and is left to the encoder. Encoded one
/// by one, the 299,997 outputs up to date in the report of a run of `bench scale`'s 100k
/// library that changed one photo took 30% of the run.
struct UpToDateText {
    /// The encoder's text around the names: `pieces[0]`, a name, `pieces[1]`, …, `pieces[3]`.
    private let pieces: [[UInt8]]
    /// The name in each gap: 0 the input, 1 the output, 2 the variant.
    private let names: [Int]

    /// The text of `encoder` (the report's: ``RunReport/encoder()``); nil when it escapes `/`
    /// (as ``escape(_:into:)`` does not), or when its text of an output does not hold each
    /// name once, as it is.
    init?(_ encoder: JSONEncoder) {
        guard encoder.outputFormatting.contains(.withoutEscapingSlashes) else { return nil }
        let marks = (0..<3).map { "\u{E000}\($0)\u{E000}" }
        guard let text = try? encoder.encode(OutputReport(input: marks[0], output: marks[1], variant: marks[2], status: .skipped))
        else { return nil }
        let bytes = [UInt8](text)
        var gaps: [(range: Range<Int>, name: Int)] = []
        for (name, mark) in marks.enumerated() {
            guard let range = bytes.firstRange(of: Array(mark.utf8)), bytes[range.upperBound...].firstRange(of: Array(mark.utf8)) == nil
            else { return nil }
            gaps.append((range, name))
        }
        gaps.sort { $0.range.lowerBound < $1.range.lowerBound }
        var pieces: [[UInt8]] = []
        var start = 0
        for gap in gaps {
            pieces.append(Array(bytes[start..<gap.range.lowerBound]))
            start = gap.range.upperBound
        }
        pieces.append(Array(bytes[start...]))
        (self.pieces, names) = (pieces, gaps.map(\.name))
    }

    /// `output`'s text, as the encoder would make it; nil unless it is up to date and nothing
    /// else, its names UTF-8.
    func text(of output: OutputReport) -> Data? {
        guard output.status == .skipped, output.isUpToDateAlone else { return nil }
        var text = pieces[0]
        for (name, piece) in zip(names, pieces.dropFirst()) {
            let value = name == 0 ? output.input : name == 1 ? output.output : output.variant
            guard PathEncoding.isUTF8(value) else { return nil }
            Self.escape(value, into: &text)
            text += piece
        }
        return Data(text)
    }

    /// The digits of `\u00xx`, lowercase as the encoder writes them.
    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// `string`'s UTF-8 appended to `text` as the inside of a JSON string, escaped as the
    /// encoder escapes it.
    static func escape(_ string: String, into text: inout [UInt8]) {
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): text += [UInt8(ascii: "\\"), byte]
            case 0x08: text += Array("\\b".utf8)
            case 0x09: text += Array("\\t".utf8)
            case 0x0A: text += Array("\\n".utf8)
            case 0x0C: text += Array("\\f".utf8)
            case 0x0D: text += Array("\\r".utf8)
            case 0..<0x20: text += Array("\\u00".utf8) + [hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 15)]]
            default: text.append(byte)
            }
        }
    }
}
