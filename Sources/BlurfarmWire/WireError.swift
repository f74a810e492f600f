/// Why a stream of frames was refused. After any of these the stream is dead: the peer cannot
/// be trusted to be in step, and the coordinator kills that worker.
public enum WireError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The frame does not start with "BFW1"; `received` holds the four bytes found instead.
    case badMagic(received: [UInt8])
    /// The frame is of another protocol version than the one this peer speaks.
    case unsupportedVersion(received: UInt16, supported: UInt16)
    /// The header's message type is none of ``WireMessageType``.
    case unknownMessageType(UInt16)
    /// The frame (header, payload and checksum), `size` bytes by its header, is larger than
    /// `maximum`. Decoders refuse it from the header alone; encoders refuse to make it.
    case frameTooLarge(size: Int, maximum: Int)
    /// The checksum at the end of the frame is not the one computed over its header and payload.
    case checksumMismatch(received: UInt32, computed: UInt32)
    /// The frame is intact but its payload is not a valid `type` message.
    case malformedPayload(type: WireMessageType, problem: PayloadProblem)

    /// One line for logs and reports.
    public var description: String {
        switch self {
        case .badMagic(let bytes):
            "bad magic: expected 42 46 57 31 (\"BFW1\"), got \(bytes.map(Self.hex).joined(separator: " "))"
        case .unsupportedVersion(let received, let supported):
            "unsupported protocol version \(received): this peer speaks version \(supported)"
        case .unknownMessageType(let type):
            "unknown message type \(type)"
        case .frameTooLarge(let size, let maximum):
            "frame of \(size) bytes is larger than the maximum of \(maximum) bytes"
        case .checksumMismatch(let received, let computed):
            "checksum mismatch: frame says \(Self.hex(received)), content gives \(Self.hex(computed))"
        case .malformedPayload(let type, let problem):
            "malformed \(type) payload: \(problem)"
        }
    }

    private static func hex(_ value: some FixedWidthInteger) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(0, value.bitWidth / 4 - digits.count)) + digits
    }
}

/// What is wrong inside a payload. `field` names the field as a path, e.g.
/// `filters[1].arguments[0].value`.
public enum PayloadProblem: Error, Equatable, Sendable, CustomStringConvertible {
    /// The payload ends inside `field`.
    case truncated(field: String)
    /// The bytes of string `field` are not valid UTF-8.
    case invalidUTF8(field: String)
    /// `field` is a tagged choice (an enum, an optional, a boolean) and `tag` is none of its tags.
    case badTag(field: String, tag: UInt8)
    /// `field` decoded but its value is not allowed, for `reason`.
    case invalidValue(field: String, reason: String)
    /// `count` bytes remain after the message's last field.
    case trailingBytes(count: Int)

    /// One phrase, e.g. `field 'filters[0].name' is truncated`.
    public var description: String {
        switch self {
        case .truncated(let field): "field '\(field)' is truncated"
        case .invalidUTF8(let field): "field '\(field)' is not valid UTF-8"
        case .badTag(let field, let tag): "field '\(field)' has no tag \(tag)"
        case .invalidValue(let field, let reason): "field '\(field)' is invalid: \(reason)"
        case .trailingBytes(let count): "\(count) bytes after the last field"
        }
    }
}
