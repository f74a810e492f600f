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
        let fd = try Syscalls.openForReading(path)
        defer { Syscalls.close(fd) }
        var scanner = ReportListScanner()
        var offset = 0
        while true {
            let chunk = try Syscalls.readBytes(fd, count: 1 << 16, at: offset)
            if chunk.isEmpty { break }
            offset += chunk.count
            try scanner.scan(chunk, output: output)
        }
        return try scanner.finish()
    }
}

/// The state of reading a list of reports byte by byte (``RunReport/read(streaming:output:)``):
/// JSON's nesting and strings are followed; the list is at depth 1, a report's members at 2,
/// its outputs' array at 3 and each output's members at 4 and deeper.
private struct ReportListScanner {
    private var depth = 0
    private var inString = false
    private var escaped = false
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

    private static let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
    private static let outputsName = Array("outputs".utf8)

    private func corrupt(_ why: String) -> DecodingError {
        .dataCorrupted(.init(codingPath: [], debugDescription: "not a list of reports: \(why)"))
    }

    mutating func scan(_ bytes: [UInt8], output: (Int, Data) throws -> Void) throws {
        for byte in bytes {
            if inElement {
                element.append(byte)
                if follow(byte), depth == 3 {
                    inElement = false
                    try output(reports.count, Data(element))
                }
                continue
            }
            if inString {
                head.append(byte)
                _ = follow(byte)
                continue
            }
            switch byte {
            case 0x20, 0x0A, 0x0D, 0x09:
                if depth >= 2, !inOutputs { head.append(byte) }
                continue
            default: break
            }
            if ended { throw corrupt("text after the list") }
            switch depth {
            case 0:
                guard byte == UInt8(ascii: "[") else { throw corrupt("it does not begin with '['") }
                depth = 1
            case 1:
                switch byte {
                case UInt8(ascii: "{"):
                    head = [byte]
                    depth = 2
                    expectingName = true
                case UInt8(ascii: ","): break
                case UInt8(ascii: "]"):
                    depth = 0
                    ended = true
                default: throw corrupt("an element of the list is not an object")
                }
            case 3 where inOutputs:
                switch byte {
                case UInt8(ascii: "{"):
                    element = [byte]
                    inElement = true
                    depth = 4
                case UInt8(ascii: ","): break
                case UInt8(ascii: "]"):
                    head.append(byte)
                    inOutputs = false
                    depth = 2
                default: throw corrupt("an output is not an object")
                }
            default:
                head.append(byte)
                if depth == 2, byte == UInt8(ascii: "["), name == Self.outputsName {
                    inOutputs = true
                    depth = 3
                } else if depth == 2, byte == UInt8(ascii: "}") {
                    depth = 1
                    reports.append(try RunReport.decode(RunReport.self, from: Data(head)))
                    head = []
                } else {
                    if depth == 2, byte == UInt8(ascii: ",") { expectingName = true }
                    if depth == 2, byte == Self.quote, expectingName {
                        (expectingName, readingName, name) = (false, true, [])
                    }
                    _ = follow(byte)
                }
            }
        }
    }

    /// Follows `byte` through strings and nesting: whether it closed an object or array.
    private mutating func follow(_ byte: UInt8) -> Bool {
        if inString {
            if escaped {
                escaped = false
            } else if byte == Self.backslash {
                escaped = true
            } else if byte == Self.quote {
                inString = false
                readingName = false
            } else if readingName {
                name.append(byte)
            }
            return false
        }
        switch byte {
        case Self.quote: inString = true
        case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
        case UInt8(ascii: "}"), UInt8(ascii: "]"):
            depth -= 1
            return true
        default: break
        }
        return false
    }

    /// The reports read, once the whole list was.
    func finish() throws -> [RunReport] {
        guard ended else { throw corrupt("the list does not end") }
        return reports
    }
}
