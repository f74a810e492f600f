import BlurfarmSystem
import Foundation

extension RunReport {
    /// Reads the report file at `path` (a list of reports, as `run --report` writes it) 64 KB at
    /// a time: hands `output` the JSON text of each output, with the place of its report in the
    /// list, and returns each report without its outputs. The outputs are never held together:
    /// `slurm finish` reads its shards' reports so (decoded whole, the four reports of 75,000
    /// outputs each, 28 MB a file, held most of its 560 MB).
    ///
    /// A report is an object of the list; its outputs, the elements of its `outputs` array,
    /// each an object; what is around them (the report's other keys) is decoded as a report
    /// with no outputs once its object closes. An output's text is handed over as read, to be
    /// decoded by whoever takes it.
    /// - Throws: ``SystemCallError`` when the file cannot be read; `DecodingError` when it is
    ///   not a list of reports (after handing over the outputs read until then).
    package static func read(
        streaming path: String, output: (_ report: Int, _ text: Data) throws -> Void
    ) throws -> [RunReport] {
        var scanner = ReportListScanner()
        try Syscalls.forEachChunk(of: path) { chunk in try scanner.scan(chunk, output: output) }
        return try scanner.finish()
    }
}

extension ReportedText {
    /// An output's `text` as ``RunReport/read(streaming:output:)`` hands it, each line after the
    /// first indented as deep as the output lies in its file, as the report's encoder makes it
    /// alone (`{`, its members two spaces in, `}`): the spaces the file's writer added after each
    /// line break (``RunReport/writeJSON(_:list:to:)``) taken out. A line break is never in a
    /// JSON string (it is escaped there), so every one is the encoder's. Nil when the text is not
    /// so laid out (a report file indented by another tool).
    package static func unindented(_ text: Data) -> Data? {
        let (newline, space) = (UInt8(ascii: "\n"), UInt8(ascii: " "))
        let bytes = [UInt8](text)
        guard bytes.count > 2, bytes[0] == UInt8(ascii: "{"), bytes[1] == newline else { return nil }
        // The first member's spaces: the encoder's two, and what the file added.
        let added = (bytes[2...].firstIndex { $0 != space } ?? bytes.endIndex) - 2 - 2
        guard added >= 0 else { return nil }
        if added == 0 { return text }
        var alone: [UInt8] = []
        alone.reserveCapacity(bytes.count)
        var at = 0
        while at < bytes.count {
            let end = bytes[at...].firstIndex(of: newline).map { $0 + 1 } ?? bytes.endIndex
            alone += bytes[at..<end]
            at = end
            // An empty line (an empty array's) has no spaces; any other, the file's first.
            guard at < bytes.count, bytes[at] != newline else { continue }
            guard at + added <= bytes.count, bytes[at..<at + added].allSatisfy({ $0 == space }) else { return nil }
            at += added
        }
        return Data(alone)
    }
}

/// JSON's strings and nesting followed a byte at a time: how the files read as they stream
/// (a report's, ``RunReport/read(streaming:output:)``; a split's) find their elements without
/// decoding the whole file.
package struct JSONNesting {
    /// How deep the byte is: inside how many objects and arrays.
    package private(set) var depth = 0
    private var inString = false
    private var escaped = false

    package init() {}

    /// What a byte was.
    package enum Step: Equatable {
        /// A string's opening quote.
        case stringOpened
        /// Inside a string (an escape's bytes included).
        case inString
        /// A string's closing quote.
        case stringClosed
        /// `{` or `[`, and `}` or `]`: ``depth`` is now the new one.
        case opened, closed
        /// Anything else outside strings.
        case other
    }

    private static let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")

    /// Follows `byte`.
    package mutating func follow(_ byte: UInt8) -> Step {
        if inString {
            if escaped {
                escaped = false
            } else if byte == Self.backslash {
                escaped = true
            } else if byte == Self.quote {
                inString = false
                return .stringClosed
            }
            return .inString
        }
        switch byte {
        case Self.quote:
            inString = true
            return .stringOpened
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            depth += 1
            return .opened
        case UInt8(ascii: "}"), UInt8(ascii: "]"):
            depth -= 1
            return .closed
        default: return .other
        }
    }

    /// Whether `byte` is JSON's white space.
    package static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }
}

/// The state of reading a list of reports byte by byte (``RunReport/read(streaming:output:)``):
/// the list is at depth 1, a report's members at 2, its outputs' array at 3 and each output's
/// members at 4 and deeper.
private struct ReportListScanner {
    private var nesting = JSONNesting()
    /// Whether the next string at depth 2 is a member's name, and the name being read.
    private var expectingName = false
    private var readingName = false
    private var name: [UInt8] = []
    /// Whether the bytes read are the elements of the report's `outputs` (depth 3).
    private var inOutputs = false
    /// The report's text, its outputs left out (`"outputs" : []`), and the output's being read.
    private var head: [UInt8] = []
    private var element: [UInt8] = []
    private var inElement = false
    private var ended = false
    private(set) var reports: [RunReport] = []

    private static let outputsName = Array("outputs".utf8)

    private func corrupt(_ why: String) -> DecodingError {
        .dataCorrupted(.init(codingPath: [], debugDescription: "not a list of reports: \(why)"))
    }

    mutating func scan(_ bytes: [UInt8], output: (Int, Data) throws -> Void) throws {
        for byte in bytes {
            let depth = nesting.depth
            let step = nesting.follow(byte)
            if inElement {
                element.append(byte)
                if step == .closed, nesting.depth == 3 {
                    inElement = false
                    try output(reports.count, Data(element))
                }
                continue
            }
            if step == .inString || step == .stringClosed {
                head.append(byte)
                if readingName, step == .inString { name.append(byte) }
                if step == .stringClosed { readingName = false }
                continue
            }
            if JSONNesting.isSpace(byte) {
                if depth >= 2, !inOutputs { head.append(byte) }
                continue
            }
            if ended { throw corrupt("text after the list") }
            switch (depth, byte) {
            case (0, UInt8(ascii: "[")): break
            case (0, _): throw corrupt("it does not begin with '['")
            case (1, UInt8(ascii: "{")):
                head = [byte]
                expectingName = true
            case (1, UInt8(ascii: ",")): break
            case (1, UInt8(ascii: "]")): ended = true
            case (1, _): throw corrupt("an element of the list is not an object")
            case (3, UInt8(ascii: "{")) where inOutputs:
                element = [byte]
                inElement = true
            case (3, UInt8(ascii: ",")) where inOutputs: break
            case (3, UInt8(ascii: "]")) where inOutputs:
                head.append(byte)
                inOutputs = false
            case (3, _) where inOutputs: throw corrupt("an output is not an object")
            default:
                head.append(byte)
                guard depth == 2 else { continue }
                switch byte {
                case UInt8(ascii: "[") where name == Self.outputsName: inOutputs = true
                case UInt8(ascii: "}"):
                    reports.append(try RunReport.decode(RunReport.self, from: Data(head)))
                    head = []
                case UInt8(ascii: ","): expectingName = true
                case UInt8(ascii: "\"") where expectingName: (expectingName, readingName, name) = (false, true, [])
                default: break
                }
            }
        }
    }

    /// The reports read, once the whole list was.
    func finish() throws -> [RunReport] {
        guard ended else { throw corrupt("the list does not end") }
        return reports
    }
}
