import Foundation

/// JSON as ``RunReport/json(_:)`` writes a value whose long lists are made an element at a
/// time, never held whole: the value encoded with those lists empty is the frame, and each
/// list's elements, encoded alone, are set into it at the list's indent. JSON's pretty printing
/// is the same text wherever a value stands but for its indent, and an empty list is `[`, an
/// empty line and its indented `]`: with the elements between the two lines, the text is the
/// value's encoded whole (`JSONFrameTests`, and `OutputMapTextTests` for the map). The lists
/// are the frame's empty lists under `key`, in the order the text has them.
struct JSONFrame {
    /// The frame's bytes not handed on yet.
    private var rest: ArraySlice<UInt8>
    private let marker: [UInt8]
    /// The open list's closing line (`\n`, its indent, `]`) and its elements' indent.
    private var open: (closing: [UInt8], indent: [UInt8])?
    private var elements = 0
    private let encoder = RunReport.encoder()

    /// Bytes of a framed text handed on together, about: to standard output, or to the map's
    /// unnamed file and the comparison with the map on disk.
    static let partBytes = 1 << 20

    /// The frame of `value`, whose lists under `key` that are to be filled are empty.
    /// - Throws: what the encoder throws.
    init(_ value: some Encodable, lists key: String) throws {
        rest = ArraySlice(ReportedText.showingBytes(in: try encoder.encode(value)))
        marker = Array("\"\(key)\" : [\n\n".utf8)
    }

    /// The frame up to the next list, opened: its elements follow.
    mutating func openList() -> [UInt8] {
        precondition(open == nil, "a list is open")
        guard let start = firstMarker() else { preconditionFailure("no more lists under the key") }
        let head = Array(rest[..<(start + marker.count - 1)])
        var end = start + marker.count
        while rest[end] == UInt8(ascii: " ") { end += 1 }
        precondition(rest[end] == UInt8(ascii: "]"))
        let spaces = Array(rest[(start + marker.count)..<end])
        open = ([UInt8(ascii: "\n")] + spaces + [UInt8(ascii: "]")], spaces + [0x20, 0x20])
        rest = rest[(end + 1)...]
        elements = 0
        return head
    }

    /// `element`, encoded and set in the open list.
    /// - Throws: what the encoder throws.
    mutating func element(_ element: some Encodable) throws -> [UInt8] {
        guard let indent = open?.indent else { preconditionFailure("no list is open") }
        // As an array: `Data`'s iterator, a byte at a time, was a twentieth of a map's time.
        let text = [UInt8](ReportedText.showingBytes(in: try encoder.encode(element)))
        var bytes: [UInt8] = elements == 0 ? [] : Array(",\n".utf8)
        bytes.reserveCapacity(bytes.count + text.count + text.count / 8)
        // Each line indented; an empty line (an empty list's) stays empty.
        for (index, line) in text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: "\n")) }
            if !line.isEmpty { bytes += indent }
            bytes += line
        }
        elements += 1
        return bytes
    }

    /// The open list's end.
    mutating func closeList() -> [UInt8] {
        guard let closing = open?.closing else { preconditionFailure("no list is open") }
        open = nil
        return closing
    }

    /// The rest of the frame, after the last list closed.
    mutating func finish() -> [UInt8] {
        precondition(open == nil, "a list is open")
        defer { rest = [] }
        return Array(rest)
    }

    private func firstMarker() -> Int? {
        guard rest.count >= marker.count else { return nil }
        var index = rest.startIndex
        while index <= rest.endIndex - marker.count {
            if rest[index] == marker[0], rest[index..<(index + marker.count)].elementsEqual(marker) { return index }
            index += 1
        }
        return nil
    }
}
